import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { UsersRepo } from '../../src/store/users-repo.js';
import { createTestDatabase } from '../helpers/databases.js';
import { migrateBefore } from '../helpers/migrations.js';
import { writeOutcome as refused, userRow } from '../helpers/users.js';

const user = (username: string, email = '') => userRow(username, { email });

describe('emails unique ignoring case, in the database itself', () => {
  it('refuses an email another user has in any case, inserted or changed to; no email collides with nothing', async () => {
    const t = await createTestDatabase();
    const d = openDatabase(t.url);
    try {
      await migrateToLatest(d);
      const users = new UsersRepo(d);
      await users.insert(user('bob', 'bob@example.com'));
      // Straight to the repository: no check of the application's runs before these writes.
      expect(await refused(users.insert(user('bob2', 'Bob@Example.COM')))).toBe('unique violation');
      expect(await refused(users.insert(user('bob3', ' bob@example.com ')))).toBe('unique violation');
      // Unicode case too, the same on both databases (SQLite's lower() folds ASCII only).
      await users.insert(user('zoe', 'zoë@example.com'));
      expect(await refused(users.insert(user('zoe2', 'ZOË@EXAMPLE.COM')))).toBe('unique violation');
      const carol = await users.insert(user('carol', 'carol@example.com'));
      expect(await refused(users.update(carol.id, { email: 'BOB@example.com' }))).toBe('unique violation');
      // A user's own address in another case is no other user's.
      const bob = (await users.byUsername('bob'))!;
      expect(await refused(users.update(bob.id, { email: 'Bob@example.com' }))).toBe('written');
      // No email (empty or blank) is held by nobody.
      for (const name of ['dan', 'erin', 'fay'])
        expect(await refused(users.insert(user(name)))).toBe('written');
      expect(await refused(users.insert(user('gus', '  ')))).toBe('written');
      expect(await refused(users.update(carol.id, { email: '' }))).toBe('written');
      expect(await refused(users.insert(user('carol2', 'carol@example.com')))).toBe('written');
      expect((await users.emailTwin('CAROL@example.com'))?.username).toBe('carol2');
      expect(await users.emailTwin('')).toBeUndefined();
    } finally {
      await d.close();
      await t.drop();
    }
  });

  it('migrates a database that already holds an email twice: every account kept as it was, new writes bound', async () => {
    const t = await createTestDatabase();
    const d = openDatabase(t.url);
    try {
      // The migrations released before emails were unique ignoring case (0001-0005).
      await migrateBefore(d, '0006');
      const rows: Array<[string, string]> = [
        ['alice', 'alice@example.com'],
        ['bob', 'bob@example.com'],
        ['alice2', 'ALICE@example.com'],
        ['nobody', ''],
        ['alice3', 'Alice@Example.com'],
        ['bob2', 'bob@example.com'],
        ['carol', 'carol@example.com'],
        ['nobody2', ''],
      ];
      // As that release wrote them: no email_key column yet.
      const before = [];
      for (const [name, email] of rows)
        before.push(
          await d.db
            .insertInto('users')
            .values(user(name, email))
            .returning(['id', 'username'])
            .executeTakeFirstOrThrow(),
        );
      const id = Object.fromEntries(before.map((u) => [u.username, u.id]));

      expect(await migrateToLatest(d)).toContain('0006-email-case');

      const after = await d.db
        .selectFrom('users')
        .select(['id', 'username', 'email'])
        .orderBy('id')
        .execute();
      expect(after).toEqual(before.map((u, i) => ({ ...u, email: rows[i]![1] })));
      const users = new UsersRepo(d);
      expect((await users.emailDuplicates()).map((g) => g.map((u) => u.username))).toEqual([
        ['alice', 'alice2', 'alice3'],
        ['bob', 'bob2'],
      ]);
      // The oldest of each holds the address for the database: another user cannot take it.
      expect(await refused(users.insert(user('alice4', 'aLiCe@example.com')))).toBe('unique violation');
      expect(await refused(users.update(id.carol!, { email: 'BOB@example.com' }))).toBe('unique violation');
      expect((await users.emailTwin('ALICE@EXAMPLE.COM'))?.id).toBe(id.alice);
      // A marked user given another address is bound like anyone: then it is no duplicate.
      expect(await refused(users.update(id.alice2!, { email: 'alice.two@example.com' }))).toBe('written');
      expect(await refused(users.insert(user('x', 'Alice.Two@example.com')))).toBe('unique violation');
      expect((await users.emailDuplicates()).map((g) => g.map((u) => u.username))).toEqual([
        ['alice', 'alice3'],
        ['bob', 'bob2'],
      ]);
      // A second start finds nothing left to migrate, the duplicates still there.
      expect(await migrateToLatest(d)).toEqual([]);
    } finally {
      await d.close();
      await t.drop();
    }
  });
});
