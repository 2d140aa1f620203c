import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimiter } from '../access/rate-limit/rate-limiter.js';
import { GatewayError } from '../gateway/errors.js';

/**
 * A per-client-address limit of one route (catalog search, sign-in): `perMinute` hits of
 * `request.ip` a minute under `name`, with `X-RateLimit-*` headers; past it a 429 with
 * `Retry-After` saying what is limited (`what`, e.g. "search is limited to 30 requests").
 */
export function limitPerAddress(
  rateLimiter: RateLimiter,
  request: FastifyRequest,
  reply: FastifyReply,
  opts: { name: string; perMinute: number; what: string },
): Promise<void> {
  return limitPerMinute(rateLimiter, `${opts.name}:${request.ip}`, reply, {
    perMinute: opts.perMinute,
    what: `${opts.what} a minute per client`,
  });
}

/**
 * `perMinute` hits of `key` a minute (shared through Redis when configured), with
 * `X-RateLimit-*` headers; past it a 429 with `Retry-After`, its message `what` (e.g. "sign-in
 * is limited to 20 attempts a minute per client") and when to retry.
 */
export async function limitPerMinute(
  rateLimiter: RateLimiter,
  key: string,
  reply: FastifyReply,
  opts: { perMinute: number; what: string },
): Promise<void> {
  const r = await rateLimiter.hit(key, opts.perMinute, 60_000);
  reply.header('x-ratelimit-limit', String(opts.perMinute));
  reply.header('x-ratelimit-remaining', String(r.remaining));
  reply.header('x-ratelimit-reset', String(Math.ceil(r.resetMs / 1000)));
  if (!r.allowed)
    throw new GatewayError(429, `${opts.what}; retry in ${r.retryAfterSec}s`, {
      retryAfter: r.retryAfterSec,
    });
}
