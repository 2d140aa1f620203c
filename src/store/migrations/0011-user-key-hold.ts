import type { Kysely } from 'kysely';

/**
 * `users.keys_admin_managed`: an admin manages the user's API keys (docs/architecture.md, "New
 * keys of a user whose keys an admin manages"). 1 once an admin created or held a key of theirs
 * (kept when that key is deleted), until an admin clears it; a user so marked below root gets
 * new keys from an admin only. Existing users start at 0, their held keys binding as before.
 */
export function userKeyHold() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .alterTable('users')
        .addColumn('keys_admin_managed', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  };
}
