import { sql } from 'kysely';
import type { Database } from './database.js';

/**
 * Atomically adds `delta` micro-USD to the spend of one row of a table with
 * `quota_used_micros`/`quota_limit_micros` (api_keys, users). With `enforceLimit` it adds only
 * if the result stays within the limit (or there is none). One statement, so concurrent
 * reservations on any number of instances can never overspend. False when nothing was added.
 */
export async function addSpend(
  d: Database,
  table: 'api_keys' | 'users',
  id: number,
  delta: number,
  enforceLimit: boolean,
): Promise<boolean> {
  let q = d.db
    .updateTable(table)
    .set({ quota_used_micros: sql`quota_used_micros + ${delta}` })
    .where('id', '=', id);
  if (enforceLimit)
    q = q.where((eb) =>
      eb.or([
        eb('quota_limit_micros', 'is', null),
        eb(sql`quota_used_micros + ${delta}`, '<=', eb.ref('quota_limit_micros')),
      ]),
    );
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}
