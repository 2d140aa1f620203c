import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify';
import { GatewayError } from '../gateway/errors.js';

/**
 * PostgreSQL text cannot hold U+0000, so a NUL in a stored field failed the INSERT as a 500 (on
 * SQLite it was stored). The management API (`/api`, not the `/api/v1` model wire) refuses it
 * up front, on both backends alike, with a 400 naming the field (decisions.md: 400 names the
 * field). Added per route (`onRoute`), so `/v1` requests never run it.
 */
export function guardAgainstNul(routeOptions: RouteOptions): void {
  const url = routeOptions.url;
  if (!url.startsWith('/api/') || url.startsWith('/api/v1/')) return;
  const pre = routeOptions.preValidation;
  routeOptions.preValidation =
    pre === undefined ? refuseNul : [refuseNul, ...(Array.isArray(pre) ? pre : [pre])];
}

function refuseNul(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const where = nulIn(request.query, '') ?? nulIn(request.params, '') ?? nulIn(request.body, '');
  if (where === undefined) done();
  else done(new GatewayError(400, `${where || 'body'}: must not contain NUL (U+0000) characters`));
}

/** The path of the first string (or object key) holding a NUL, or undefined. */
export function nulIn(value: unknown, path: string, depth = 0): string | undefined {
  if (typeof value === 'string') return value.includes('\0') ? path : undefined;
  if (value === null || typeof value !== 'object' || depth > 64) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulIn(value[i], `${path}[${i}]`, depth + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    const at = path ? `${path}.${key}` : key;
    if (key.includes('\0')) return at;
    const found = nulIn((value as Record<string, unknown>)[key], at, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}
