import {
  collectInto,
  sampledPromptTokens,
  sampledTokens,
  type TextCounter,
} from '../../gateway/chat/tokens.js';
import type { ChatRequest } from '../../gateway/chat/types.js';

// Media payloads are not text: they are charged by the upstream's own counts after the call.
const SKIP = new Set(['image_url', 'image_base64', 'url', 'input_audio', 'file', 'video_url', 'input_video']);

/**
 * Tokens a request's input will cost, counted before the call for tokens-per-minute limits:
 * the chat prompt, or the text of embedding inputs. Cheap and approximate by design (a body of
 * megabytes is sampled, `sampledTokens`); the actual usage corrects it afterwards.
 */
export function estimatePromptTokens(body: unknown): number {
  if (!body || typeof body !== 'object') return 0;
  const b = body as Record<string, unknown>;
  if (Array.isArray(b.messages)) {
    try {
      return sampledPromptTokens(b as unknown as ChatRequest);
    } catch {
      const texts: string[] = [];
      return textTokens(b.messages, collectInto(texts)) + sampledTokens(texts);
    }
  }
  const texts: string[] = [];
  const count = collectInto(texts);
  return tokenIds(b.input) + textTokens(b.input, count) + textTokens(b.inputs, count) + sampledTokens(texts);
}

/**
 * Tokens an embeddings `input` sends already tokenized: a token array (`[1, 2, 3]`) is exactly
 * its length, and an array of them the sum of theirs. Anything else holds no token ids.
 */
function tokenIds(input: unknown): number {
  if (!Array.isArray(input)) return 0;
  let n = 0;
  for (const x of input) {
    if (typeof x === 'number') n++;
    else if (Array.isArray(x)) for (const t of x) if (typeof t === 'number') n++;
  }
  return n;
}

function textTokens(v: unknown, count: TextCounter, depth = 0): number {
  if (typeof v === 'string') return count(v);
  if (depth > 6 || !v || typeof v !== 'object') return 0;
  let n = 0;
  if (Array.isArray(v)) for (const x of v) n += textTokens(x, count, depth + 1);
  else for (const [k, x] of Object.entries(v)) if (!SKIP.has(k)) n += textTokens(x, count, depth + 1);
  return n;
}
