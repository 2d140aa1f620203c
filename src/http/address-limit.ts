import type { FastifyReply, FastifyRequest } from 'fastify';
import { addressKey } from '../access/rate-limit/address-key.js';
import type { RateLimiter } from '../access/rate-limit/rate-limiter.js';
import { GatewayError } from '../gateway/errors.js';

/**
 * The limits a route checks itself (catalog search and sign-in per client address, `/api`
 * writes per user), as `modelgate_rate_limit_rejections_total` names their scope.
 */
export type RouteLimitScope = 'search_ip' | 'login_ip' | 'api_write_user';

/**
 * The 429s `limitPerMinute` threw, with their scope: the metrics count them from the error as
 * it is answered, so the routes and `requireUser` need no handle on the metrics.
 */
const refusals = new WeakMap<object, RouteLimitScope>();

/** The scope of a refusal `limitPerMinute` threw (undefined for any other error). */
export function routeLimitRefusal(err: unknown): RouteLimitScope | undefined {
  return typeof err === 'object' && err !== null ? refusals.get(err) : undefined;
}

/**
 * A per-client-address limit of one route (catalog search, sign-in): `perMinute` hits of the
 * client (`request.ip`; an IPv6 client by its /64, `addressKey`) a minute under `name`, with
 * `X-RateLimit-*` headers; past it a 429 with `Retry-After` saying what is limited (`what`, e.g.
 * "search is limited to 30 requests").
 */
export function limitPerAddress(
  rateLimiter: RateLimiter,
  request: FastifyRequest,
  reply: FastifyReply,
  opts: { name: string; scope: RouteLimitScope; perMinute: number; what: string },
): Promise<void> {
  return limitPerMinute(rateLimiter, `${opts.name}:${addressKey(request.ip)}`, reply, {
    scope: opts.scope,
    perMinute: opts.perMinute,
    what: `${opts.what} a minute per client`,
  });
}

/**
 * `perMinute` hits of `key` a minute (shared through Redis when configured), with
 * `X-RateLimit-*` headers; past it a 429 with `Retry-After`, its message `what` (e.g. "sign-in
 * is limited to 20 attempts a minute per client") and when to retry, counted under `scope`. The
 * body names the limit as the `/v1` refusals do (`metadata: {scope, limit}`), so a script can tell
 * the sign-in limit from the write limit without reading the message.
 */
export async function limitPerMinute(
  rateLimiter: RateLimiter,
  key: string,
  reply: FastifyReply,
  opts: { scope: RouteLimitScope; perMinute: number; what: string },
): Promise<void> {
  const r = await rateLimiter.hit(key, opts.perMinute, 60_000);
  reply.header('x-ratelimit-limit', String(opts.perMinute));
  reply.header('x-ratelimit-remaining', String(r.remaining));
  reply.header('x-ratelimit-reset', String(Math.ceil(r.resetMs / 1000)));
  if (r.allowed) return;
  const refused = new GatewayError(429, `${opts.what}; retry in ${r.retryAfterSec}s`, {
    retryAfter: r.retryAfterSec,
    metadata: { scope: opts.scope, limit: opts.perMinute },
  });
  refusals.set(refused, opts.scope);
  throw refused;
}
