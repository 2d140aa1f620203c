import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeysRepo } from '../../src/store/api-keys-repo.js';
import { type Database, openDatabase } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { createUsageStore } from '../../src/store/usage-store.js';
import { UsersRepo } from '../../src/store/users-repo.js';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/databases.js';

/**
 * Deleting a user locks its row and then (ON DELETE CASCADE) its keys; settlements, reservations
 * and an admin's hand-back of a key lock the key and then its owner. On PostgreSQL the two orders
 * met in a deadlock (SQLSTATE 40P01), and one side failed: the admin's delete (a 500) or the
 * settlement batch. Each round here holds the other side's first lock on a second connection
 * with the statements it runs, waits until the delete is blocked, then takes the second lock:
 * with one lock order the delete just waits its turn. SQLite has one writer: the same writes,
 * one after the other, must still do what they did.
 */
describe('deleting a user while its key or row is being written', () => {
  let t: TestDatabase;
  let a: Database;
  let users: UsersRepo;
  let keys: ApiKeysRepo;
  let other: pg.Client | undefined;
  let n = 0;

  beforeAll(async () => {
    t = await createTestDatabase();
    a = openDatabase(t.url);
    await migrateToLatest(a);
    users = new UsersRepo(a);
    keys = new ApiKeysRepo(a);
    await users.insert(person('root', 100));
    if (onPostgres) {
      other = new pg.Client({ connectionString: t.url });
      await other.connect();
    }
  });
  afterAll(async () => {
    await other?.end();
    await a.close();
    await t.drop();
  });

  function person(username: string, role = 10) {
    return {
      username,
      password_hash: 'x',
      display_name: '',
      email: '',
      role,
      status: 1,
      default_model: '',
      quota_limit_micros: null,
      created_time: 1,
      updated_time: 1,
    };
  }

  /** A user with two keys (the delete's cascade takes both). */
  async function member() {
    n++;
    const u = await users.insert(person(`m${n}`));
    const k = [];
    for (const s of ['a', 'b'])
      k.push(
        await keys.insert({
          user_id: u.id,
          name: s,
          key_hash: `h${n}${s}`,
          key_prefix: 'sk-',
          status: 1,
          created_time: 1,
          updated_time: 1,
        }),
      );
    return { user: u, keys: k };
  }

  /** Resolves once a statement of another connection to this database waits for a lock. */
  async function someoneWaits(): Promise<void> {
    for (let i = 0; i < 500; i++) {
      const r = await other!.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`,
      );
      if (r.rows[0].n > 0) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error('the delete never waited for a lock');
  }

  /**
   * `first` on the other connection (in a transaction), then `write`, then, once it waits,
   * `second` and COMMIT. Both must succeed; `write`'s result.
   */
  async function race(first: string[], second: string[], write: () => Promise<unknown>): Promise<unknown> {
    const c = other!;
    await c.query('BEGIN');
    let written: Promise<unknown> | undefined;
    try {
      for (const q of first) await c.query(q);
      written = write();
      written.catch(() => {});
      await someoneWaits();
      for (const q of second) await c.query(q);
      await c.query('COMMIT');
    } catch (err) {
      await c.query('ROLLBACK');
      await written?.catch(() => {});
      throw err;
    }
    return written;
  }

  /** `race` with the delete of user `userId`: it succeeds, and the user and its keys are gone. */
  async function raceDelete(first: string[], second: string[], userId: number): Promise<void> {
    expect(await race(first, second, () => users.deleteKeepingARoot(userId, 100))).toBe(true);
    expect(await users.byId(userId)).toBeUndefined();
    expect((await keys.list({ userId }, 0, 10)).total).toBe(0);
  }

  it.runIf(onPostgres)(
    'a settlement batch (keys, then users, in id order) and the delete both commit',
    async () => {
      for (let round = 0; round < 3; round++) {
        const m = await member();
        const [k1, k2] = m.keys.map((k) => k.id);
        // As spendText writes them (usage-store.ts): keys, then users, each in id order.
        await raceDelete(
          [
            `UPDATE api_keys SET quota_used_micros = LEAST(quota_used_micros + 5, 9007199254740991) WHERE id = ${k1}`,
            `UPDATE api_keys SET quota_used_micros = LEAST(quota_used_micros + 5, 9007199254740991) WHERE id = ${k2}`,
          ],
          [
            `UPDATE users SET quota_used_micros = LEAST(quota_used_micros + 10, 9007199254740991) WHERE id = ${m.user.id}`,
          ],
          m.user.id,
        );
      }
    },
  );

  it.runIf(onPostgres)('a reservation (key, then user) and the delete both commit', async () => {
    const m = await member();
    await raceDelete(
      [`SELECT 1 FROM api_keys WHERE id = ${m.keys[1]!.id} FOR UPDATE`],
      [`SELECT 1 FROM users WHERE id = ${m.user.id} FOR UPDATE`],
      m.user.id,
    );
  });

  it.runIf(onPostgres)(
    "an admin's hand-back of a key (key, then owner) and the delete both commit",
    async () => {
      const m = await member();
      // As ApiKeysRepo.updateIf with a 'release' mark: the key, then its owner locked and unmarked.
      await raceDelete(
        [`UPDATE api_keys SET admin_hold = 0 WHERE id = ${m.keys[0]!.id}`],
        [
          `SELECT id FROM users WHERE id = ${m.user.id} FOR UPDATE`,
          `UPDATE users SET keys_admin_managed = 0 WHERE id = ${m.user.id}`,
        ],
        m.user.id,
      );
    },
  );

  it.runIf(onPostgres)(
    'a settlement of the user and of a root with a higher id, and the delete, both commit',
    async () => {
      // keepingARoot locks the enabled roots; a batch locks users in id order. A member older
      // than a root: the batch holds the member and waits for the root.
      const m = await member();
      const root = await users.insert(person(`r${n}`, 100));
      expect(root.id).toBeGreaterThan(m.user.id);
      await raceDelete(
        [`UPDATE users SET quota_used_micros = quota_used_micros + 1 WHERE id = ${m.user.id}`],
        [`UPDATE users SET quota_used_micros = quota_used_micros + 1 WHERE id = ${root.id}`],
        m.user.id,
      );
    },
  );

  it.runIf(onPostgres)(
    'a settlement of the user and of a root with a higher id, and a disable ending sessions, both commit',
    async () => {
      const m = await member();
      const root = await users.insert(person(`r${n}`, 100));
      const row = await race(
        [`UPDATE users SET quota_used_micros = quota_used_micros + 1 WHERE id = ${m.user.id}`],
        [`UPDATE users SET quota_used_micros = quota_used_micros + 1 WHERE id = ${root.id}`],
        () => users.updateKeepingARoot(m.user.id, { status: 2 }, 100, {}),
      );
      expect(row).toMatchObject({ id: m.user.id, status: 2 });
    },
  );

  it.runIf(onPostgres)(
    'a key being created for the user (its owner marked) and the delete both commit',
    async () => {
      const m = await member();
      // As ApiKeysRepo.insert with a 'mark': the key (its owner's row key-shared), then the owner.
      await raceDelete(
        [
          `INSERT INTO api_keys (user_id, name, key_hash, key_prefix, created_time, updated_time) VALUES (${m.user.id}, 'c', 'h${n}c', 'sk-', 1, 1)`,
        ],
        [`UPDATE users SET keys_admin_managed = 1 WHERE id = ${m.user.id}`],
        m.user.id,
      );
    },
  );

  it('the real writes, at the same moment, all commit (any database)', async () => {
    const b: Database = onPostgres ? openDatabase(t.url) : a;
    const store = createUsageStore(b);
    const repoB = new ApiKeysRepo(b);
    try {
      for (let round = 0; round < 10; round++) {
        const m = await member();
        const [k1, k2] = m.keys;
        await keys.update(k1!.id, { admin_hold: 1 });
        const results = await Promise.allSettled([
          users.deleteKeepingARoot(m.user.id),
          store.write([], {
            keys: new Map([
              [k1!.id, 3],
              [k2!.id, 4],
            ]),
            users: new Map([[m.user.id, 7]]),
          }),
          store.reserve(k2!.id, m.user.id, 1),
          repoB.updateIf(k1!.id, { admin_hold: 0 }, { admin_hold: 1 }, { id: m.user.id, mark: 'release' }),
        ]);
        for (const r of results)
          expect(r.status === 'rejected' ? String(r.reason) : 'ok', `round ${round}`).toBe('ok');
        expect(await users.byId(m.user.id)).toBeUndefined();
      }
    } finally {
      if (b !== a) await b.close();
    }
  });
});
