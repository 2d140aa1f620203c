import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Database } from './database.js';
import { touchLastUsed } from './last-used.js';
import type { ApiKeysTable } from './schema.js';

export type ApiKeyRow = Selectable<ApiKeysTable>;

export class ApiKeysRepo {
  constructor(private readonly d: Database) {}

  byId(id: number): Promise<ApiKeyRow | undefined> {
    return this.d.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  }

  byHash(hash: string): Promise<ApiKeyRow | undefined> {
    return this.d.db.selectFrom('api_keys').selectAll().where('key_hash', '=', hash).executeTakeFirst();
  }

  insert(row: Insertable<ApiKeysTable>): Promise<ApiKeyRow> {
    return this.d.db.insertInto('api_keys').values(row).returningAll().executeTakeFirstOrThrow();
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
  ): Promise<ApiKeyRow | undefined> {
    let q = this.d.db.updateTable('api_keys').set(patch).where('id', '=', id);
    for (const [column, value] of Object.entries(expected) as Array<
      [keyof ApiKeyRow, string | number | null]
    >)
      q = value === null ? q.where(column, 'is', null) : q.where(column, '=', value);
    return q.returningAll().executeTakeFirst();
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
