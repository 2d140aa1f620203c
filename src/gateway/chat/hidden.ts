import type { ChatDeltaChoice, ChatRequest } from './types.js';

/**
 * Sets `key` on `obj` as a non-enumerable property: readable as usual, but left out by
 * `JSON.stringify`, spreads and `Object.keys`. How the Anthropic ingress carries what only the
 * Anthropic adapter translates (tool_result `is_error`, cache breakpoints outside text parts; see
 * `CacheControl` in types.ts; Anthropic-defined tools such as web search, a tool_choice naming one,
 * assistant turns holding server tool blocks) through the canonical request without an
 * OpenAI-compatible upstream, which is sent the client's objects serialized as they are, ever
 * seeing it, and without a per-request pass on that path to strip it. The other way, adapters
 * carry the matched stop sequence on a choice this way (`FinishDetails` in types.ts), and the
 * Anthropic adapter an answer's server tool blocks (`anthropic_content`, `anthropic_event`), to
 * the Anthropic ingress, without the OpenAI encoder, which writes choices as they are, ever
 * sending it. `key` is one of the names listed below (`HiddenName`): a client's body can hold a
 * field of that name too, and an OpenAI-compatible upstream's answer, which is then dropped before
 * anything reads it (`dropClientHidden`, `dropUpstreamHidden`).
 */
export function setHidden<T extends object>(obj: T, key: HiddenName, value: unknown): T {
  return define(obj, key, value);
}

function define<T extends object>(obj: T, key: string, value: unknown): T {
  Object.defineProperty(obj, key, { value, enumerable: false, writable: true, configurable: true });
  return obj;
}

/**
 * The names of what an ingress carries hidden on the canonical request (`anthropic_beta`: also
 * OpenRouter's `x-anthropic-beta` on the OpenAI-shaped ingresses), on its messages and on its
 * tools, which the Anthropic adapter reads as the ingress's word. None is a client's to set: a
 * /v1/chat/completions body is the canonical request itself, with its unknown fields, so a body
 * field of one of these names is dropped (`dropClientHidden`). A new hidden field of a request,
 * message or tool goes here, or `setHidden` does not take its name.
 */
export const HIDDEN_REQUEST_FIELDS = [
  'anthropic_tools',
  'anthropic_tool_choice',
  'anthropic_thinking',
  'anthropic_beta',
] as const;
export const HIDDEN_MESSAGE_FIELDS = ['is_error', 'anthropic_content'] as const;
export const HIDDEN_TOOL_FIELDS = ['anthropic_fields'] as const;
/**
 * Hidden on what adapters answer, read by the Anthropic ingress: a choice's (or a stream's final
 * choice's) `stop_sequence`, and a message's `anthropic_content` and `content_order` or a delta's
 * `anthropic_event` (`HIDDEN_ANSWER_FIELDS`, the three on both: a message and a delta are the same
 * place, the choice's content). No client sends those objects, but an OpenAI-compatible upstream
 * does, handed on as they are: a field of one of these names there is dropped
 * (`dropUpstreamHidden`).
 */
export const HIDDEN_CHOICE_FIELDS = ['stop_sequence'] as const;
export const HIDDEN_ANSWER_FIELDS = ['anthropic_content', 'content_order', 'anthropic_event'] as const;

/**
 * Every name `setHidden` takes. `cache_control` is in no list above: hidden where only the
 * Anthropic ingress can say it in chat terms, but a public field too (OpenRouter's breakpoint on
 * parts, tools and the request, types.ts `CacheControl`), which a client may send and every
 * adapter reads as sent.
 */
export type HiddenName =
  | (typeof HIDDEN_REQUEST_FIELDS)[number]
  | (typeof HIDDEN_MESSAGE_FIELDS)[number]
  | (typeof HIDDEN_TOOL_FIELDS)[number]
  | (typeof HIDDEN_CHOICE_FIELDS)[number]
  | (typeof HIDDEN_ANSWER_FIELDS)[number]
  | 'cache_control';

const isEnumerable = Object.prototype.propertyIsEnumerable;

/**
 * Drops the enumerable own properties of the request, its messages and its tools that have a
 * hidden field's name (`HIDDEN_REQUEST_FIELDS`...): what a client body sent under such a name, so
 * no adapter reads it as the ingress's word (a string where the Anthropic adapter maps a list was
 * a 500) and no upstream gets it. The hidden ones (non-enumerable, an ingress's) stay. Run by the
 * chat pipeline on every ingress's request, before anything reads it.
 *
 * Why an ingress step rather than adapters that honour only non-enumerable properties: the
 * readers are many (request builder, message translation, planning) and each would have to
 * remember; this is one place, and it covers an ingress that passes client objects through (as
 * /v1/chat/completions does) without its knowing. It is dropped for every upstream, not sent on to
 * OpenAI-compatible ones as an unknown field: the name is the gateway's, not the client's, and a
 * request that fell back from one upstream kind to another should mean the same to both.
 *
 * On the hot path: no allocation, and one `in` per name and object, spelled out rather than looped
 * over the lists (a loop's keyed lookups cost ~25x: ~400 ns against ~15 ns for a four-message
 * request with a tool); the lists say what is dropped once a name is found. hidden.test.ts sends
 * each listed name alone, so a name missing here fails it.
 */
export function dropClientHidden(req: ChatRequest): ChatRequest {
  if (
    'anthropic_tools' in req ||
    'anthropic_tool_choice' in req ||
    'anthropic_thinking' in req ||
    'anthropic_beta' in req
  )
    dropNamed(req, HIDDEN_REQUEST_FIELDS);
  const { messages, tools } = req;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if ('is_error' in m || 'anthropic_content' in m) dropNamed(m, HIDDEN_MESSAGE_FIELDS);
  }
  if (tools !== undefined)
    for (let i = 0; i < tools.length; i++) {
      const t = tools[i]!;
      if ('anthropic_fields' in t) dropNamed(t, HIDDEN_TOOL_FIELDS);
    }
  return req;
}

/**
 * Drops the enumerable own properties of an upstream's answer choice and of its message (a stream
 * choice: its delta) that have the name of a hidden answer field (`HIDDEN_CHOICE_FIELDS`,
 * `HIDDEN_ANSWER_FIELDS`): what an upstream sent under such a name, so the Anthropic ingress does
 * not read it as an adapter's word (a string `anthropic_content` became the answer's `content`,
 * an object `content_order` was a 500, a `stop_sequence` the stop reason) and no OpenAI-shaped
 * client gets it. The hidden ones (non-enumerable, an adapter's) stay. Run by every adapter that
 * hands on the upstream's own objects (the OpenAI-compatible one: its answers and chunks are
 * OpenAI's shapes, parsed once and passed on), on each choice as it parses it, streamed and not;
 * adapters that build their answers anew (Anthropic, Gemini) have nothing to drop.
 *
 * Dropped rather than passed on as an unknown field, as other unknown upstream fields are: the
 * name is the gateway's, and an answer should mean the same through /v1/messages and
 * /v1/chat/completions; no provider's wire format has such a field there.
 *
 * On the streaming hot path: no allocation, and one literal `in` per name and object, as in
 * `dropClientHidden`; hidden.test.ts sends each listed name alone.
 */
export function dropUpstreamHidden(choice: object, message: unknown): void {
  if ('stop_sequence' in choice) dropNamed(choice, HIDDEN_CHOICE_FIELDS);
  // A delta that is not an object is the upstream's garbage, passed on as it is: not this one's to judge.
  if (typeof message !== 'object' || message === null) return;
  if ('anthropic_content' in message || 'content_order' in message || 'anthropic_event' in message)
    dropNamed(message, HIDDEN_ANSWER_FIELDS);
}

/** Deletes the enumerable own properties of `obj` named in `names` (`delete`: only when found). */
function dropNamed(obj: object, names: readonly string[]): void {
  const o = obj as Record<string, unknown>;
  for (let i = 0; i < names.length; i++) {
    const k = names[i]!;
    if (k in o && isEnumerable.call(o, k)) delete o[k];
  }
}

/**
 * `{ ...obj, ...changes }` with the hidden (non-enumerable) properties of `obj` that `changes`
 * does not replace carried over: a spread alone leaves them behind, and a request copied on its
 * way to an upstream (middle-out, a `:thinking` variant) would lose what rides on it.
 */
export function withChanges<T extends object>(obj: T, changes: Partial<T>): T {
  const out = { ...obj, ...changes };
  for (const k of Object.getOwnPropertyNames(obj)) {
    if (Object.prototype.propertyIsEnumerable.call(obj, k) || k in changes) continue;
    define(out, k, (obj as Record<string, unknown>)[k]);
  }
  return out;
}

/**
 * A stream delta choice that carries only a hidden block event (an Anthropic server tool's
 * block, `anthropic_event` in types.ts): nothing an encoder that writes choices as they are could
 * show, so it leaves the choice out. One property read for every other delta.
 */
export function onlyHiddenEvent(c: ChatDeltaChoice): boolean {
  return (
    c.delta.anthropic_event !== undefined &&
    c.finish_reason == null &&
    c.logprobs == null &&
    Object.keys(c.delta).length === 0
  );
}
