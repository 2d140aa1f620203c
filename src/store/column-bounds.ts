/**
 * What the columns hold on both dialects. PostgreSQL refuses a value past its column where
 * SQLite stores it, so the API, the request logs and the spend statements bound their integers
 * here: `integer` is 32-bit there, and `bigint` amounts and times stay within JavaScript's exact
 * integers (spend saturates at 2^53 - 1 micro-USD, see usage-store `add`).
 */
export const INT32_MAX = 2_147_483_647;
export const MAX_EXACT = Number.MAX_SAFE_INTEGER;

/** `n` rounded and kept within ±`max`; 0 when it is not a finite number. */
export const clampInt = (n: number | undefined, max: number): number =>
  n !== undefined && Number.isFinite(n) ? Math.max(-max, Math.min(max, Math.round(n))) : 0;

/**
 * A spend amount in micro-USD as the spend columns hold it: rounded, within 0..MAX_EXACT. An
 * infinite cost (an absurd price) saturates there; NaN is 0.
 */
export const clampSpend = (micros: number): number =>
  Number.isNaN(micros) ? 0 : Math.min(MAX_EXACT, Math.max(0, Math.round(micros)));

/**
 * A text's length in characters (Unicode code points), the way JSON Schema's minLength and
 * maxLength count and text limits are stated: an emoji is one character, not the two UTF-16
 * units of `String.length`.
 */
export function charLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}
