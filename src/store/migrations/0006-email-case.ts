import { type Kysely, sql } from 'kysely';
import { emailKey } from '../email-key.js';

/**
 * Emails unique ignoring letter case where set (`bob@example.com` and `Bob@Example.com` were two
 * accounts' addresses), bound by the database so two instances writing the same address at the
 * same moment cannot both succeed. No email (empty) collides with nothing.
 *
 * The index is on `email_key` (email-key.ts: the application's own folding, the same on both
 * databases; NULL for no email, and NULLs never collide) and `email_duplicate`, as migration 0005
 * did for usernames: a unique index alone would fail to build on a database that already holds
 * an address twice, and clearing or changing users' addresses here would change their accounts
 * behind their backs. So `email_duplicate` is 0 for every user except the younger ones of an
 * address already held by an older user when this ran, which get their own id; every email
 * written from now on has 0 (users-repo.ts), so any two of them are bound by the index. The
 * marked users can only go away (deleted, or given another address), never appear, so the
 * service's look-up of them before a write is not racy. Starts warn naming them.
 */
export function emailCase() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('users').addColumn('email_key', 'text').execute();
      await db.schema
        .alterTable('users')
        .addColumn('email_duplicate', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      const rows: Array<{ id: number; email: string }> = await db
        .selectFrom('users')
        .select(['id', 'email'])
        .where('email', '<>', '')
        .orderBy('id')
        .execute();
      const held = new Set<string>();
      for (const r of rows) {
        const key = emailKey(r.email);
        if (key === null) continue;
        const younger = held.has(key);
        held.add(key);
        await db
          .updateTable('users')
          .set({ email_key: key, email_duplicate: younger ? r.id : 0 })
          .where('id', '=', r.id)
          .execute();
      }
      await sql`CREATE UNIQUE INDEX users_email_ci ON users (email_key, email_duplicate)`.execute(db);
    },
  };
}
