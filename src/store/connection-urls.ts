/**
 * What `database.url` and `redis.url` may be, checked when the configuration loads: a value that
 * starts like a URL (`<scheme>://`) of another scheme was read as a SQLite file path (folders
 * named after the URL, its password included, and an empty database) or as a Redis socket path.
 * The messages never hold the value: it may carry a password.
 */

/** `<scheme>://` at the start of a value, the scheme in lowercase; undefined when there is none. */
export function urlScheme(value: string): string | undefined {
  return /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(value)?.[1]?.toLowerCase();
}

/** PostgreSQL's two URL schemes, or `sqlite://` before a path (src/store/database.ts). */
const DATABASE_SCHEMES = new Set(['postgres', 'postgresql', 'sqlite']);

/** Why the gateway cannot open this database; undefined when it can (a URL it knows, or a path). */
export function databaseUrlProblem(url: string): string | undefined {
  const scheme = urlScheme(url);
  if (scheme === undefined || DATABASE_SCHEMES.has(scheme)) return undefined;
  return `${scheme}:// is not a database the gateway opens; use a postgres:// or postgresql:// URL, or a SQLite file path`;
}

const REDIS_FORMS = 'use a redis:// or rediss:// (TLS) URL, or a unix socket path';

/**
 * Why ioredis would not connect where this says; undefined for none (Redis off), a redis:// or
 * rediss:// URL, or a value that is no URL (a socket path, which ioredis takes as one).
 */
export function redisUrlProblem(url: string): string | undefined {
  const scheme = urlScheme(url);
  if (scheme === undefined) return undefined;
  if (scheme !== 'redis' && scheme !== 'rediss') return `${scheme}:// is not a Redis URL; ${REDIS_FORMS}`;
  // ioredis's `new URL` would throw at start, its message holding the value.
  if (!URL.canParse(url)) return `not a valid URL; ${REDIS_FORMS}`;
  return undefined;
}
