import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import { connectErrorDetail, problemKind } from './connect-errors.js';

export type RedisClient = Redis;

/** How long a command may wait for its answer (ioredis `commandTimeout`). */
export const REDIS_COMMAND_TIMEOUT_MS = 1000;
/** How often an idle connection is asked whether it still answers (`watchSilence`). */
export const REDIS_PING_EVERY_MS = 2000;

/** What is wrong with a client's link, in words for the log (`detail`) and for `/readyz` (`kind`). */
interface Problem {
  detail: string;
  kind: string;
}

const problems = new WeakMap<RedisClient, Problem>();
const watchers = new WeakMap<RedisClient, () => void>();

/**
 * Opens the shared Redis client. Commands fail fast while disconnected (no offline queue) so
 * callers can fall back to per-process state instead of stalling requests; ioredis keeps
 * reconnecting in the background. Waits up to `readyTimeoutMs` for the first connection and
 * never throws: a gateway starts even when Redis is down.
 *
 * An outage is logged once when it begins (`redis unavailable; using per-process state`, with
 * what failed in `detail`) and once when it ends (`redis available again`, with `down_s`), however
 * many reconnect attempts fail in between and whatever each one's error. A connection that stays
 * open but stops answering is found by a PING every `pingEveryMs` and replaced (`watchSilence`).
 */
export async function openRedis(
  url: string,
  opts: { log?: FastifyBaseLogger; readyTimeoutMs?: number; pingEveryMs?: number } = {},
): Promise<RedisClient> {
  // Loaded only when Redis is configured: most single-instance deployments never need the driver.
  const { Redis } = await import('ioredis');
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(times * 250, 5000),
  });
  let downSince: number | undefined;
  const report = (p: Problem) => {
    problems.set(client, p);
    if (downSince !== undefined) return;
    downSince = Date.now();
    // The URL may carry a password: only the description is logged.
    opts.log?.warn({ detail: p.detail }, 'redis unavailable; using per-process state');
  };
  // Whether the attempt under way reached Redis's address (TCP connected) but has not been answered.
  let handshake = false;
  client.on('connecting', () => {
    handshake = false;
  });
  client.on('connect', () => {
    handshake = true;
  });
  client.on('error', (err: Error) => report(describeFailure(handshake, err)));
  client.on('ready', () => {
    handshake = false;
    problems.delete(client);
    if (downSince !== undefined)
      opts.log?.info({ down_s: Math.round((Date.now() - downSince) / 1000) }, 'redis available again');
    downSince = undefined;
  });
  watchers.set(
    client,
    watchSilence(client, {
      everyMs: opts.pingEveryMs ?? REDIS_PING_EVERY_MS,
      deadlineMs: REDIS_COMMAND_TIMEOUT_MS,
      onSilent: (ms) =>
        report({
          detail: `the connection stopped answering (no answer to PING within ${ms} ms); reconnecting`,
          kind: 'timed out',
        }),
    }),
  );
  const timeout = new Promise<void>((resolve) => setTimeout(resolve, opts.readyTimeoutMs ?? 2000).unref());
  await Promise.race([client.connect().catch(() => {}), timeout]);
  return client;
}

/**
 * What a failure the client reported means. ioredis reports a handshake that fails (its ready
 * check: a proxy that accepts the connection while the Redis behind it is down, or that holds it
 * silent) with the error of the command it sent, "Stream isn't writeable", "Connection is
 * closed." or "Command timed out", each attempt a different one: said as what happened instead,
 * and the same way every attempt, so the log and `/readyz` do not flap between them.
 */
function describeFailure(handshake: boolean, err: Error): Problem {
  const kind = problemKind(err);
  // An answer from Redis itself (a wrong password, a refused command): its words.
  if (err.name === 'ReplyError') return { detail: connectErrorDetail(err), kind };
  if (handshake)
    return kind === 'timed out'
      ? { detail: `connected, but Redis did not answer within ${REDIS_COMMAND_TIMEOUT_MS} ms`, kind }
      : { detail: 'connected, but the connection closed before Redis answered', kind: 'cannot connect' };
  if (/^(Stream isn't writeable|Connection is closed)/.test(err.message))
    return { detail: 'the connection closed', kind: 'cannot connect' };
  return {
    detail: `cannot connect (${connectErrorDetail(err)})`,
    kind: kind === 'unavailable' ? 'cannot connect' : kind,
  };
}

/**
 * Asks `client` every `everyMs` whether it still answers (PING, which Redis also answers on a
 * subscriber connection) and, when no answer comes within `deadlineMs`, destroys its socket so
 * ioredis reconnects (and resubscribes). A connection can stay open while delivering nothing
 * (a frozen proxy, a dropped NAT entry, a failover): without this, commands on it time out one
 * by one and a subscriber on it hears nothing, until the operating system gives up on it, many
 * minutes later. The socket is destroyed, not ended: a FIN on a dead path is never answered
 * either, and ioredis would wait for it. Returns a function that stops the watch.
 */
export function watchSilence(
  client: RedisClient,
  opts: { everyMs: number; deadlineMs: number; onSilent(ms: number): void },
): () => void {
  let asking = false;
  const timer = setInterval(() => {
    if (asking || client.status !== 'ready') return;
    asking = true;
    const stream = client.stream;
    let answered = false;
    const deadline = setTimeout(() => {
      asking = false;
      // Closed or replaced meanwhile: ioredis is already reconnecting.
      if (answered || client.status !== 'ready' || client.stream !== stream) return;
      opts.onSilent(opts.deadlineMs);
      stream.destroy();
    }, opts.deadlineMs);
    deadline.unref();
    client.ping().then(
      () => {
        answered = true;
        asking = false;
        clearTimeout(deadline);
      },
      () => {}, // the deadline decides
    );
  }, opts.everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Why a command on `client` failed, in words for the log of `/readyz`: while the link is down,
 * what the outage is (`cannot connect (ECONNREFUSED 127.0.0.1:6390)`, `connected, but Redis did
 * not answer within 1000 ms`), not the "Stream isn't writeable" that every command gets meanwhile.
 */
export function redisProblem(client: RedisClient, err: unknown): string {
  if (client.status !== 'ready') return problems.get(client)?.detail ?? 'not connected';
  return connectErrorDetail(err);
}

/**
 * `redisProblem` in the words `/readyz` answers anyone with: the kind of failure, without the
 * address or the client's message (those are logged).
 */
export function redisProblemKind(client: RedisClient, err: unknown): string {
  if (client.status !== 'ready') return problems.get(client)?.kind ?? 'not connected';
  return problemKind(err);
}

export async function closeRedis(client: RedisClient): Promise<void> {
  watchers.get(client)?.();
  if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
  else client.disconnect();
}
