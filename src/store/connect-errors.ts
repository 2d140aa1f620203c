/**
 * Operator-facing words for a failed connection to the database or Redis. Connection URLs may
 * carry a password: it never leaves these helpers.
 */

/**
 * `url` with its password removed (`postgres://user@host:5432/db`); a SQLite file path as it is.
 */
export function urlWithoutPassword(url: string): string {
  if (!url.includes('://')) return url;
  try {
    const u = new URL(url);
    if (u.password) u.password = '';
    return u.toString();
  } catch {
    return scrubPasswords(url);
  }
}

/**
 * The system error's code and the address it concerns (`ECONNREFUSED 127.0.0.1:6390`,
 * `ENOTFOUND bad-host`, `ETIMEDOUT`), else the error's message with any URL password removed.
 * Node reports a refused `localhost` as an AggregateError of one error per address: the first
 * is named.
 */
export function connectErrorDetail(err: unknown): string {
  const e = err as {
    code?: unknown;
    address?: unknown;
    port?: unknown;
    hostname?: unknown;
    message?: unknown;
    errors?: unknown[];
  };
  if (!e || typeof e !== 'object') return String(err);
  if (typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code)) {
    const first = Array.isArray(e.errors) ? (e.errors[0] as typeof e | undefined) : undefined;
    const at = first && first.code === e.code ? first : e;
    const where =
      typeof at.address === 'string'
        ? `${at.address}${at.port !== undefined ? `:${at.port}` : ''}`
        : typeof at.hostname === 'string'
          ? at.hostname
          : '';
    return where ? `${e.code} ${where}` : e.code;
  }
  return scrubPasswords(typeof e.message === 'string' ? e.message : String(err));
}

/** Passwords of any `scheme://user:password@` in `text`, removed. */
export function scrubPasswords(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/[^:/@\s]*):[^@\s]*@/gi, '$1@');
}

/** System error codes of a connection that could not be made or was lost. */
const CANNOT_CONNECT = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EPIPE',
  'ECONNABORTED',
]);

/**
 * What kind of failure `err` is, in a few words and nothing else (`cannot connect`, `timed out`,
 * `authentication failed`, else `unavailable`): for answers anyone may read (`/readyz`), where an
 * address or a driver's message would describe the network behind the gateway. The detail
 * (`connectErrorDetail`) goes to the log.
 */
export function problemKind(err: unknown): string {
  const e = (err ?? {}) as { code?: unknown; message?: unknown; errors?: unknown[] };
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  if (code === 'ETIMEDOUT' || /\btime(d)?[ -]?out\b/i.test(message)) return 'timed out';
  if (CANNOT_CONNECT.has(code)) return 'cannot connect';
  // PostgreSQL's invalid authorization (28000) and invalid password (28P01); Redis's NOAUTH/WRONGPASS.
  if (code.startsWith('28') || /^(NOAUTH|WRONGPASS)\b/.test(message)) return 'authentication failed';
  return 'unavailable';
}
