import { gcraStep, type RateLimiter, type RateLimitResult } from './rate-limiter.js';

/** Per-process limiter: the default, and the fallback when Redis is unreachable. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly tats = new Map<string, number>();
  private hits = 0;

  constructor(private readonly now: () => number = Date.now) {}

  async hit(key: string, limit: number, windowMs: number, cost = 1): Promise<RateLimitResult> {
    const now = this.now();
    if (++this.hits % 1000 === 0) this.sweep(now);
    const { result, newTat } = gcraStep(this.tats.get(key), now, limit, windowMs, cost);
    if (newTat !== undefined) this.tats.set(key, newTat);
    return result;
  }

  /** Keys whose allowance is full again carry no information; drop them to bound memory. */
  private sweep(now: number): void {
    for (const [key, tat] of this.tats) if (tat <= now) this.tats.delete(key);
  }
}
