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

/** A UNIQUE constraint refused the row (PostgreSQL 23505, SQLite's UNIQUE/PRIMARY KEY). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
