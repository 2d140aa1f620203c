import type { Database } from '../../src/store/database.js';

/**
 * Stores an admin model entry (`{id, ...entry}`) straight in the `models` table, replacing any row
 * there: a write another instance made, or one made before the API's checks existed, which this
 * instance's API, checks and memory never saw. Production writes go through `ModelsRepo.swap`.
 */
export async function storeModelRow(
  database: Database,
  id: string,
  entry: Record<string, unknown>,
): Promise<void> {
  const data = JSON.stringify({ id, ...entry });
  const now = Math.floor(Date.now() / 1000);
  await database.db
    .insertInto('models')
    .values({ id, data, updated_time: now })
    .onConflict((oc) => oc.column('id').doUpdateSet({ data, updated_time: now }))
    .execute();
}
