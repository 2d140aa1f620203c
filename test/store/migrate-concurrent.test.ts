import { type Kysely, Migrator, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { createTestDatabase } from '../helpers/databases.js';

describe('migrations', () => {
  it('two instances migrating one fresh database at once both succeed', async () => {
    const t = await createTestDatabase();
    const a = openDatabase(t.url);
    const b = openDatabase(t.url);
    try {
      await Promise.all([migrateToLatest(a), migrateToLatest(b)]);
      const users = await a.db.selectFrom('users').selectAll().execute();
      expect(users).toEqual([]);
      // A second run finds nothing pending.
      expect(await migrateToLatest(b)).toEqual([]);
    } finally {
      await a.close();
      await b.close();
      await t.drop();
    }
  });

  it('two instances migrating one fresh database at once both succeed on their first attempt', async () => {
    // On SQLite the second migrator's transaction waits for the first's to commit, then finds
    // nothing pending. Before, it began deferred, read, and failed at once with "database is
    // locked" when it tried to write (SQLite does not wait to upgrade such a read), and only the
    // retry in migrateToLatest saved the start.
    const t = await createTestDatabase();
    const a = openDatabase(t.url);
    const b = openDatabase(t.url);
    try {
      const [ranA, ranB] = await Promise.all([migrateToLatest(a, 1), migrateToLatest(b, 1)]);
      expect([ranA.length + ranB.length, Math.min(ranA.length, ranB.length)]).toEqual([
        Math.max(ranA.length, ranB.length),
        0,
      ]);
      expect(await migrateToLatest(a, 1)).toEqual([]);
    } finally {
      await a.close();
      await b.close();
      await t.drop();
    }
  });

  it('a migration that fails midway leaves nothing behind: its tables and its row go together', async () => {
    const t = await createTestDatabase();
    const d = openDatabase(t.url);
    try {
      const migrator = new Migrator({
        db: d.db,
        provider: {
          getMigrations: async () => ({
            '0001-half': {
              async up(db: Kysely<any>) {
                await db.schema.createTable('half_done').addColumn('id', 'integer').execute();
                // Killed here, as a start stopped mid-migration.
                await sql`SELECT no_such_function()`.execute(db);
              },
            },
          }),
        },
        migrationTableName: 'mg_test_migrations',
        migrationLockTableName: 'mg_test_migrations_lock',
      });
      const r = await migrator.migrateToLatest();
      expect(r.error).toBeDefined();
      const tables = d.sqlite
        ? d.sqlite.prepare(`SELECT name FROM sqlite_master WHERE name = 'half_done'`).all()
        : (await sql`SELECT tablename AS name FROM pg_tables WHERE tablename = 'half_done'`.execute(d.db))
            .rows;
      expect(tables).toEqual([]);
    } finally {
      await d.close();
      await t.drop();
    }
  });
});
