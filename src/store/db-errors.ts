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
