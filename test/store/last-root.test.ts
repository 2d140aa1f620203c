import { describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { UsersRepo } from '../../src/store/users-repo.js';
import { createTestDatabase, onPostgres } from '../helpers/databases.js';

/**
 * Two roots disabling (or deleting) each other at the same moment, from two instances on
 * PostgreSQL: one of them must be refused, whatever the timing, so an enabled root always
 * remains. (SQLite serves one instance; there both writes go through its one connection.)
 */
describe('the last enabled root', () => {
  it('survives two roots disabling or deleting each other at once', async () => {
    const t = await createTestDatabase();
    const a = openDatabase(t.url);
    const b: Database = onPostgres ? openDatabase(t.url) : a;
    try {
      await migrateToLatest(a);
      const ra = new UsersRepo(a);
      const rb = new UsersRepo(b);
      const root = (username: string) => ({
        username,
        password_hash: 'x',
        display_name: '',
        email: '',
        role: 100,
        status: 1,
        default_model: '',
        quota_limit_micros: 0,
        created_time: 1,
        updated_time: 1,
      });
      for (let round = 0; round < 30; round++) {
        await a.db.deleteFrom('users').execute();
        const x = await ra.insert(root(`x${round}`));
        const y = await ra.insert(root(`y${round}`));
        const results =
          round % 3 === 2
            ? await Promise.all([ra.deleteKeepingARoot(x.id), rb.deleteKeepingARoot(y.id)])
            : await Promise.all([
                ra.updateKeepingARoot(x.id, { status: 2 }),
                rb.updateKeepingARoot(y.id, round % 3 === 0 ? { status: 2 } : { role: 10 }),
              ]);
        const refused = results.filter((r) => r === 'last-root').length;
        expect(refused, `round ${round}`).toBe(1);
        const enabledRoots = await a.db
          .selectFrom('users')
          .select('id')
          .where('role', '>=', 100)
          .where('status', '=', 1)
          .execute();
        expect(enabledRoots, `round ${round}`).toHaveLength(1);
      }
      // A disabled or demoted root, or a plain user, is not guarded.
      await a.db.deleteFrom('users').execute();
      const only = await ra.insert(root('only'));
      const off = await ra.insert({ ...root('off'), status: 2 });
      expect(await ra.updateKeepingARoot(only.id, { status: 2 })).toBe('last-root');
      expect(await ra.deleteKeepingARoot(off.id)).toBe(true);
      expect(await ra.updateKeepingARoot(999_999, { status: 2 })).toBeUndefined();
      expect(await ra.deleteKeepingARoot(999_999)).toBe(false);
    } finally {
      if (b !== a) await b.close();
      await a.close();
      await t.drop();
    }
  });
});
