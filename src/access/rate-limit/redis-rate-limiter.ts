import type { FastifyBaseLogger } from 'fastify';
import { problemKind } from '../../store/connect-errors.js';
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

/**
 * Shared across instances through Redis; degrades to the memory limiter while Redis is
 * unreachable. A Redis that stops answering without closing the connection (a network partition,
 * a stuck server) costs each command its full timeout (1 s), so after a failure Redis is not
 * asked for `pauseMs` (5 s), or until the client reconnects: limits stay per process meanwhile,
 * then one hit tries Redis again (others keep to memory until it answers).
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly run: Hit;
  private readonly pauseMs: number;
  /** While Redis is paused: the time (ms) before which it is not asked; 0 while it answers. */
  private pausedUntil = 0;
  /** A hit trying Redis again after a pause is under way. */
  private probing = false;

  constructor(
    private readonly client: RedisClient,
    private readonly prefix: string,
    private readonly fallback: RateLimiter = new MemoryRateLimiter(),
    private readonly log?: FastifyBaseLogger,
    opts: { pauseMs?: number } = {},
  ) {
    this.pauseMs = opts.pauseMs ?? 5_000;
    // A Redis that restarted is asked again as soon as the client has reconnected to it.
    client.on('ready', () => {
      this.pausedUntil = 0;
    });
    const c = client as unknown as { mgRateHit?: Hit };
    if (!c.mgRateHit) client.defineCommand('mgRateHit', { numberOfKeys: 1, lua: SCRIPT });
    this.run = (...args) => (client as unknown as { mgRateHit: Hit }).mgRateHit(...args);
  }

  async hit(key: string, limit: number, windowMs: number, cost = 1): Promise<RateLimitResult> {
    if (!(limit >= 1) || !(windowMs > 0))
      throw new RangeError('rate limit: limit >= 1 and windowMs > 0 required');
    // One comparison while Redis answers; the clock is read only once it has failed.
    if (this.pausedUntil !== 0 && (this.probing || Date.now() < this.pausedUntil))
      return this.fallback.hit(key, limit, windowMs, cost);
    const probe = this.pausedUntil !== 0;
    if (probe) this.probing = true;
    let reply: [number, string, string];
    try {
      reply = await this.run(`${this.prefix}rl:${key}`, limit, windowMs, cost);
      this.pausedUntil = 0;
    } catch (err) {
      if (this.pausedUntil === 0) {
        // A lost or silent connection is the client's outage, logged once by it (store/redis.ts);
        // an error Redis answered with (a script it refuses, out of memory) is said only here.
        const link = this.client.status !== 'ready' || problemKind(err) === 'timed out';
        this.log?.[link ? 'debug' : 'warn'](
          { err: (err as Error).message },
          `rate limiter: redis failed; limits are per process for ${this.pauseMs} ms, then redis is tried again`,
        );
      }
      this.pausedUntil = Date.now() + this.pauseMs;
      return this.fallback.hit(key, limit, windowMs, cost);
    } finally {
      if (probe) this.probing = false;
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
