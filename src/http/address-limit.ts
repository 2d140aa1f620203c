import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimiter } from '../access/rate-limit/rate-limiter.js';
import { GatewayError } from '../gateway/errors.js';

/**
 * A per-client-address limit of one route (catalog search, sign-in): `perMinute` hits of
 * `request.ip` a minute under `name`, with `X-RateLimit-*` headers; past it a 429 with
 * `Retry-After` saying what is limited (`what`, e.g. "search is limited to 30 requests").
 */
export async function limitPerAddress(
  rateLimiter: RateLimiter,
  request: FastifyRequest,
  reply: FastifyReply,
  opts: { name: string; perMinute: number; what: string },
): Promise<void> {
  const r = await rateLimiter.hit(`${opts.name}:${request.ip}`, opts.perMinute, 60_000);
  reply.header('x-ratelimit-limit', String(opts.perMinute));
  reply.header('x-ratelimit-remaining', String(r.remaining));
  reply.header('x-ratelimit-reset', String(Math.ceil(r.resetMs / 1000)));
  if (!r.allowed)
    throw new GatewayError(429, `${opts.what} a minute per client; retry in ${r.retryAfterSec}s`, {
      retryAfter: r.retryAfterSec,
    });
}
