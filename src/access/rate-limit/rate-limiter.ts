/**
 * A rate limiter over named keys (client address, API key, ...). Each key allows `limit` units
 * per `windowMs`, refilled continuously (GCRA: a burst of `limit` is allowed, then one unit
 * every windowMs/limit). `cost` lets token-per-minute limits spend several units at once; a
 * negative cost gives units back (a request another limit refused), never past a full allowance.
 */
export interface RateLimiter {
  hit(key: string, limit: number, windowMs: number, cost?: number): Promise<RateLimitResult>;
}

export interface RateLimitResult {
  allowed: boolean;
  /** Units still available right after this hit. */
  remaining: number;
  /** Milliseconds until the key is back to its full allowance. */
  resetMs: number;
  /** Seconds to wait before this hit would be allowed; 0 when allowed. */
  retryAfterSec: number;
}

// Floating point slack so that exactly `limit` hits fit in an empty window.
const EPSILON = 1e-6;

/**
 * One GCRA step, shared by the memory limiter and mirrored by the Redis Lua script.
 * `tat` is the stored theoretical arrival time (ms) or undefined for a fresh key.
 */
export function gcraStep(
  tat: number | undefined,
  now: number,
  limit: number,
  windowMs: number,
  cost: number,
): { result: RateLimitResult; newTat: number | undefined } {
  if (!(limit >= 1) || !(windowMs > 0))
    throw new RangeError('rate limit: limit >= 1 and windowMs > 0 required');
  const interval = windowMs / limit;
  const start = Math.max(tat ?? now, now);
  const next = start + cost * interval;
  if (next - now > windowMs + EPSILON) {
    const waitMs = next - windowMs - now;
    return {
      result: {
        allowed: false,
        remaining: Math.max(0, Math.floor((windowMs - (start - now)) / interval + EPSILON)),
        resetMs: Math.ceil(start - now),
        retryAfterSec: Math.max(1, Math.ceil(waitMs / 1000)),
      },
      newTat: undefined,
    };
  }
  return {
    result: {
      allowed: true,
      remaining: Math.max(0, Math.floor((windowMs - (next - now)) / interval + EPSILON)),
      resetMs: Math.ceil(next - now),
      retryAfterSec: 0,
    },
    newTat: next,
  };
}
