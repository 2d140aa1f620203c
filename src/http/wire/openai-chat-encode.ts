import type { ChatChoice, ChatDeltaChoice, ChatResult, ChatUsage } from '../../gateway/chat/types.js';
import { defaultType, type GatewayError } from '../../gateway/errors.js';
import { KeyTree } from '../../gateway/key-tree.js';

/**
 * OpenAI/OpenRouter response shapes, written to satisfy the strictest official client
 * (@openrouter/sdk, reference/openrouter.md §13): integer `created`, `system_fingerprint`
 * present on completions (null allowed) but never null on chunks, `finish_reason` always
 * present, array fields absent rather than null, usage detail objects with their sub-fields.
 * Every choice also carries OpenRouter's `native_finish_reason` (the upstream's raw stop value,
 * null on a chunk that does not finish): the strict SDK strips it, the openai SDK keeps it.
 */
export interface Envelope {
  id: string;
  created: number;
  model: string;
  /** The upstream that served; left out of a chunk when undefined (a stream no upstream was tried for). */
  provider: string | undefined;
}

export function encodeUsage(u: ChatUsage, include: boolean, costUsd: number): Record<string, unknown> {
  const out: Record<string, unknown> = {
    prompt_tokens: int(u.prompt_tokens),
    completion_tokens: int(u.completion_tokens),
    total_tokens: int(u.total_tokens ?? int(u.prompt_tokens) + int(u.completion_tokens)),
  };
  if (include) {
    const pd = u.prompt_tokens_details ?? undefined;
    const prompt: Record<string, number> = { cached_tokens: int(pd?.cached_tokens) };
    if (pd?.cache_write_tokens) prompt.cache_write_tokens = int(pd.cache_write_tokens);
    out.prompt_tokens_details = prompt;
    out.completion_tokens_details = {
      reasoning_tokens: int(u.completion_tokens_details?.reasoning_tokens ?? 0),
    };
    out.cost = costUsd;
    out.is_byok = false;
  } else {
    const pd = u.prompt_tokens_details;
    if (pd && typeof pd.cached_tokens === 'number')
      out.prompt_tokens_details = { cached_tokens: int(pd.cached_tokens) };
    const cd = u.completion_tokens_details;
    if (cd && typeof cd.reasoning_tokens === 'number')
      out.completion_tokens_details = { reasoning_tokens: int(cd.reasoning_tokens) };
  }
  return out;
}

/**
 * The non-streamed answer as JSON text. The envelope's constant part (model and provider,
 * escaped) is made once per pair, and choices that already have the strict shape go out as
 * the upstream's parsed objects, uncopied: most answers are one such choice.
 */
export function encodeCompletion(
  env: Envelope,
  result: ChatResult,
  usage: Record<string, unknown> | undefined,
): string {
  const served = servedParts.take(servedPart, env.model, env.provider, true);
  const fingerprint =
    typeof result.system_fingerprint === 'string' ? JSON.stringify(result.system_fingerprint) : 'null';
  const choices = result.choices;
  let clean = true;
  for (let i = 0; i < choices.length; i++) if (!isClean(choices[i]!)) clean = false;
  return (
    `{"id":${JSON.stringify(env.id)},"object":"chat.completion","created":${env.created}${served}` +
    `,"system_fingerprint":${fingerprint},"choices":${JSON.stringify(clean ? choices : choices.map(cleanChoice))}` +
    `${usage ? `,"usage":${JSON.stringify(usage)}` : ''}}`
  );
}
const servedParts = new KeyTree<string>(10_000);
const servedPart = (model: string, provider: string | undefined) =>
  `,"model":${JSON.stringify(model)}${providerPart(provider)}`;
const providerPart = (provider: string | undefined) =>
  provider === undefined ? '' : `,"provider":${JSON.stringify(provider)}`;

/** Whether a choice already has what cleanChoice would give it (so it can go out as is). */
function isClean(c: ChatChoice): boolean {
  const m = c.message;
  return (
    typeof c.index === 'number' &&
    c.finish_reason !== undefined &&
    c.native_finish_reason !== undefined &&
    m.role === 'assistant' &&
    m.content !== undefined &&
    m.tool_calls !== null &&
    m.reasoning_details !== null
  );
}

function cleanChoice(c: ChatChoice): ChatChoice {
  const m = c.message;
  const message: Record<string, unknown> = { ...m, role: 'assistant', content: m.content ?? null };
  for (const k of ['tool_calls', 'reasoning_details'] as const) if (message[k] == null) delete message[k];
  return {
    ...c,
    index: c.index ?? 0,
    message: message as ChatChoice['message'],
    finish_reason: c.finish_reason ?? null,
    native_finish_reason: c.native_finish_reason ?? null,
  };
}

const CHUNK_HEAD = (env: Envelope) =>
  `{"id":${JSON.stringify(env.id)},"object":"chat.completion.chunk","created":${env.created},"model":${JSON.stringify(env.model)}${providerPart(env.provider)}`;

/** One `data:` event for a delta; the envelope prefix is built once per stream. */
export function chunkEvent(head: string, choices: ChatDeltaChoice[]): string {
  for (const c of choices) {
    if (c.finish_reason === undefined) c.finish_reason = null;
    if (c.native_finish_reason === undefined) c.native_finish_reason = null;
    const d = c.delta as Record<string, unknown>;
    if (d.tool_calls === null) delete d.tool_calls;
    if (d.reasoning_details === null) delete d.reasoning_details;
  }
  return `data: ${head},"choices":${JSON.stringify(choices)}}\n\n`;
}

export function streamHead(env: Envelope): string {
  return CHUNK_HEAD(env);
}

export function usageEvent(head: string, usage: Record<string, unknown>): string {
  return `data: ${head},"choices":[],"usage":${JSON.stringify(usage)}}\n\n`;
}

/** The in-band failure after the first byte: a final chunk with `error` and finish_reason "error". */
export function errorEvent(head: string, e: GatewayError): string {
  const error = {
    code: e.status,
    message: e.message,
    metadata: { error_type: e.type ?? defaultType(e.status), ...(e.metadata ?? {}) },
  };
  return `data: ${head},"error":${JSON.stringify(error)},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}\n\n`;
}

export const DONE_EVENT = 'data: [DONE]\n\n';
export const KEEP_ALIVE = ': keep-alive\n\n';

const int = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) ? Math.max(0, Math.round(n)) : 0);
