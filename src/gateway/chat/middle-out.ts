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
import { countTextTokens, type MessageCounts, measureMessages, type SampleOptions } from './tokens.js';
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

  // Cutting texts: at character positions planned from the counts, then measured.
  const kept = keptIndices();
  const original = kept.map((i) => messages[i]!);
  let out = original;
  const cut = new Map<number, number>(); // index in out -> fraction of its text kept
  while (total > limit() && measures < MAX_MEASURES) {
    const textNow = kept.map((i) => text[i]!);
    const fractions = plannedCuts(original, textNow, cut, total - limit());
    if (fractions.size === 0) break;
    for (const [i, f] of fractions) cut.set(i, f);
    out = original.map((m, i) => {
      const f = cut.get(i);
      return f === undefined ? m : { ...m, content: cutContent(m.content, f) };
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
 * Which texts to cut, and to what fraction of their original characters, to remove `excess`
 * tokens (plus a marker per newly cut text): the longest non-system texts first. `cut` holds
 * the fractions of earlier rounds; a later round aims 10% past the excess, since the earlier
 * one's idea of where the tokens lie was already short.
 */
function plannedCuts(
  messages: readonly ChatMessage[],
  text: readonly number[],
  cut: ReadonlyMap<number, number>,
  excess: number,
): Map<number, number> {
  const marker = countTextTokens(TRUNCATION_MARKER);
  let remaining = cut.size > 0 ? Math.ceil(excess * 1.1) + 1 : excess;
  const order = messages
    .map((m, i) => ({ i, n: isSystem(m) ? -1 : text[i]! }))
    .filter((x) => x.n > marker)
    .sort((a, b) => b.n - a.n);
  const out = new Map<number, number>();
  for (const { i, n } of order) {
    if (remaining <= 0) break;
    const before = cut.get(i);
    const cost = before === undefined ? marker : 0;
    const target = Math.max(0, n - remaining - cost);
    out.set(i, ((before ?? 1) * target) / n);
    remaining -= n - target - cost;
  }
  return out;
}

/**
 * Keeps `fraction` of the text's characters, half from each end, around the marker; never
 * splits a surrogate pair.
 */
function cutText(text: string, fraction: number): string {
  const keep = Math.floor(text.length * fraction);
  if (keep >= text.length) return text;
  let head = Math.ceil(keep / 2);
  let tail = text.length - (keep - head);
  if (head > 0 && isHighSurrogate(text.charCodeAt(head - 1))) head--;
  if (tail < text.length && isLowSurrogate(text.charCodeAt(tail))) tail++;
  return text.slice(0, head) + TRUNCATION_MARKER + text.slice(tail);
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** Every text part shrinks by the same fraction, so images and their captions stay in place. */
function cutContent(content: ChatMessage['content'], fraction: number): ChatMessage['content'] {
  if (typeof content === 'string') return cutText(content, fraction);
  if (!Array.isArray(content)) return content;
  return content.map((p): ContentPart => (p.type === 'text' ? { ...p, text: cutText(p.text, fraction) } : p));
}
