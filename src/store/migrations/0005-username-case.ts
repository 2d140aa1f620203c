import { type Kysely, sql } from 'kysely';

/**
 * Usernames unique ignoring letter case (`alice` and `ALICE` were two accounts: impersonation,
 * and sign-in confusion), bound by the database so two instances creating `bob` and `BOB` at
 * the same moment cannot both succeed.
 *
 * A unique index on `lower(username)` alone would fail to build on a database that already holds
 * such names, and merging or renaming accounts here would change who signs in as whom. So the
 * index is on `(lower(username), case_duplicate)`: `case_duplicate` is 0 for every user except
 * the younger ones of names that already differed only in case when this ran, which get their own
 * id. The oldest of each such group keeps 0 and holds the name; every user written from now on has
 * 0 (a rename sets it back, users-repo.ts), so any two of them are bound by the index. The marked
 * users can only go away (deleted, or renamed into the bound set), never appear, so the service's
 * look-up of them before a write (users.ts) is not racy. The start warns naming them
 * (docs/architecture.md, "Accounts and roles").
 *
 * Usernames are ASCII (`[A-Za-z0-9_.@-]`), where `lower` is the same on both databases.
 */
export function usernameCase() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .alterTable('users')
        .addColumn('case_duplicate', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await sql`
        UPDATE users SET case_duplicate = id
        WHERE EXISTS (
          SELECT 1 FROM users AS older
          WHERE lower(older.username) = lower(users.username) AND older.id < users.id
        )`.execute(db);
      await sql`CREATE UNIQUE INDEX users_username_ci ON users (lower(username), case_duplicate)`.execute(db);
    },
  };
}
