import { afterAll, describe, expect, it } from 'vitest';
import { TEST_REDIS_URL } from '../../../test/helpers/databases.js';
import { closeRedis, openRedis, type RedisClient } from '../../store/redis.js';
import { MemoryRateLimiter } from './memory-rate-limiter.js';
import { RedisRateLimiter } from './redis-rate-limiter.js';

describe('MemoryRateLimiter (GCRA)', () => {
  it('allows a burst of `limit`, then one unit per window/limit', async () => {
    let now = 1_000_000;
    const rl = new MemoryRateLimiter(() => now);
    const seen = [];
    for (let i = 0; i < 3; i++) seen.push(await rl.hit('a', 3, 60_000));
    expect(seen.map((r) => [r.allowed, r.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
    ]);
    const denied = await rl.hit('a', 3, 60_000);
    expect(denied).toMatchObject({ allowed: false, remaining: 0, retryAfterSec: 20, resetMs: 60_000 });
    expect((await rl.hit('b', 3, 60_000)).allowed).toBe(true); // keys are independent
    now += 19_999;
    expect((await rl.hit('a', 3, 60_000)).allowed).toBe(false);
    now += 1;
    expect(await rl.hit('a', 3, 60_000)).toMatchObject({ allowed: true, remaining: 0 });
    now += 60_000;
    expect(await rl.hit('a', 3, 60_000)).toMatchObject({ allowed: true, remaining: 2 });
  });

  it('spends several units at once (token limits)', async () => {
    const now = 5_000;
    const rl = new MemoryRateLimiter(() => now);
    expect(await rl.hit('k', 100, 60_000, 60)).toMatchObject({ allowed: true, remaining: 40 });
    const r = await rl.hit('k', 100, 60_000, 50);
    expect(r).toMatchObject({ allowed: false, remaining: 40, retryAfterSec: 6 });
    expect(await rl.hit('k', 100, 60_000, 40)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('gives units back with a negative cost, never past a full allowance', async () => {
    const rl = new MemoryRateLimiter(() => 0);
    expect(await rl.hit('k', 100, 60_000, 60)).toMatchObject({ remaining: 40 });
    expect(await rl.hit('k', 100, 60_000, -50)).toMatchObject({ allowed: true, remaining: 90 });
    await rl.hit('k', 100, 60_000, -500);
    expect(await rl.hit('k', 100, 60_000, 100)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('allows exactly `limit` for limits that do not divide the window', async () => {
    const rl = new MemoryRateLimiter(() => 42);
    let allowed = 0;
    for (let i = 0; i < 10; i++) if ((await rl.hit('x', 7, 60_000)).allowed) allowed++;
    expect(allowed).toBe(7);
  });
});

describe.runIf(TEST_REDIS_URL !== '')('RedisRateLimiter', () => {
  const clients: RedisClient[] = [];
  const prefix = `rltest:${process.pid}:${Date.now()}:`;
  afterAll(async () => {
    for (const c of clients) await closeRedis(c);
  });
  const limiter = async () => {
    const c = await openRedis(TEST_REDIS_URL);
    clients.push(c);
    return new RedisRateLimiter(c, prefix);
  };

  it('shares one allowance between limiters on separate connections, atomically', async () => {
    const [a, b] = [await limiter(), await limiter()];
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).hit('shared', 20, 60_000)),
    );
    expect(results.filter((r) => r.allowed)).toHaveLength(20);
    const denied = results.find((r) => !r.allowed)!;
    expect(denied.retryAfterSec).toBeGreaterThanOrEqual(1);
    expect(denied.retryAfterSec).toBeLessThanOrEqual(3);
    expect(denied.remaining).toBe(0);
  });

  it('reports remaining and spends costs like the memory limiter', async () => {
    const a = await limiter();
    expect(await a.hit('cost', 100, 60_000, 60)).toMatchObject({ allowed: true, remaining: 40 });
    expect(await a.hit('cost', 100, 60_000, 50)).toMatchObject({ allowed: false, remaining: 40 });
  });

  it('gives units back with a negative cost, never past a full allowance', async () => {
    const a = await limiter();
    expect(await a.hit('back', 100, 60_000, 60)).toMatchObject({ allowed: true, remaining: 40 });
    expect((await a.hit('back', 100, 60_000, -50)).allowed).toBe(true);
    expect(await a.hit('back', 100, 60_000, 0)).toMatchObject({ allowed: true, remaining: 90 });
    // More than was taken, and on a key never used: a full allowance, no error.
    expect((await a.hit('back', 100, 60_000, -500)).allowed).toBe(true);
    expect((await a.hit('fresh', 100, 60_000, -5)).allowed).toBe(true);
    expect(await a.hit('back', 100, 60_000, 100)).toMatchObject({ allowed: true, remaining: 0 });
  });
});

describe('RedisRateLimiter without a reachable Redis', () => {
  it('falls back to per-process limiting instead of failing', async () => {
    const c = await openRedis('redis://127.0.0.1:1/0', { readyTimeoutMs: 300 });
    try {
      const rl = new RedisRateLimiter(c, 'down:');
      const r = [];
      for (let i = 0; i < 3; i++) r.push((await rl.hit('k', 2, 60_000)).allowed);
      expect(r).toEqual([true, true, false]);
    } finally {
      await closeRedis(c);
    }
  });
});
