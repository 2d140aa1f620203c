import type { FastifyBaseLogger } from 'fastify';
import type { RedisClient } from '../../store/redis.js';
import { MemoryRateLimiter } from './memory-rate-limiter.js';
import type { RateLimiter, RateLimitResult } from './rate-limiter.js';

// GCRA in one atomic script, timed by the Redis clock so instances with skewed clocks agree.
// Returns strings: Redis truncates Lua numbers to integers.
const SCRIPT = `
pcall(redis.replicate_commands)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local interval = window / limit
local start = now
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat and tat > now then start = tat end
local nxt = start + cost * interval
if nxt - now > window + 0.000001 then
  return {0, string.format('%.3f', start - now), string.format('%.3f', nxt - window - now)}
end
if nxt <= now then
  redis.call('DEL', KEYS[1])
  return {1, '0', '0'}
end
redis.call('SET', KEYS[1], string.format('%.3f', nxt), 'PX', math.ceil(nxt - now) + 1)
return {1, string.format('%.3f', nxt - now), '0'}
`;

type Hit = (key: string, limit: number, windowMs: number, cost: number) => Promise<[number, string, string]>;

/** Shared across instances through Redis; degrades to the memory limiter while Redis is unreachable. */
export class RedisRateLimiter implements RateLimiter {
  private readonly run: Hit;

  constructor(
    client: RedisClient,
    private readonly prefix: string,
    private readonly fallback: RateLimiter = new MemoryRateLimiter(),
    private readonly log?: FastifyBaseLogger,
  ) {
    const c = client as unknown as { mgRateHit?: Hit };
    if (!c.mgRateHit) client.defineCommand('mgRateHit', { numberOfKeys: 1, lua: SCRIPT });
    this.run = (...args) => (client as unknown as { mgRateHit: Hit }).mgRateHit(...args);
  }

  async hit(key: string, limit: number, windowMs: number, cost = 1): Promise<RateLimitResult> {
    if (!(limit >= 1) || !(windowMs > 0))
      throw new RangeError('rate limit: limit >= 1 and windowMs > 0 required');
    let reply: [number, string, string];
    try {
      reply = await this.run(`${this.prefix}rl:${key}`, limit, windowMs, cost);
    } catch (err) {
      this.log?.debug({ err: (err as Error).message }, 'rate limiter: redis failed, using memory');
      return this.fallback.hit(key, limit, windowMs, cost);
    }
    const [allowed, backlog, wait] = [Number(reply[0]), Number(reply[1]), Number(reply[2])];
    const interval = windowMs / limit;
    return {
      allowed: allowed === 1,
      remaining: Math.max(0, Math.floor((windowMs - backlog) / interval + 1e-6)),
      resetMs: Math.ceil(backlog),
      retryAfterSec: allowed === 1 ? 0 : Math.max(1, Math.ceil(wait / 1000)),
    };
  }
}
