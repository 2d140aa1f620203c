/**
 * A Redis connection that stays open but delivers nothing (a frozen proxy, a dropped NAT entry):
 * the invalidation bus's subscriber must notice (a PING with a deadline), reconnect, resubscribe
 * and drop every cache, since the messages sent meanwhile are lost. The main client likewise, and
 * each outage is logged once, in words that say what happened.
 */
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RedisRateLimiter } from '../../src/access/rate-limit/redis-rate-limiter.js';
import { type InvalidationTopic, RedisInvalidationBus } from '../../src/store/pubsub.js';
import {
  closeRedis,
  openRedis,
  type RedisClient,
  redisProblem,
  redisProblemKind,
} from '../../src/store/redis.js';
import { type RedisProxy, startRedisProxy } from '../helpers/redis-proxy.js';
import { type PrivateRedis, startRedisServer } from '../helpers/redis-server.js';

let redis: PrivateRedis;
let proxy: RedisProxy | undefined;
const clients: RedisClient[] = [];
const buses: RedisInvalidationBus[] = [];

beforeAll(async () => {
  redis = await startRedisServer();
});
afterEach(async () => {
  for (const b of buses.splice(0)) await b.close();
  for (const c of clients.splice(0)) await closeRedis(c);
  await proxy?.close();
  proxy = undefined;
});
afterAll(async () => {
  await redis?.stop();
});

async function until(cond: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

function capturedLog() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { lines, log: log as unknown as FastifyBaseLogger };
}

const open = async (url: string, log?: FastifyBaseLogger) => {
  const c = await openRedis(url, { log, pingEveryMs: 100 });
  clients.push(c);
  return c;
};

describe('a subscriber connection that goes silent', () => {
  it('is replaced: caches are dropped for what was lost, and later messages arrive again', async () => {
    proxy = await startRedisProxy(redis.url);
    const prefix = `silent:${process.pid}:`;
    // The listener goes through the proxy; the sender talks to Redis directly.
    const listener = new RedisInvalidationBus(await open(proxy.url), prefix, undefined, { pingEveryMs: 100 });
    const sender = new RedisInvalidationBus(await open(redis.url), prefix);
    buses.push(listener, sender);
    await Promise.all([listener.start(), sender.start()]);
    const heard: Array<[InvalidationTopic, unknown]> = [];
    listener.subscribe((t, scope) => void heard.push([t, scope]));
    sender.publish('apps');
    await until(() => heard.length === 1);
    const before = proxy.connections;

    proxy.freeze();
    // Sent while the listener's connection is silent: lost on it.
    sender.publish('keys', { keyId: 5 });
    // Found silent, reconnected and resubscribed: every topic dropped (the revocation with them).
    await until(() => heard.some(([t, s]) => t === 'keys' && s === undefined));
    expect(proxy.connections).toBeGreaterThan(before);
    expect(heard.map(([t]) => t)).toEqual(expect.arrayContaining(['keys', 'users', 'registry']));

    // Subscribed again: the next message arrives as itself.
    heard.length = 0;
    await until(async () => {
      sender.publish('users', { userId: 9 });
      await new Promise((r) => setTimeout(r, 50));
      return heard.some(([t, s]) => t === 'users' && (s as { userId?: number })?.userId === 9);
    });
  });
});

describe('the main client on a connection that goes silent', () => {
  it('reconnects, and logs the outage and its end once each', async () => {
    proxy = await startRedisProxy(redis.url);
    const { lines, log } = capturedLog();
    const c = await open(proxy.url, log);
    expect(await c.ping()).toBe('PONG');
    proxy.freeze();
    await until(() => lines.some((l) => l.msg === 'redis available again'));
    expect(await c.ping()).toBe('PONG');
    const said = lines.filter((l) => /redis/.test(String(l.msg)));
    expect(said.map((l) => [l.msg, l.detail])).toEqual([
      [
        'redis unavailable; using per-process state',
        'the connection stopped answering (no answer to PING within 1000 ms); reconnecting',
      ],
      ['redis available again', undefined],
    ]);
  });
});

describe('an outage behind a proxy that accepts connections', () => {
  it('is one line in true words, and /readyz’s detail does not change with each attempt', async () => {
    proxy = await startRedisProxy(redis.url);
    const { lines, log } = capturedLog();
    const c = await open(proxy.url, log);
    const limiter = new RedisRateLimiter(c, `silent:${process.pid}:`, undefined, log);
    expect((await limiter.hit('k', 100_000, 60_000)).allowed).toBe(true);
    // The Redis behind the proxy is gone: each attempt connects to the proxy, which then closes it.
    proxy.severUpstream(true);
    const details = new Set<string>();
    const start = proxy.connections;
    await until(async () => {
      // Served from memory meanwhile, without a line of its own: the client's says it all.
      expect((await limiter.hit('k', 100_000, 60_000)).allowed).toBe(true);
      if (c.status !== 'ready')
        details.add(`${redisProblemKind(c, undefined)}: ${redisProblem(c, undefined)}`);
      return proxy!.connections >= start + 4;
    });
    proxy.severUpstream(false);
    await until(() => c.status === 'ready');
    // Info and above: what an operator reads.
    const said = lines.filter((l) => Number(l.level) >= 30).map((l) => [l.msg, l.detail]);
    expect(said).toEqual([
      ['redis unavailable; using per-process state', expect.any(String)],
      ['redis available again', undefined],
    ]);
    // Once an attempt has failed, every attempt is described alike (not "Stream isn't writeable"
    // once, "ECONNRESET" the next).
    details.delete('not connected: not connected');
    expect([...details]).toEqual([
      'cannot connect: connected, but the connection closed before Redis answered',
    ]);
  });
});
