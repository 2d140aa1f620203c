import type { RateLimiter, RateLimitResult } from '../rate-limit/rate-limiter.js';

export type LimitScope = 'key_rpm' | 'key_tpm' | 'user_rpm' | 'ip_rpm';

export interface LimitOutcome {
  scope: LimitScope;
  limit: number;
  result: RateLimitResult;
}

export interface Admission {
  allowed: boolean;
  /** The check that refused, or the tightest one that passed (for the X-RateLimit headers). */
  binding: LimitOutcome | undefined;
  /** Every check that ran, by scope. */
  outcomes: LimitOutcome[];
}

export interface CallerLimits {
  keyId: number;
  userId: number;
  /** Requests per minute on this key; null or 0 = none. */
  rpm: number | null;
  /** Tokens per minute on this key; null or 0 = none. */
  tpm: number | null;
}

const MINUTE = 60_000;

/**
 * Per-key requests and tokens per minute and per-user requests per minute, over the shared
 * rate limiter (Redis when configured, so limits hold across instances; per process otherwise
 * or while Redis is down). Tokens are charged up front from the prompt estimate; `chargeTokens`
 * adds what the call used beyond it once usage is known.
 */
export class RequestLimits {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly opts: { userRpm: number },
  ) {}

  /** Whether any limit applies to this caller (lets the hot path skip the limiter entirely). */
  applies(c: CallerLimits): boolean {
    return !!c.rpm || !!c.tpm || this.opts.userRpm > 0;
  }

  async admit(c: CallerLimits, promptTokens: number): Promise<Admission> {
    const checks: Array<Promise<LimitOutcome>> = [];
    const spent: Array<{ key: string; limit: number; cost: number }> = [];
    const run = (scope: LimitScope, key: string, limit: number, cost: number) => {
      spent.push({ key, limit, cost });
      checks.push(this.limiter.hit(key, limit, MINUTE, cost).then((result) => ({ scope, limit, result })));
    };
    if (c.rpm && c.rpm > 0) run('key_rpm', `key:${c.keyId}:rpm`, c.rpm, 1);
    if (this.opts.userRpm > 0) run('user_rpm', `user:${c.userId}:rpm`, this.opts.userRpm, 1);
    // A prompt larger than the whole allowance could never pass; charge the allowance instead
    // so such a call is possible on an idle key rather than refused forever.
    if (c.tpm && c.tpm > 0)
      run('key_tpm', `key:${c.keyId}:tpm`, c.tpm, Math.min(c.tpm, Math.max(1, Math.ceil(promptTokens))));
    const outcomes = await Promise.all(checks);
    const allowed = outcomes.every((o) => o.result.allowed);
    // The checks run at once (one round trip to Redis): a request one limit refuses gives back
    // what the others took, so a key over its requests a minute does not spend its tokens too.
    // What is left is then what the give-back leaves: the 429's x-ratelimit-* headers say so
    // (before, they counted the request refused, so a client read 0 requests left and waited).
    if (!allowed)
      await Promise.all(
        outcomes.map(async (o, i) => {
          if (!o.result.allowed) return;
          const s = spent[i]!;
          const back = await this.limiter.hit(s.key, s.limit, MINUTE, -s.cost).catch(() => undefined);
          if (back) outcomes[i] = { ...o, result: back };
        }),
      );
    return { allowed, binding: binding(outcomes), outcomes };
  }

  /**
   * Charges tokens a call used beyond its up-front estimate. Never refuses (the call is over);
   * an overrun larger than what is left empties the allowance rather than going into debt.
   */
  async chargeTokens(keyId: number, tpm: number, tokens: number): Promise<void> {
    const cost = Math.min(tpm, Math.ceil(tokens));
    if (!(cost > 0)) return;
    const key = `key:${keyId}:tpm`;
    const r = await this.limiter.hit(key, tpm, MINUTE, cost);
    if (!r.allowed && r.remaining > 0) await this.limiter.hit(key, tpm, MINUTE, r.remaining);
  }
}

/** A refusal with the longest wait, else the check with the least allowance left (by share). */
export function binding(outcomes: LimitOutcome[]): LimitOutcome | undefined {
  let best: LimitOutcome | undefined;
  for (const o of outcomes) {
    if (!best) best = o;
    else if (!o.result.allowed && (best.result.allowed || o.result.retryAfterSec > best.result.retryAfterSec))
      best = o;
    else if (
      best.result.allowed &&
      o.result.allowed &&
      o.result.remaining / o.limit < best.result.remaining / best.limit
    )
      best = o;
  }
  return best;
}
