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
});
