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
