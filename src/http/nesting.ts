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

/**
 * The same bound read off the JSON text, before JSON.parse builds anything: the path (as
 * `tooDeep` gives it) of the first array or object opened deeper than `max` levels, or undefined.
 * A 10 MiB body of `[[[[...` took JSON.parse many seconds (five million nested arrays) before the
 * check on the parsed value could refuse it. One pass: strings are skipped with `indexOf` (a
 * bracket inside one does not count), only the structural characters between them are looked at.
 * Text that is not JSON is counted as it comes; JSON.parse refuses it after.
 */
export function tooDeepText(text: string, max = MAX_JSON_DEPTH): string[] | undefined {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = stringEnd(text, i);
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return pathAt(text, i);
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
  return undefined;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const COLON = 0x3a;
const COMMA = 0x2c;

/** The index of the quote closing the string opened at `start` (the text's length if none). */
function stringEnd(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const q = text.indexOf('"', from);
    if (q === -1) return text.length;
    let b = q - 1;
    while (text.charCodeAt(b) === BACKSLASH) b--;
    // An even number of backslashes before it: the quote is not escaped.
    if ((q - 1 - b) % 2 === 0) return q;
    from = q + 1;
  }
}

/** Only for a refusal: where the container opened at `end` is, as keys and indexes. */
function pathAt(text: string, end: number): string[] {
  // Per open container: its current key (object) or index (array).
  const keys: Array<string | number> = [];
  const isArray: boolean[] = [];
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const close = stringEnd(text, i);
      if (isArray.length > 0 && !isArray[isArray.length - 1] && nextIsColon(text, close + 1))
        keys[keys.length - 1] = keyText(text.slice(i, close + 1));
      i = close;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      isArray.push(c === OPEN_ARRAY);
      keys.push(c === OPEN_ARRAY ? 0 : '');
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      isArray.pop();
      keys.pop();
    } else if (c === COMMA && isArray[isArray.length - 1]) {
      keys[keys.length - 1] = (keys[keys.length - 1] as number) + 1;
    }
  }
  return keys.map(String);
}

function nextIsColon(text: string, from: number): boolean {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === COLON) return true;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return false;
  }
  return false;
}

function keyText(quoted: string): string {
  try {
    return JSON.parse(quoted) as string;
  } catch {
    return quoted.slice(1, -1);
  }
}
