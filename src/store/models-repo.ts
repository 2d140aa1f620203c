import type { Selectable } from 'kysely';
import type { Database } from './database.js';
import type { ModelsTable } from './schema.js';

export type ModelRow = Selectable<ModelsTable>;

/** Admin model entries (`data` is the JSON entry as sent, normalized). */
export class ModelsRepo {
  constructor(private readonly d: Database) {}

  all(): Promise<ModelRow[]> {
    return this.d.db.selectFrom('models').selectAll().orderBy('id').execute();
  }

  byId(id: string): Promise<ModelRow | undefined> {
    return this.d.db.selectFrom('models').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * Writes `data` if the row still holds `expected` (undefined: only if there is no row yet);
   * false when another write came first, so a read-merge-write loses no one's change.
   */
  async swap(id: string, expected: string | undefined, data: string, now: number): Promise<boolean> {
    if (expected === undefined) {
      const r = await this.d.db
        .insertInto('models')
        .values({ id, data, updated_time: now })
        .onConflict((oc) => oc.column('id').doNothing())
        .executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
    }
    const r = await this.d.db
      .updateTable('models')
      .set({ data, updated_time: now })
      .where('id', '=', id)
      .where('data', '=', expected)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async delete(id: string): Promise<boolean> {
    const r = await this.d.db.deleteFrom('models').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
