import type { Kysely } from 'kysely';
import type { DB } from './schema.js';

/**
 * `last_used_time` of API keys and access tokens is kept to the minute: a credential lookup (at
 * most one a second per credential and instance) writes it, in the background, when it finds it
 * this old or older, so a busy credential costs one small UPDATE a minute per instance.
 */
export const LAST_USED_RESOLUTION_S = 60;

export const lastUseIsStale = (lastUsed: number | null, now: number): boolean =>
  lastUsed === null || lastUsed <= now - LAST_USED_RESOLUTION_S;

/**
 * Records a use at `now`, unless another instance already did within the resolution. Leaves
 * `updated_time`, which says when the credential was changed.
 */
export async function touchLastUsed(
  db: Kysely<DB>,
  table: 'api_keys' | 'access_tokens',
  id: number,
  now: number,
): Promise<void> {
  const since = now - LAST_USED_RESOLUTION_S + 1;
  await db
    .updateTable(table)
    .set({ last_used_time: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_time', 'is', null), eb('last_used_time', '<', since)]))
    .execute();
}
