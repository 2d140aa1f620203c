import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';

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
    // One line per outage, not one per reconnect attempt; the URL may carry a password.
    if (!reported) opts.log?.warn({ err: err.message }, 'redis unavailable; using per-process state');
    reported = true;
  });
  client.on('ready', () => {
    if (reported) opts.log?.info('redis connected');
    reported = false;
  });
  const timeout = new Promise<void>((resolve) => setTimeout(resolve, opts.readyTimeoutMs ?? 2000).unref());
  await Promise.race([client.connect().catch(() => {}), timeout]);
  return client;
}

export async function closeRedis(client: RedisClient): Promise<void> {
  if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
  else client.disconnect();
}
