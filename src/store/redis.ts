import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import { connectErrorDetail, problemKind } from './connect-errors.js';

export type RedisClient = Redis;

/**
 * Opens the shared Redis client. Commands fail fast while disconnected (no offline queue) so
 * callers can fall back to per-process state instead of stalling requests; ioredis keeps
 * reconnecting in the background. Waits up to `readyTimeoutMs` for the first connection and
 * never throws: a gateway starts even when Redis is down.
 */
export async function openRedis(
  url: string,
  opts: { log?: FastifyBaseLogger; readyTimeoutMs?: number } = {},
): Promise<RedisClient> {
  // Loaded only when Redis is configured: most single-instance deployments never need the driver.
  const { Redis } = await import('ioredis');
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 1000,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(times * 250, 5000),
  });
  let reported = false;
  client.on('error', (err: Error) => {
    lastErrors.set(client, err);
    // One line per outage, not one per reconnect attempt; the URL may carry a password.
    if (!reported) opts.log?.warn({ err: err.message }, 'redis unavailable; using per-process state');
    reported = true;
  });
  client.on('ready', () => {
    lastErrors.delete(client);
    if (reported) opts.log?.info('redis connected');
    reported = false;
  });
  const timeout = new Promise<void>((resolve) => setTimeout(resolve, opts.readyTimeoutMs ?? 2000).unref());
  await Promise.race([client.connect().catch(() => {}), timeout]);
  return client;
}

const lastErrors = new WeakMap<RedisClient, Error>();

/**
 * Why a command on `client` failed, in words for `/readyz`: while the link is down, the last
 * connection error (`cannot connect (ECONNREFUSED 127.0.0.1:6390)`), not the client's
 * "Stream isn't writeable" that every command gets meanwhile.
 */
export function redisProblem(client: RedisClient, err: unknown): string {
  if (client.status !== 'ready') {
    const last = lastErrors.get(client);
    return last ? `cannot connect (${connectErrorDetail(last)})` : `not connected (${client.status})`;
  }
  return connectErrorDetail(err);
}

/**
 * `redisProblem` in the words `/readyz` answers anyone with: the kind of failure, without the
 * address or the client's message (those are logged).
 */
export function redisProblemKind(client: RedisClient, err: unknown): string {
  if (client.status !== 'ready') return lastErrors.has(client) ? 'cannot connect' : 'not connected';
  return problemKind(err);
}

export async function closeRedis(client: RedisClient): Promise<void> {
  if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
  else client.disconnect();
}
