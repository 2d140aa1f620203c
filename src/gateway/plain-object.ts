/** A JSON object: not null, not an array (what a parsed body's `{...}` is). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
