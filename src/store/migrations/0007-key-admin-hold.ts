import type { Kysely } from 'kysely';

/**
 * `api_keys.admin_hold`: whether an admin holds the key's limits (docs/architecture.md, "Keys an
 * admin manages"). 0: the owner's own key; 1: an admin created or changed the key of another
 * user, whose owner may tighten its limits but not loosen them; 2: the same, and an admin
 * disabled it, so its owner cannot enable it again. Existing keys start at 0: who made them was
 * not recorded.
 */
export function keyAdminHold() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .alterTable('api_keys')
        .addColumn('admin_hold', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  };
}
