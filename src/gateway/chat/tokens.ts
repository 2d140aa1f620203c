/**
 * Local token counting with a real tokenizer: o200k_base (the GPT-4o / o-series / GPT-5
 * vocabulary, see tokenizer.ts). Used for quota estimates before a call, for middle-out, and for `usage` when
 * an upstream reports none. For non-OpenAI models it is an estimate (their tokenizers differ by a
 * few percent), which is what OpenRouter also did when a provider returned no counts.
 *
 * Message framing follows OpenAI's documented chat accounting: 3 tokens per message, 1 more when
 * `name` is set, 3 to prime the reply. Images count a flat IMAGE_TOKENS (one 1024x1024 high-detail
 * image at OpenAI's tile rate) because the bytes are not fetched here; audio, video and file parts
 * count a flat FILE_TOKENS each (their data, inline base64 or a URL, is never read as text), but a
 * plain-text file given inline (`data:text/plain;base64,...`, an Anthropic text document), which
 * counts its text: the model reads it as text, and a flat count made a long one nearly free.
 */
import { countTokens } from './tokenizer.js';
import type { ChatMessage, ChatRequest, ChatResult, ChatUsage, ContentPart, ReportedUsage } from './types.js';

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
 * Characters one estimate tokenizes at most (see `sampledTokens`): a 10 MB prompt (the chat
 * body limit) costs the event loop 3.6 ms as English text and 45 ms as random symbols on the
 * bench machine, where counting it whole took ~0.5 s and ~2.2 s.
 */
export const TOKENIZE_BUDGET_CHARS = 128 * 1024;
/**
 * A sample is `budget / SAMPLE_WINDOW` windows. Short windows make many strata, which keeps the
 * estimate close when the texts alternate between cheap and costly at a scale of strata (256
 * here: 40 texts of 100 K characters, English and symbols in turn, read within ~3%); each
 * window's cut words cost ~1 token more, under 1% at this length.
 */
export const SAMPLE_WINDOW = 512;

export interface SampleOptions {
  budget?: number;
  /** The exact counter (tests meter it). */
  exact?: TextCounter;
  /** Uniform in [0, 1) (tests seed it). */
  random?: () => number;
}

/**
 * The tokens of `texts` together, for estimates (usage an upstream did not report,
 * tokens-per-minute limits, embedding reservations), at a cost bounded however large the
 * request: the tokenizer runs synchronously, and a prompt of megabytes counted whole would hold
 * every other request on the instance for as long. Up to `budget` characters in all they are
 * counted exactly (every ordinary request). Beyond, the texts are taken as one run of characters
 * cut into `budget / SAMPLE_WINDOW` equal strata, one window is counted at a random place in
 * each (running on into the next texts when one ends, each text's piece counted on its own),
 * and the total is scaled by characters: a stratified random sample, unbiased whatever the texts
 * hold. Random places matter: at fixed ones, a client (who decides the prompt, and can make its
 * usage ours to estimate by disconnecting mid-stream) could put cheap text exactly there.
 */
export function sampledTokens(texts: readonly string[], o: SampleOptions = {}): number {
  let tokens = 0;
  let counted = 0;
  const stratum = countOrSample(texts, o, (_, n, chars) => {
    tokens += n;
    counted += chars;
  });
  if (stratum === null) return tokens;
  return Math.max(1, Math.round((tokens * charsOf(texts)) / counted));
}

function charsOf(texts: readonly string[]): number {
  let total = 0;
  for (const t of texts) total += t.length;
  return total;
}

/**
 * The counting behind `sampledTokens` and `measureMessages`: every text exactly when they hold
 * at most `budget` characters in all (returns null), else the stratified random sample described
 * there (returns the strata's length). `onCount(i, tokens, chars)` receives each counted piece
 * of text i.
 */
function countOrSample(
  texts: readonly string[],
  o: SampleOptions,
  onCount: (i: number, tokens: number, chars: number) => void,
): number | null {
  const budget = o.budget ?? TOKENIZE_BUDGET_CHARS;
  const exact = o.exact ?? countTextTokens;
  const total = charsOf(texts);
  if (total <= budget) {
    for (let i = 0; i < texts.length; i++) onCount(i, exact(texts[i]!), texts[i]!.length);
    return null;
  }
  const random = o.random ?? Math.random;
  const windows = Math.max(1, Math.floor(budget / SAMPLE_WINDOW));
  // total > budget >= windows * SAMPLE_WINDOW: each stratum is longer than a window, and a
  // window ends before the next stratum starts.
  const stratum = total / windows;
  let i = 0; // the text holding the window's start
  let base = 0; // where text i starts in the run
  for (let w = 0; w < windows; w++) {
    const at = Math.floor(w * stratum + random() * (stratum - SAMPLE_WINDOW));
    while (base + texts[i]!.length <= at) base += texts[i++]!.length;
    let need = SAMPLE_WINDOW;
    let from = at - base;
    for (let j = i; need > 0 && j < texts.length; j++, from = 0) {
      const t = texts[j]!;
      const piece = t.slice(from, Math.min(t.length, from + need));
      if (piece.length === 0) continue;
      onCount(j, exact(piece), piece.length);
      need -= piece.length;
    }
  }
  return stratum;
}

/** Token counts per message (see `measureMessages`). */
export interface MessageCounts {
  /** Tokens of each message, framing included. */
  tokens: number[];
  /** Of which the text parts of its content: what middle-out can cut. */
  text: number[];
  /** Counted whole (true), or estimated from a sample. */
  exact: boolean;
}

/**
 * Tokens per message at the cost of one `sampledTokens` over the whole conversation, for
 * middle-out: exact when the texts hold at most `budget` characters, else estimated from the
 * sample (`pooledEstimates`).
 */
export function measureMessages(messages: readonly ChatMessage[], o: SampleOptions = {}): MessageCounts {
  const texts: string[] = [];
  /** For each text, its slot: 2i for message i's content text parts, 2i + 1 for the rest. */
  const slotOf: number[] = [];
  const fixed = messages.map((m, i) => {
    const into =
      (slot: number): TextCounter =>
      (text) => {
        if (text.length > 0) {
          texts.push(text);
          slotOf.push(slot);
        }
        return 0;
      };
    return countMessageTokens(m, into(2 * i + 1), into(2 * i));
  });
  const { tokens: slot, exact } = sampledTokensBySlot(texts, slotOf, 2 * messages.length, o);
  return {
    tokens: fixed.map((f, i) => f + slot[2 * i]! + slot[2 * i + 1]!),
    text: fixed.map((_, i) => slot[2 * i]!),
    exact,
  };
}

/**
 * The tokens of each of `slots` slots, `texts[k]` belonging to slot `slotOf[k]`, at the cost of
 * one `sampledTokens` over all the texts: exact when they hold at most `budget` characters
 * (`exact`), else each slot estimated from the sample (`pooledEstimates`).
 */
export function sampledTokensBySlot(
  texts: readonly string[],
  slotOf: readonly number[],
  slots: number,
  o: SampleOptions = {},
): { tokens: number[]; exact: boolean } {
  const chars = new Array<number>(slots).fill(0);
  for (let k = 0; k < texts.length; k++) chars[slotOf[k]!]! += texts[k]!.length;
  const tokens = new Array<number>(slots).fill(0);
  const counted = new Array<number>(slots).fill(0);
  const stratum = countOrSample(texts, o, (k, n, c) => {
    tokens[slotOf[k]!]! += n;
    counted[slotOf[k]!]! += c;
  });
  if (stratum === null) return { tokens, exact: true };
  return { tokens: pooledEstimates(chars, tokens, counted, 2 * stratum), exact: false };
}

/** A TextCounter that only collects its texts (and counts 0), for `sampledTokens` afterwards. */
export function collectInto(texts: string[]): TextCounter {
  return (text) => {
    if (text.length > 0) texts.push(text);
    return 0;
  };
}

/** `countPromptTokens` with the texts estimated together by `sampledTokens` (the framing exact). */
export function sampledPromptTokens(
  req: Pick<ChatRequest, 'messages' | 'tools'>,
  o: SampleOptions = {},
): number {
  const texts: string[] = [];
  return countPromptTokens(req, collectInto(texts)) + sampledTokens(texts, o);
}

/**
 * `file` counts the text of a plain-text file part: a counter of its own, since middle-out cuts
 * text parts only (`measureMessages` keeps what it can cut apart from the rest).
 */
export function countPartTokens(
  part: ContentPart,
  count: TextCounter = countTextTokens,
  file: TextCounter = count,
): number {
  switch (part.type) {
    case 'text':
      return count(part.text);
    case 'refusal':
      return count(part.refusal);
    case 'image_url':
      return IMAGE_TOKENS;
    case 'file': {
      const text = plainTextOf(part.file?.file_data);
      return text === undefined ? FILE_TOKENS : file(text);
    }
    default:
      return FILE_TOKENS;
  }
}

/** An inline plain-text file's text (`data:text/plain[;charset=...];base64,...`), else undefined. */
const PLAIN_TEXT_DATA = /^data:text\/plain(?:;[^;,]*)*;base64,/i;
function plainTextOf(data: string | undefined): string | undefined {
  if (typeof data !== 'string') return undefined;
  const head = PLAIN_TEXT_DATA.exec(data.slice(0, 256));
  return head ? Buffer.from(data.slice(head[0].length), 'base64').toString('utf8') : undefined;
}

export function countContentTokens(
  content: ChatMessage['content'],
  count: TextCounter = countTextTokens,
  file: TextCounter = count,
): number {
  if (content == null) return 0;
  if (typeof content === 'string') return count(content);
  let n = 0;
  for (const part of content) n += countPartTokens(part, count, file);
  return n;
}

/** `content` counts the text parts of the message's content (default: `count`). */
export function countMessageTokens(
  msg: ChatMessage,
  count: TextCounter = countTextTokens,
  content: TextCounter = count,
): number {
  let n = PER_MESSAGE + count(msg.role) + countContentTokens(msg.content, content, count);
  if (msg.name) n += PER_NAME + count(msg.name);
  if (msg.tool_calls) {
    for (const call of msg.tool_calls) {
      n += count(call.function?.name ?? '') + count(call.function?.arguments ?? '');
    }
  }
  if (typeof msg.reasoning === 'string') n += count(msg.reasoning);
  // A message-level refusal (an assistant turn replayed) is text the upstream reads; middle-out
  // cannot cut it, so it counts with the rest, not the content.
  if (typeof msg.refusal === 'string') n += count(msg.refusal);
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
 * Per-slot token estimates from a stratified sample (`counted` characters of slot s held
 * `tokens[s]`), as one stratified estimate in two groups: a slot of `long` characters or more
 * (two strata: sure to hold a window) is estimated at its own rate; the short ones, most of which drew no window,
 * at the rate their group sampled, since a long message's rate says nothing about them (a
 * megabyte of spaces next to CJK turns). Each slot's own windows are mixed with its group's
 * rate at the weight of one window, so one window does not decide a short slot alone. The sum
 * is unbiased as the groups' ratio estimates are; a single short slot is only its group's
 * average, and middle-out measures what it keeps on its own again.
 */
function pooledEstimates(
  chars: readonly number[],
  tokens: readonly number[],
  counted: readonly number[],
  long: number,
): number[] {
  const group = { long: { tokens: 0, counted: 0 }, short: { tokens: 0, counted: 0 } };
  chars.forEach((c, s) => {
    const g = c >= long ? group.long : group.short;
    g.tokens += tokens[s]!;
    g.counted += counted[s]!;
  });
  const all = (group.long.tokens + group.short.tokens) / (group.long.counted + group.short.counted);
  const rate = (g: { tokens: number; counted: number }) => (g.counted > 0 ? g.tokens / g.counted : all);
  const longRate = rate(group.long);
  const shortRate = rate(group.short);
  return chars.map((c, s) => {
    if (c === 0) return 0;
    const prior = c >= long ? longRate : shortRate;
    return Math.max(
      1,
      Math.round((c * (tokens[s]! + prior * SAMPLE_WINDOW)) / (counted[s]! + SAMPLE_WINDOW)),
    );
  });
}

/** A prompt as middle-out needs it: its messages measured, and the tokens outside them. */
export interface PromptCounts {
  messages: MessageCounts;
  /** Tool definitions and the reply priming. */
  overhead: number;
}

/** `measureMessages` for the messages; the tool definitions by `sampledTokens`. */
export function measurePrompt(
  req: Pick<ChatRequest, 'messages' | 'tools'>,
  o: SampleOptions = {},
): PromptCounts {
  const tools = req.tools && req.tools.length > 0 ? sampledTokens([JSON.stringify(req.tools)], o) : 0;
  return { messages: measureMessages(req.messages, o), overhead: REPLY_PRIMING + tools };
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
 * the generated text, each exact up to TOKENIZE_BUDGET_CHARS and sampled beyond (`sampledTokens`).
 */
export function estimateUsage(
  req: Pick<ChatRequest, 'messages' | 'tools'>,
  completionText: string,
  o: SampleOptions = {},
): ChatUsage {
  const completion = sampledTokens([completionText], o);
  const prompt = sampledPromptTokens(req, o);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/**
 * Usage for a stream that ended before the upstream's final count, from what it did report:
 * the reported prompt counts are kept (they are the upstream's, and exact), and the completion
 * is counted from `completionText` (what was streamed) unless the reported count is final,
 * never below what the upstream already reported for it (Gemini's count so far includes
 * thoughts it may not stream).
 */
export function withCountedCompletion(
  reported: ReportedUsage,
  completionText: string,
  o: SampleOptions = {},
): ChatUsage {
  const r = reported.usage;
  const completion = reported.completionFinal
    ? r.completion_tokens
    : Math.max(r.completion_tokens, sampledTokens([completionText], o));
  return { ...r, completion_tokens: completion, total_tokens: r.prompt_tokens + completion };
}

/**
 * The text a non-streamed answer generated, for `estimateUsage`: every choice's reasoning,
 * content and tool calls (names and arguments), in the order a stream's deltas give them, so a
 * stream and a non-stream of one answer are counted alike.
 */
export function generatedText(result: ChatResult): string {
  let text = '';
  for (const c of result.choices) {
    const m = c.message;
    if (m.reasoning) text += m.reasoning;
    if (m.content) text += m.content;
    if (m.tool_calls)
      for (const t of m.tool_calls) {
        const f = t.function;
        if (!f) continue;
        if (typeof f.name === 'string') text += f.name;
        if (typeof f.arguments === 'string') text += f.arguments;
      }
  }
  return text;
}
