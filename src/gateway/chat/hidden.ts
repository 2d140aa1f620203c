import type { ChatDeltaChoice } from './types.js';

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
 * sending it.
 */
export function setHidden<T extends object, K extends string>(obj: T, key: K, value: unknown): T {
  Object.defineProperty(obj, key, { value, enumerable: false, writable: true, configurable: true });
  return obj;
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
    setHidden(out, k, (obj as Record<string, unknown>)[k]);
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
