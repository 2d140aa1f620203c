import { Migrator } from 'kysely';
import type { Database } from '../../src/store/database.js';
import { migrationsFor } from '../../src/store/migrations/index.js';

/**
 * Migrates `d` as a release before migration `first` (e.g. '0006') left it: every migration whose
 * name sorts below `first`, recorded in the gateway's own migration table, so a later
 * `migrateToLatest` runs `first` and what follows it as an upgrade would.
 */
export async function migrateBefore(d: Database, first: string): Promise<void> {
  const before = Object.fromEntries(
    Object.entries(migrationsFor(d.dialect)).filter(([name]) => name < first),
  );
  const r = await new Migrator({
    db: d.db,
    provider: { getMigrations: async () => before },
    migrationTableName: 'mg_migrations',
    migrationLockTableName: 'mg_migrations_lock',
  }).migrateToLatest();
  if (r.error) throw r.error;
}
