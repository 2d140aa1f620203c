// Telling database errors apart on both dialects (pg SQLSTATE codes, better-sqlite3 codes).

/**
 * Whether the database refused a statement for the data it carried (PostgreSQL SQLSTATE class 22
 * "data exception" or 23 "integrity constraint violation"; SQLite's constraint, type and size
 * errors), as opposed to being unreachable or failing: sending the same data again cannot succeed.
 */
export function isRefusedData(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  if (code.startsWith('SQLITE_')) return /^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG|RANGE)/.test(code);
  return code.length === 5 && (code.startsWith('22') || code.startsWith('23'));
}

/**
 * The database did not answer in time (PostgreSQL): a statement cancelled by `statement_timeout`
 * or `lock_timeout` (SQLSTATE 57014 query_canceled, 55P03 lock_not_available), or no pool
 * connection within `connectionTimeoutMillis` (pg-pool's and pg's own messages, no code). Worth
 * retrying later; the request that met it is a 503 (src/http/error-handler.ts).
 */
export function isDatabaseTimeout(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e?.code === '57014' || e?.code === '55P03') return true;
  return (
    err instanceof Error &&
    e?.code === undefined &&
    (err.message === 'timeout exceeded when trying to connect' ||
      err.message === 'Connection terminated due to connection timeout')
  );
}

/** A UNIQUE constraint refused the row (PostgreSQL 23505, SQLite's UNIQUE/PRIMARY KEY). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/**
 * A FOREIGN KEY constraint refused the row (PostgreSQL 23503, SQLite's FOREIGNKEY): the row it
 * points at (a user) was deleted after it was read, by another request or instance.
 */
export function isForeignKeyViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/** Node's socket errors on the way to the database server. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** pg's own messages for a connection that broke or was never usable (they carry no code). */
const PG_GONE = /^(Connection terminated|Client has encountered a connection error|Client was closed)/;

/**
 * The database cannot serve now: its server is unreachable or went away (refused, reset, a
 * connection cut mid-query; SQLSTATE class 08, 57P01-57P03 shutting down or starting, 53300 too
 * many connections), or SQLite is locked past its busy timeout or its disk is full. Worth
 * retrying later: the request that met it is a 503, not a 500 (src/http/error-handler.ts).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = e?.code;
  if (typeof code === 'string') {
    if (SOCKET_CODES.has(code)) return true;
    if (code.startsWith('SQLITE_')) return /^SQLITE_(BUSY|FULL)/.test(code);
    return code.length === 5 && (code.startsWith('08') || /^57P0[123]$/.test(code) || code === '53300');
  }
  return err instanceof Error && PG_GONE.test(err.message);
}
