/**
 * How deep a JSON body may nest. JSON.parse takes any depth, but everything after it that walks
 * a value recursively (JSON.stringify of an upstream request, a stored setting, a schema
 * compiler) overflows the stack somewhere past a few thousand levels, which would be a 500 for
 * something the client sent. No request of any API we serve needs more than a few dozen
 * (tool parameter schemas are the deepest), so bodies are refused well before that: the check
 * runs in every body validator (validation.ts), before anything else walks the body. Routes
 * without a body schema (embeddings) pick known fields out of the body and never walk the rest.
 */
export const MAX_JSON_DEPTH = 128;

/** The path (`['a', 'b', '0']`) of the first value nested deeper than `max` levels, or undefined. */
export function tooDeep(value: unknown, max = MAX_JSON_DEPTH): string[] | undefined {
  return deeper(value, max)?.reverse();
}

// Recursion is bounded by `max`; the path is put together only on the way out of a failure.
function deeper(value: unknown, left: number): string[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if (left === 0) return [];
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = deeper(value[i], left - 1);
      if (p) {
        p.push(String(i));
        return p;
      }
    }
    return undefined;
  }
  for (const k in value) {
    const p = deeper((value as Record<string, unknown>)[k], left - 1);
    if (p) {
      p.push(k);
      return p;
    }
  }
  return undefined;
}
