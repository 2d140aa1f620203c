/**
 * What makes two emails the same address for uniqueness (migration 0006): the address without
 * the spaces around it, in Unicode NFC, lower-cased (`Bob@Example.COM` is `bob@example.com`);
 * null for none (empty or blank), which collides with nothing.
 *
 * Computed here, not by SQL's `lower()`: SQLite's folds ASCII only, PostgreSQL's folds by the
 * database's locale, so an index on `lower(email)` would bind different addresses on each (and
 * on two PostgreSQL servers). `users.email_key` holds this, written by the repository with every
 * email; changing it needs a migration that rewrites that column.
 */
export function emailKey(email: string): string | null {
  const key = email.trim().normalize('NFC').toLowerCase();
  return key === '' ? null : key;
}
