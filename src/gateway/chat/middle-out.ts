/**
 * The `middle-out` transform (OpenRouter semantics): when a prompt does not fit the model, drop
 * messages from the middle of the conversation, where models attend least, until it fits.
 *
 * - System and developer messages are always kept, as are the first and the last non-system turns.
 * - An assistant message with `tool_calls` and the `tool` messages answering it are one unit, so a
 *   removal never leaves a tool result without its call (every provider rejects that).
 * - A message-count limit (e.g. Anthropic's 1000 messages) keeps half the turns from the start and
 *   half from the end.
 * - When removing whole turns is not enough, the longest kept text is cut in its middle, token-exact.
 *
 * Tokens are counted with `tokens.ts` (o200k), so the fit is an estimate for non-OpenAI models;
 * pass `reserveTokens` (the completion budget) and leave some headroom in `contextLength`.
 */
import { decode, encode } from './tokenizer.js';
import { countMessageTokens, countTextTokens } from './tokens.js';
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
}

export interface MiddleOutResult {
  messages: ChatMessage[];
  /** Messages removed. */
  removed: number;
  /** Messages whose text was cut. */
  truncated: number;
  /** Estimated prompt tokens of the returned messages plus overhead. */
  promptTokens: number;
  /** False when even the system prompt and the kept turns exceed the budget. */
  fits: boolean;
}

export const TRUNCATION_MARKER = '\n[...]\n';

interface Unit {
  messages: ChatMessage[];
  tokens: number;
}

const isSystem = (m: ChatMessage) => m.role === 'system' || m.role === 'developer';

function toUnits(messages: ChatMessage[]): Unit[] {
  const units: Unit[] = [];
  for (const m of messages) {
    const prev = units[units.length - 1];
    const prevHead = prev?.messages[0];
    if (m.role === 'tool' && prevHead?.role === 'assistant' && prevHead.tool_calls?.length) {
      prev.messages.push(m);
      prev.tokens += countMessageTokens(m);
    } else {
      units.push({ messages: [m], tokens: countMessageTokens(m) });
    }
  }
  return units;
}

export function applyMiddleOut(messages: ChatMessage[], opts: MiddleOutOptions): MiddleOutResult {
  const budget = opts.contextLength - (opts.reserveTokens ?? 0) - (opts.overheadTokens ?? 0);
  // Positions matter for system messages in the middle, so units keep their order and a flag.
  const units = toUnits(messages);
  const keep = units.map((u) => isSystem(u.messages[0]));
  const turnIdx = units.map((_, i) => i).filter((i) => !keep[i]);
  if (turnIdx.length > 0) {
    keep[turnIdx[0]] = true;
    keep[turnIdx[turnIdx.length - 1]] = true;
  }
  const alive = units.map(() => true);
  let total = units.reduce((n, u) => n + u.tokens, 0);
  let count = messages.length;
  let removed = 0;

  const removable = () => turnIdx.filter((i) => alive[i] && !keep[i]);
  const removeMiddle = (): boolean => {
    const cand = removable();
    if (cand.length === 0) return false;
    const i = cand[Math.floor(cand.length / 2)];
    alive[i] = false;
    total -= units[i].tokens;
    count -= units[i].messages.length;
    removed += units[i].messages.length;
    return true;
  };

  if (opts.maxMessages !== undefined) {
    while (count > opts.maxMessages && removeMiddle()) {}
  }
  while (total > budget && removeMiddle()) {}

  let out: ChatMessage[] = [];
  units.forEach((u, i) => {
    if (alive[i]) out.push(...u.messages);
  });
  let truncated = 0;
  if (total > budget) {
    const cut = truncateLongest(out, total - budget);
    out = cut.messages;
    truncated = cut.truncated;
    total = out.reduce((n, m) => n + countMessageTokens(m), 0);
  }
  return {
    messages: out,
    removed,
    truncated,
    promptTokens: total + (opts.overheadTokens ?? 0),
    fits: total <= budget,
  };
}

/** Cuts `excess` tokens (plus the marker) from the middle of the longest non-system texts. */
function truncateLongest(
  messages: ChatMessage[],
  excess: number,
): { messages: ChatMessage[]; truncated: number } {
  const out = messages.slice();
  const markerTokens = countTextTokens(TRUNCATION_MARKER);
  let remaining = excess;
  let truncated = 0;
  const order = out
    .map((m, i) => ({ i, n: isSystem(m) ? -1 : textTokens(m) }))
    .filter((x) => x.n > markerTokens)
    .sort((a, b) => b.n - a.n);
  for (const { i, n } of order) {
    if (remaining <= 0) break;
    const target = Math.max(0, n - remaining - markerTokens);
    const before = countMessageTokens(out[i]);
    out[i] = { ...out[i], content: cutContent(out[i].content, target) };
    remaining -= before - countMessageTokens(out[i]);
    truncated++;
  }
  return { messages: out, truncated };
}

function textTokens(m: ChatMessage): number {
  if (typeof m.content === 'string') return countTextTokens(m.content);
  if (!Array.isArray(m.content)) return 0;
  return m.content.reduce((n, p) => n + (p.type === 'text' ? countTextTokens(p.text) : 0), 0);
}

function cutText(text: string, keepTokens: number): string {
  const ids = encode(text);
  if (ids.length <= keepTokens) return text;
  const head = Math.ceil(keepTokens / 2);
  const tail = keepTokens - head;
  return (
    decode(ids.slice(0, head)) + TRUNCATION_MARKER + (tail > 0 ? decode(ids.slice(ids.length - tail)) : '')
  );
}

function cutContent(content: ChatMessage['content'], keepTokens: number): ChatMessage['content'] {
  if (typeof content === 'string') return cutText(content, keepTokens);
  if (!Array.isArray(content)) return content;
  // Shrink every text part proportionally so images and their captions stay in place.
  const total = content.reduce((n, p) => n + (p.type === 'text' ? countTextTokens(p.text) : 0), 0);
  return content.map((p): ContentPart => {
    if (p.type !== 'text' || total === 0) return p;
    const share = Math.floor((countTextTokens(p.text) / total) * keepTokens);
    return { ...p, text: cutText(p.text, share) };
  });
}
