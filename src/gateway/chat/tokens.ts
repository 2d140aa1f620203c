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

/**
 * Characters one bounded counter tokenizes in all (see `boundedCounter`): about 7 ms of the
 * event loop for English text and 30 ms for the worst (random symbols, CJK) on the bench
 * machine, where a whole 1 MB prompt takes 55-230 ms and a 10 MB body (the chat body limit)
 * seconds.
 */
export const TOKENIZE_BUDGET_CHARS = 128 * 1024;
/** A sampled text is counted in windows this long, spread evenly over it. */
const SAMPLE_WINDOW = 2048;
/** At most this many characters of one text are sampled. */
const SAMPLE_MAX = 32 * 1024;

/**
 * A counter for estimates (usage an upstream did not report, tokens-per-minute limits,
 * embedding reservations) whose cost is bounded per request, however large the request: the
 * tokenizer runs synchronously, and a prompt of megabytes, counted whole, would hold every other
 * request on the instance for as long. Texts are counted exactly until `budget` characters have
 * been tokenized (every ordinary request stays within it); a text that does not fit what is left
 * is counted in evenly spaced windows and scaled to its length (within ~2% on uniform text);
 * once the budget is spent, further texts are scaled at the ratio of tokens to characters seen
 * so far in this request. Use one counter per request.
 */
export function boundedCounter(
  budget: number = TOKENIZE_BUDGET_CHARS,
  exact: TextCounter = countTextTokens,
): TextCounter {
  let left = budget;
  let seenChars = 0;
  let seenTokens = 0;
  return (text) => {
    const len = text.length;
    if (len === 0) return 0;
    if (len <= left) {
      const n = exact(text);
      left -= len;
      seenChars += len;
      seenTokens += n;
      return n;
    }
    const windows = Math.floor(Math.min(left, SAMPLE_MAX) / SAMPLE_WINDOW);
    if (windows > 0) {
      // len > left >= windows * SAMPLE_WINDOW: the windows fit inside the text without overlap.
      const step = windows > 1 ? (len - SAMPLE_WINDOW) / (windows - 1) : 0;
      let tokens = 0;
      for (let i = 0; i < windows; i++) {
        const from = Math.floor(i * step);
        tokens += exact(text.slice(from, from + SAMPLE_WINDOW));
      }
      const sampled = windows * SAMPLE_WINDOW;
      left -= sampled;
      seenChars += sampled;
      seenTokens += tokens;
      return Math.max(1, Math.round((tokens * len) / sampled));
    }
    left = 0;
    // Nothing seen yet only with a budget below one window: ~4 characters a token.
    const ratio = seenChars > 0 ? seenTokens / seenChars : 0.25;
    return Math.max(1, Math.round(len * ratio));
  };
}

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

/**
 * Usage to report when an upstream returned no counts: prompt counted locally, completion from
 * the generated text, both with one bounded counter (the completion first: it is billed at the
 * higher price, and it is counted exactly unless it alone exceeds the budget).
 */
export function estimateUsage(
  req: Pick<ChatRequest, 'messages' | 'tools'>,
  completionText: string,
  count: TextCounter = boundedCounter(),
): ChatUsage {
  const completion = count(completionText);
  const prompt = countPromptTokens(req, count);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
