/**
 * Local token counting with a real tokenizer: o200k_base (the GPT-4o / o-series / GPT-5
 * vocabulary, see tokenizer.ts). Used for quota estimates before a call, for middle-out, and for `usage` when
 * an upstream reports none. For non-OpenAI models it is an estimate (their tokenizers differ by a
 * few percent), which is what OpenRouter also did when a provider returned no counts.
 *
 * Message framing follows OpenAI's documented chat accounting: 3 tokens per message, 1 more when
 * `name` is set, 3 to prime the reply. Images count a flat IMAGE_TOKENS (one 1024x1024 high-detail
 * image at OpenAI's tile rate) because the bytes are not fetched here; audio and file parts count
 * a flat FILE_TOKENS each.
 */
import { countTokens } from './tokenizer.js';
import type { ChatMessage, ChatRequest, ChatUsage, ContentPart } from './types.js';

export const IMAGE_TOKENS = 765;
export const FILE_TOKENS = 1000;
const PER_MESSAGE = 3;
const PER_NAME = 1;
const REPLY_PRIMING = 3;

export function countTextTokens(text: string): number {
  if (text.length === 0) return 0;
  return countTokens(text);
}

/** Counts the tokens of a text: the tokenizer, or a cheap bound (see promptTokenBound). */
export type TextCounter = (text: string) => number;

export function countPartTokens(part: ContentPart, count: TextCounter = countTextTokens): number {
  switch (part.type) {
    case 'text':
      return count(part.text);
    case 'image_url':
      return IMAGE_TOKENS;
    default:
      return FILE_TOKENS;
  }
}

export function countContentTokens(
  content: ChatMessage['content'],
  count: TextCounter = countTextTokens,
): number {
  if (content == null) return 0;
  if (typeof content === 'string') return count(content);
  let n = 0;
  for (const part of content) n += countPartTokens(part, count);
  return n;
}

export function countMessageTokens(msg: ChatMessage, count: TextCounter = countTextTokens): number {
  let n = PER_MESSAGE + count(msg.role) + countContentTokens(msg.content, count);
  if (msg.name) n += PER_NAME + count(msg.name);
  if (msg.tool_calls) {
    for (const call of msg.tool_calls) {
      n += count(call.function?.name ?? '') + count(call.function?.arguments ?? '');
    }
  }
  if (typeof msg.reasoning === 'string') n += count(msg.reasoning);
  return n;
}

/** Tokens of everything the model reads: messages, tool definitions and the reply priming. */
export function countPromptTokens(
  req: Pick<ChatRequest, 'messages' | 'tools'>,
  count: TextCounter = countTextTokens,
): number {
  let n = REPLY_PRIMING;
  for (const msg of req.messages) n += countMessageTokens(msg, count);
  if (req.tools && req.tools.length > 0) n += count(JSON.stringify(req.tools));
  return n;
}

/**
 * An upper bound on the prompt's tokens without the tokenizer: a byte-level BPE token is at
 * least one UTF-8 byte. Used for quota reservations, where over-holding for the duration of a
 * call is harmless and settlement charges the real count; it keeps the tokenizer (its CPU and
 * tables) off the request path.
 */
export function promptTokenBound(req: Pick<ChatRequest, 'messages' | 'tools'>): number {
  return countPromptTokens(req, (text) => Buffer.byteLength(text, 'utf8'));
}

/** Usage to report when an upstream returned no counts: prompt counted locally, completion from the generated text. */
export function estimateUsage(
  req: Pick<ChatRequest, 'messages' | 'tools'>,
  completionText: string,
): ChatUsage {
  const prompt = countPromptTokens(req);
  const completion = countTextTokens(completionText);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
