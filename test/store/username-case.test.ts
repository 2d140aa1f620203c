import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { UsersRepo } from '../../src/store/users-repo.js';
import { createTestDatabase } from '../helpers/databases.js';
import { migrateBefore } from '../helpers/migrations.js';
import { writeOutcome as refused, userRow as user } from '../helpers/users.js';

describe('usernames unique ignoring case, in the database itself', () => {
  it('refuses a second username that differs only in case, inserted or renamed to', async () => {
    const t = await createTestDatabase();
    const d = openDatabase(t.url);
    try {
      await migrateToLatest(d);
      const users = new UsersRepo(d);
      await users.insert(user('bob'));
      // Straight to the repository: no check of the application's runs before these writes.
      expect(await refused(users.insert(user('BOB')))).toBe('unique violation');
      expect(await refused(users.insert(user('Bob')))).toBe('unique violation');
      const carol = await users.insert(user('carol'));
      expect(await refused(users.update(carol.id, { username: 'bOB' }))).toBe('unique violation');
      // A user's own name in another case is no other user's.
      const bob = (await users.byUsername('bob'))!;
      expect(await refused(users.update(bob.id, { username: 'Bob' }))).toBe('written');
      expect(
        (await d.db.selectFrom('users').select('username').orderBy('id').execute()).map((r) => r.username),
      ).toEqual(['Bob', 'carol']);
    } finally {
      await d.close();
      await t.drop();
    }
  });

  it('migrates a database that already holds case-duplicates: every account kept as it was, new writes bound', async () => {
    const t = await createTestDatabase();
    const d = openDatabase(t.url);
    try {
      // The migrations released before usernames were unique ignoring case (0001-0004).
      await migrateBefore(d, '0005');
      const users = new UsersRepo(d);
      const before = [];
      for (const name of ['alice', 'bob', 'ALICE', 'Alice', 'BOB', 'carol'])
        before.push(await users.insert({ ...user(name), password_hash: `hash of ${name}` }));

      // Later migrations run too; this one is among them.
      expect(await migrateToLatest(d)).toContain('0005-username-case');

      const after = await d.db
        .selectFrom('users')
        .select(['id', 'username', 'password_hash'])
        .orderBy('id')
        .execute();
      expect(after).toEqual(
        before.map((u) => ({ id: u.id, username: u.username, password_hash: u.password_hash })),
      );
      expect((await users.caseDuplicates()).map((g) => g.map((u) => u.username))).toEqual([
        ['alice', 'ALICE', 'Alice'],
        ['bob', 'BOB'],
      ]);
      // The oldest of each group holds its name for the database: another spelling is refused.
      expect(await refused(users.insert(user('aLiCe')))).toBe('unique violation');
      expect(await refused(users.insert(user('bOb')))).toBe('unique violation');
      expect(await refused(users.update(before[5]!.id, { username: 'CAROL' }))).toBe('written');
      expect(await refused(users.insert(user('carol')))).toBe('unique violation');
      // Each exact spelling still finds its own account; another one is none of them.
      expect((await users.byUsername('ALICE'))?.id).toBe(before[2]!.id);
      expect((await users.byUsername('Alice'))?.id).toBe(before[3]!.id);
      expect((await users.byUsername('alice'))?.id).toBe(before[0]!.id);
      expect(await users.byUsername('aLICE')).toBeUndefined();
      expect((await users.byUsername('Carol'))?.id).toBe(before[5]!.id);
      // A second start finds nothing left to migrate, the duplicates still there.
      expect(await migrateToLatest(d)).toEqual([]);
    } finally {
      await d.close();
      await t.drop();
    }
  });
});
