import { badRequest } from '../gateway/errors.js';
import { MAX_EXACT } from '../store/column-bounds.js';
import { nowSeconds } from './secrets.js';

/** The limits users, API keys and access tokens carry, as they are checked and stored. */

export const MAX_QUOTA_USD = Math.floor(MAX_EXACT / 1e6);

/**
 * A `quota_limit` in USD as whole micro-USD (null: unlimited). A positive limit that rounds to 0
 * is refused rather than stored as 0, which is a limit of its own (nothing may be spent): 1e-9
 * made a key exhausted from its creation, with a 200.
 */
export function toMicros(usd: number | null | undefined): number | null {
  if (usd === null || usd === undefined) return null;
  const micros = Math.round(usd * 1e6);
  // Spend saturates at 2^53 - 1 micro-USD (src/store/usage-store.ts): a limit past it means nothing.
  if (!Number.isFinite(usd) || usd < 0 || micros > MAX_EXACT)
    throw badRequest(`quota_limit: must be a number from 0 to ${MAX_QUOTA_USD} (USD)`, 'quota_limit');
  if (micros === 0 && usd > 0)
    throw badRequest('quota_limit: must be 0 or at least 0.000001 (USD)', 'quota_limit');
  // -0 (JSON's `-0`) is not below 0, and Math.round keeps its sign: the limit is 0.
  return micros === 0 ? 0 : micros;
}

/**
 * A new key or token that has already expired could never be used: refused, naming the field.
 * (An update may set a past time: that is how a key is expired at once.)
 */
export function notExpired(expires: number | null | undefined, now = nowSeconds()): void {
  if (expires !== undefined && expires !== null && expires <= now)
    throw badRequest('expires_time: must be in the future (unix seconds), or null for never', 'expires_time');
}
