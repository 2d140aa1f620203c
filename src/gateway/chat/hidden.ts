/**
 * Sets `key` on `obj` as a non-enumerable property: readable as usual, but left out by
 * `JSON.stringify`, spreads and `Object.keys`. How the Anthropic ingress carries what only the
 * Anthropic adapter translates (tool_result `is_error`, cache breakpoints outside text parts; see
 * `CacheControl` in types.ts) through the canonical request without an OpenAI-compatible
 * upstream, which is sent the client's objects serialized as they are, ever seeing it, and
 * without a per-request pass on that path to strip it. The other way, adapters carry the matched
 * stop sequence on a choice this way (`FinishDetails` in types.ts) to the Anthropic ingress,
 * without the OpenAI encoder, which writes choices as they are, ever sending it.
 */
export function setHidden<T extends object, K extends string>(obj: T, key: K, value: unknown): T {
  Object.defineProperty(obj, key, { value, enumerable: false, writable: true, configurable: true });
  return obj;
}
