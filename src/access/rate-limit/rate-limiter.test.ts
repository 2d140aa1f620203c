import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
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

describe.runIf(TEST_REDIS_URL !== '')('RedisRateLimiter when Redis stops answering', () => {
  /**
   * A TCP relay to the test Redis that can go silent: while `blackhole`, what the client sends is
   * held (and counted), as in a network partition that sends no reset; `heal` delivers it.
   */
  async function relay() {
    const target = new URL(TEST_REDIS_URL);
    const held: [Socket, Buffer][] = [];
    const state = {
      blackhole: false,
      dropped: 0,
      heal() {
        state.blackhole = false;
        for (const [socket, data] of held.splice(0)) socket.write(data);
      },
    };
    const server = createServer((client) => {
      const upstream = connect(Number(target.port || 6379), target.hostname);
      client.on('data', (d) => {
        if (!state.blackhole) return void upstream.write(d);
        state.dropped += d.length;
        held.push([upstream, d]);
      });
      upstream.on('data', (d) => client.write(d));
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.on('error', () => {});
      upstream.on('error', () => {});
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    return { state, url: `redis://127.0.0.1:${port}${target.pathname}`, close: () => server.close() };
  }

  it('stops asking Redis for a while after a command times out, then tries it again', async () => {
    const r = await relay();
    const c = await openRedis(r.url);
    const prefix = `rlpause:${process.pid}:${Date.now()}:`;
    try {
      const rl = new RedisRateLimiter(c, prefix, undefined, undefined, { pauseMs: 1_500 });
      expect((await rl.hit('k', 100, 60_000)).allowed).toBe(true);
      r.state.blackhole = true;
      // The first hit waits out the command timeout, then is limited in this process.
      expect((await rl.hit('k', 100, 60_000)).allowed).toBe(true);
      const dropped = r.state.dropped;
      expect(dropped).toBeGreaterThan(0);
      // The next ones do not wait on Redis at all: nothing more is sent to it.
      for (let i = 0; i < 20; i++) expect((await rl.hit('k', 100, 60_000)).allowed).toBe(true);
      expect(r.state.dropped).toBe(dropped);
      // Redis answers again: after the pause, one hit tries it, and limits are shared again.
      r.state.heal();
      await new Promise((res) => setTimeout(res, 1_600));
      await rl.hit('k', 100, 60_000);
      const direct = await openRedis(TEST_REDIS_URL);
      try {
        await expect
          .poll(async () => {
            await rl.hit('k', 100, 60_000);
            return direct.exists(`${prefix}rl:k`);
          })
          .toBe(1);
      } finally {
        await closeRedis(direct);
      }
    } finally {
      c.disconnect();
      r.close();
    }
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
