/**
 * The `middle-out` transform (OpenRouter semantics): when a prompt does not fit the model, drop
 * messages from the middle of the conversation, where models attend least, until it fits.
 *
 * - System and developer messages are always kept, as are the first and the last non-system turns.
 * - An assistant message with `tool_calls` and the `tool` messages answering it are one unit, so a
 *   removal never leaves a tool result without its call (every provider rejects that).
 * - A message-count limit (e.g. Anthropic's 1000 messages) keeps half the turns from the start and
 *   half from the end.
 * - When removing whole turns is not enough, the longest kept texts are cut in their middle.
 *
 * Tokens are counted with `tokens.ts` (o200k), so the fit is an estimate for non-OpenAI models;
 * pass `reserveTokens` (the completion budget) and leave some headroom in `contextLength`.
 *
 * Cost: the tokenizer is synchronous, so middle-out never counts a prompt whole. It measures with
 * `measureMessages` (exact up to TOKENIZE_BUDGET_CHARS of text, a random sample beyond), removes
 * by those counts, and measures again what it keeps, until a measurement says it fits; cuts are
 * made at character positions from the counts and measured the same way. Each measurement costs
 * at most one budget of tokenizing, and there are at most MAX_MEASURES, however large the
 * prompt. A prompt whose kept text is within the budget is checked exactly.
 */
import { decode, encode } from './tokenizer.js';
import {
  countTextTokens,
  type MessageCounts,
  measureMessages,
  type SampleOptions,
  TOKENIZE_BUDGET_CHARS,
} from './tokens.js';
import type { ChatMessage, ContentPart } from './types.js';

export interface MiddleOutOptions {
  /** The model's context window in tokens. */
  contextLength: number;
  /** Tokens to keep free for the completion (usually the request's max_tokens). */
  reserveTokens?: number;
  /** Extra prompt tokens outside the messages (tool definitions, priming). */
  overheadTokens?: number;
  /** Upstream limit on the number of messages. */
  maxMessages?: number;
  /** How measurements count (tests meter and seed them). */
  sample?: SampleOptions;
}

export interface MiddleOutResult {
  messages: ChatMessage[];
  /** Messages removed. */
  removed: number;
  /** Messages whose text was cut. */
  truncated: number;
  /** Prompt tokens of the returned messages plus overhead, as last measured. */
  promptTokens: number;
  /** False when even the system prompt and the kept turns exceed the budget. */
  fits: boolean;
}

export const TRUNCATION_MARKER = '\n[...]\n';

/** Measurements after the first: of what removal kept, then of each round of cuts. */
const MAX_MEASURES = 4;
/** How far under the budget a sampled (not exact) measurement must come. */
const SAMPLED_MARGIN = 0.02;

interface Unit {
  /** Indices into the messages. */
  members: number[];
}

const isSystem = (m: ChatMessage) => m.role === 'system' || m.role === 'developer';
const sum = (ns: readonly number[]) => ns.reduce((a, b) => a + b, 0);

function toUnits(messages: readonly ChatMessage[]): Unit[] {
  const units: Unit[] = [];
  messages.forEach((m, i) => {
    const prev = units[units.length - 1];
    const prevHead = prev && messages[prev.members[0]!];
    if (m.role === 'tool' && prevHead?.role === 'assistant' && prevHead.tool_calls?.length) {
      prev!.members.push(i);
    } else {
      units.push({ members: [i] });
    }
  });
  return units;
}

/**
 * `counts` are the messages' measurements when the caller has them (a plan measures once for
 * all its candidates); otherwise they are measured here.
 */
export function applyMiddleOut(
  messages: ChatMessage[],
  opts: MiddleOutOptions,
  counts: MessageCounts = measureMessages(messages, opts.sample),
): MiddleOutResult {
  const budget = opts.contextLength - (opts.reserveTokens ?? 0) - (opts.overheadTokens ?? 0);
  // Latest counts per message; `exact` says whether the last measurement was.
  const tokens = counts.tokens.slice();
  const text = counts.text.slice();
  let exact = counts.exact;
  // A sampled measurement is within a few percent: aim that much under the budget.
  const limit = () => (exact ? budget : Math.floor(budget * (1 - SAMPLED_MARGIN)));

  // Positions matter for system messages in the middle, so units keep their order and a flag.
  const units = toUnits(messages);
  const keep = units.map((u) => isSystem(messages[u.members[0]!]!));
  const turnIdx = units.map((_, i) => i).filter((i) => !keep[i]);
  if (turnIdx.length > 0) {
    keep[turnIdx[0]!] = true;
    keep[turnIdx[turnIdx.length - 1]!] = true;
  }
  const alive = units.map(() => true);
  const unitTokens = (u: Unit) => sum(u.members.map((m) => tokens[m]!));
  let total = sum(tokens);
  let count = messages.length;
  let removed = 0;

  // The removable turns, in order. Taking the middle one of those left each time keeps the
  // removed ones one run, cand[lo, hi), whose next neighbour to go is the middle of the rest:
  // O(1) a removal (a prompt may hold a hundred thousand short messages).
  const cand = turnIdx.filter((i) => !keep[i]);
  let lo = Math.floor(cand.length / 2);
  let hi = lo;
  const removeMiddle = (): boolean => {
    const left = cand.length - (hi - lo);
    if (left === 0) return false;
    const k = Math.floor(left / 2);
    const i = cand[k < lo ? k : k + hi - lo]!;
    if (k < lo) lo = k;
    else hi = k + hi - lo + 1;
    alive[i] = false;
    total -= unitTokens(units[i]!);
    count -= units[i]!.members.length;
    removed += units[i]!.members.length;
    return true;
  };
  const keptIndices = () => units.filter((_, i) => alive[i]).flatMap((u) => u.members);
  let measures = 0;
  const measure = (indices: readonly number[], msgs: readonly ChatMessage[]) => {
    const m = measureMessages(msgs, opts.sample);
    measures++;
    exact = m.exact;
    indices.forEach((i, k) => {
      tokens[i] = m.tokens[k]!;
      text[i] = m.text[k]!;
    });
    total = sum(indices.map((i) => tokens[i]!));
  };

  if (opts.maxMessages !== undefined) {
    while (count > opts.maxMessages && removeMiddle()) {}
  }
  // Removals go by the counts at hand; when those were estimates, what is kept is measured on
  // its own (exactly once it is small) and removal goes on if it still does not fit.
  for (;;) {
    const before = removed;
    while (total > limit() && removeMiddle()) {}
    // Nothing removed in this pass: the counts at hand are of what is kept.
    if (exact || measures >= MAX_MEASURES || removed === before) break;
    const kept = keptIndices();
    measure(
      kept,
      kept.map((i) => messages[i]!),
    );
    if (total <= limit()) break;
  }

  // Cutting texts: to token targets planned from the counts, then measured.
  const kept = keptIndices();
  const original = kept.map((i) => messages[i]!);
  const originalText = kept.map((i) => text[i]!);
  let out = original;
  const cut = new Map<number, number>(); // index in out -> tokens of its text to keep
  while (total > limit() && measures < MAX_MEASURES) {
    const targets = plannedCuts(
      original,
      kept.map((i) => text[i]!),
      cut,
      total - limit(),
    );
    if (targets.size === 0) break;
    let exactChars = TOKENIZE_BUDGET_CHARS; // what this round may encode for token-exact cuts
    for (const [i, target] of targets) cut.set(i, target);
    out = original.map((m, i) => {
      const target = cut.get(i);
      if (target === undefined) return m;
      const r = cutContent(m.content, target, originalText[i]!, exactChars);
      exactChars -= r.encoded;
      return { ...m, content: r.content };
    });
    measure(kept, out);
  }
  return {
    messages: out,
    removed,
    truncated: cut.size,
    promptTokens: total + (opts.overheadTokens ?? 0),
    fits: total <= budget,
  };
}

/**
 * How many tokens of each text to keep, to remove `excess` tokens (plus a marker per newly cut
 * text): the longest non-system texts first. `cut` holds the targets of earlier rounds, and
 * `text` the tokens measured since (marker included): a text that came out denser than planned
 * gets a target scaled by what it should have measured over what it did, and a later round
 * aims 2% past the excess.
 */
function plannedCuts(
  messages: readonly ChatMessage[],
  text: readonly number[],
  cut: ReadonlyMap<number, number>,
  excess: number,
): Map<number, number> {
  const marker = countTextTokens(TRUNCATION_MARKER);
  let remaining = cut.size > 0 ? Math.ceil(excess * 1.02) + 1 : excess;
  const order = messages
    .map((m, i) => ({ i, n: isSystem(m) ? -1 : text[i]! }))
    .filter((x) => x.n > marker)
    .sort((a, b) => b.n - a.n);
  const out = new Map<number, number>();
  for (const { i, n } of order) {
    if (remaining <= 0) break;
    const before = cut.get(i);
    if (before === undefined) {
      const target = Math.max(0, n - remaining - marker);
      out.set(i, target);
      remaining -= n - target - marker;
    } else {
      const now = Math.max(1, n - marker);
      const want = Math.max(0, now - remaining);
      out.set(i, Math.floor((before * want) / now));
      remaining -= now - want;
    }
  }
  return out;
}

/** Characters a token-exact cut encodes at most on each side; beyond, cuts are proportional. */
const EXACT_SIDE_CHARS = 32 * 1024;

/**
 * Keeps `target` tokens of the content's text, half from its start and half from its end, and
 * puts one marker between. The text parts count as one text: parts wholly inside the cut go,
 * other parts (images) stay in place. Each side is found token-exact by encoding a piece of the
 * text a little longer than the side should be (its length guessed from `tokens`, the text's
 * count), while the pieces fit EXACT_SIDE_CHARS and `exactChars`; otherwise in proportion to
 * the characters. `encoded` is what the tokenizer was given.
 */
function cutContent(
  content: ChatMessage['content'],
  target: number,
  tokens: number,
  exactChars: number,
): { content: ChatMessage['content']; encoded: number } {
  if (content == null) return { content, encoded: 0 };
  const whole = typeof content === 'string' ? content : textOf(content);
  const perToken = whole.length / Math.max(1, tokens);
  const headTokens = Math.ceil(target / 2);
  const head = sideChars(whole, headTokens, perToken, exactChars, 'head');
  const tail = sideChars(whole, target - headTokens, perToken, exactChars - head.encoded, 'tail');
  const encoded = head.encoded + tail.encoded;
  if (head.chars + tail.chars >= whole.length) return { content, encoded };
  return { content: cutAt(content, head.chars, whole.length - tail.chars), encoded };
}

function textOf(parts: readonly ContentPart[]): string {
  let s = '';
  for (const p of parts) if (p.type === 'text') s += p.text;
  return s;
}

/** Characters from one end of `text` that hold `n` tokens (see cutContent). */
function sideChars(
  text: string,
  n: number,
  perToken: number,
  exactChars: number,
  side: 'head' | 'tail',
): { chars: number; encoded: number } {
  if (n <= 0) return { chars: 0, encoded: 0 };
  const cap = Math.min(text.length, EXACT_SIDE_CHARS);
  let encoded = 0;
  for (let c = Math.min(cap, Math.ceil(n * perToken * 1.25) + 32); encoded + c <= exactChars; ) {
    const piece = side === 'head' ? text.slice(0, c) : text.slice(text.length - c);
    const ids = encode(piece);
    encoded += c;
    // One token more than needed: the piece's last (or first) token may be a cut word.
    if (ids.length > n + 1 || c === text.length) {
      if (ids.length <= n) return { chars: c, encoded };
      const kept = decode(side === 'head' ? ids.slice(0, n) : ids.slice(ids.length - n));
      return { chars: withoutPartialChar(kept, side), encoded };
    }
    if (c === cap) break;
    c = Math.min(cap, c * 2);
  }
  return { chars: Math.min(text.length, Math.round(n * perToken)), encoded };
}

/**
 * The length of a decoded side without a character its tokens held only part of (decoded as
 * U+FFFD at the cut end).
 */
function withoutPartialChar(s: string, side: 'head' | 'tail'): number {
  let n = s.length;
  if (side === 'head') while (n > 0 && s.charCodeAt(n - 1) === 0xfffd) n--;
  else for (let i = 0; i < s.length && s.charCodeAt(i) === 0xfffd; i++) n--;
  return n;
}

/**
 * The content with the characters of its text from `from` to `to` (counted over its text parts
 * in order) replaced by the marker; never splits a surrogate pair.
 */
function cutAt(content: string | ContentPart[], from: number, to: number): string | ContentPart[] {
  if (typeof content === 'string') {
    const [a, b] = safeCut(content, from, to);
    return content.slice(0, a) + TRUNCATION_MARKER + content.slice(b);
  }
  // The one part holding `to` gets the marker (after what it keeps before the cut, if anything).
  const out: ContentPart[] = [];
  let pos = 0;
  for (const p of content) {
    if (p.type !== 'text') {
      out.push(p);
      continue;
    }
    const start = pos;
    pos += p.text.length;
    if (pos <= from || start >= to) {
      out.push(p); // wholly kept
      continue;
    }
    const [a, b] = safeCut(p.text, Math.max(0, from - start), Math.min(p.text.length, to - start));
    if (pos >= to) out.push({ ...p, text: p.text.slice(0, a) + TRUNCATION_MARKER + p.text.slice(b) });
    else if (a > 0) out.push({ ...p, text: p.text.slice(0, a) }); // the cut starts here
  }
  return out;
}

/** `from` and `to` moved outwards (the cut made smaller) so neither splits a surrogate pair. */
function safeCut(s: string, from: number, to: number): [number, number] {
  let a = from;
  let b = to;
  if (a > 0 && a < s.length && isHighSurrogate(s.charCodeAt(a - 1))) a--;
  if (b > 0 && b < s.length && isLowSurrogate(s.charCodeAt(b))) b++;
  return [a, Math.max(a, b)];
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;
