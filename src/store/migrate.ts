import { type MigrationResultSet, Migrator } from 'kysely';
import type { Database } from './database.js';
import { migrationsFor } from './migrations/index.js';

/**
 * Applies pending migrations, all in one transaction with their `mg_migrations` rows (both
 * databases: DDL is transactional on each; on SQLite the dialect says so, database.ts), so a
 * start killed midway leaves the database as it was. On PostgreSQL Kysely's lock serializes
 * concurrent starts; on SQLite the migrator's transaction begins IMMEDIATE and waits for another
 * instance's to commit (sqlite-dialect.ts), then finds nothing left to do. The retry remains for
 * what still fails that way on SQLite (a wait past the busy timeout).
 */
export async function migrateToLatest(database: Database, attempts = 5): Promise<string[]> {
  // PostgreSQL: not under the pool's statement timeout (database.statement_timeout_ms). A migration
  // may rebuild a large table, and a second instance starting meanwhile waits for the first's
  // migration lock as long as that takes; either cancelled midway would stop the start.
  const untimed = database.untimed?.();
  try {
    return await migrate(untimed ?? database, attempts);
  } finally {
    await untimed?.close();
  }
}

async function migrate(database: Database, attempts: number): Promise<string[]> {
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: async () => migrationsFor(database.dialect) },
    migrationTableName: 'mg_migrations',
    migrationLockTableName: 'mg_migrations_lock',
  });
  for (let i = 1; ; i++) {
    const result: MigrationResultSet = await migrator.migrateToLatest();
    if (!result.error)
      return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    if (i >= attempts || database.dialect !== 'sqlite') throw result.error;
    await new Promise((r) => setTimeout(r, 100 * i + Math.random() * 100));
  }
}
