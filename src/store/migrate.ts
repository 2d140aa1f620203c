import { type MigrationResultSet, Migrator } from 'kysely';
import type { Database } from './database.js';
import { migrationsFor } from './migrations/index.js';

/** Applies pending migrations. Kysely's migration lock makes concurrent starts safe. */
export async function migrateToLatest(database: Database): Promise<string[]> {
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: async () => migrationsFor(database.dialect) },
    migrationTableName: 'mg_migrations',
    migrationLockTableName: 'mg_migrations_lock',
  });
  const result: MigrationResultSet = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
