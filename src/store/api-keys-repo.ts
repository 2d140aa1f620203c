import type { CompiledQuery, Insertable, Selectable, Updateable } from 'kysely';
import type { Database } from './database.js';
import { touchLastUsed } from './last-used.js';
import { writeWithFollowUps } from './one-transaction.js';
import type { ApiKeysTable } from './schema.js';

export type ApiKeyRow = Selectable<ApiKeysTable>;

/**
 * What a key write does to its owner's `users.keys_admin_managed` (src/access/api-keys.ts), in
 * the same transaction: `mark` sets it; `release` clears it when none of the owner's keys is held
 * any more (an admin handed back the last one).
 */
export type OwnerMark = 'mark' | 'release';

export class ApiKeysRepo {
  constructor(private readonly d: Database) {}

  byId(id: number): Promise<ApiKeyRow | undefined> {
    return this.d.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  }

  byHash(hash: string): Promise<ApiKeyRow | undefined> {
    return this.d.db.selectFrom('api_keys').selectAll().where('key_hash', '=', hash).executeTakeFirst();
  }

  /** A new key; with `owner`, its owner's mark changes with it, all or none. */
  async insert(row: Insertable<ApiKeysTable>, owner?: OwnerMark): Promise<ApiKeyRow> {
    const q = this.d.db.insertInto('api_keys').values(row).returningAll();
    if (!owner) return q.executeTakeFirstOrThrow();
    const inserted = await writeWithFollowUps(this.d, q.compile(), this.ownerMark(row.user_id, owner));
    if (!inserted) throw new Error('api key insert returned no row');
    return inserted;
  }

  update(id: number, patch: Updateable<ApiKeysTable>): Promise<ApiKeyRow | undefined> {
    return this.d.db
      .updateTable('api_keys')
      .set(patch)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
  }

  /**
   * `update`, only while the columns in `expected` still hold what they were read as (null
   * included): a write computed from a row another instance changed meanwhile is not written
   * over it (undefined then, as for a missing key).
   */
  updateIf(
    id: number,
    patch: Updateable<ApiKeysTable>,
    expected: Partial<Record<keyof ApiKeyRow, string | number | null>>,
    owner?: { id: number; mark: OwnerMark },
  ): Promise<ApiKeyRow | undefined> {
    let q = this.d.db.updateTable('api_keys').set(patch).where('id', '=', id);
    for (const [column, value] of Object.entries(expected) as Array<
      [keyof ApiKeyRow, string | number | null]
    >)
      q = value === null ? q.where(column, 'is', null) : q.where(column, '=', value);
    if (!owner) return q.returningAll().executeTakeFirst();
    return writeWithFollowUps(this.d, q.returningAll().compile(), this.ownerMark(owner.id, owner.mark));
  }

  /**
   * The statements that follow a key write to change its owner's mark. On PostgreSQL both take
   * the user's row lock, after the key's (the order settlements take them in): a `mark` always
   * writes the row, and a `release` locks it before it looks for a held key, with a statement
   * that starts after the lock, so it sees a hold another admin committed meanwhile (without
   * the lock, both could commit: one key held, its owner unmarked).
   */
  private ownerMark(userId: number, mark: OwnerMark): CompiledQuery[] {
    const db = this.d.db;
    if (mark === 'mark')
      return [db.updateTable('users').set({ keys_admin_managed: 1 }).where('id', '=', userId).compile()];
    const release = db
      .updateTable('users')
      .set({ keys_admin_managed: 0 })
      .where('id', '=', userId)
      .where('keys_admin_managed', '<>', 0)
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('api_keys')
              .select('api_keys.id')
              .where('api_keys.user_id', '=', userId)
              .where('api_keys.admin_hold', '>', 0),
          ),
        ),
      )
      .compile();
    if (this.d.dialect !== 'postgres') return [release];
    return [db.selectFrom('users').select('id').where('id', '=', userId).forUpdate().compile(), release];
  }

  /** Records a use of the key (store/last-used.ts). */
  touch(id: number, now: number): Promise<void> {
    return touchLastUsed(this.d.db, 'api_keys', id, now);
  }

  async delete(id: number): Promise<boolean> {
    const r = await this.d.db.deleteFrom('api_keys').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async list(
    filter: { userId?: number; ids?: number[] },
    offset: number,
    limit: number,
  ): Promise<{ rows: ApiKeyRow[]; total: number }> {
    let q = this.d.db.selectFrom('api_keys');
    if (filter.userId !== undefined) q = q.where('user_id', '=', filter.userId);
    if (filter.ids !== undefined) q = q.where('id', 'in', filter.ids);
    const [rows, total] = await Promise.all([
      q.selectAll().orderBy('id', 'desc').offset(offset).limit(limit).execute(),
      q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(total.n) };
  }
}
