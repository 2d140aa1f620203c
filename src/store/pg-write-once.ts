import type { SpendDeltas } from './usage-store.js';

// PostgreSQL's statements for writes whose answer can be lost after the commit (see
// PostgresUsageStore in usage-store.ts and docs/quotas.md, "Answers lost after a commit").

/** A reservation whose answer never came: it may have been granted, and then must be given back. */
export interface UnsureHold {
  id: string;
  keyId: number | null;
  userId: number;
  micros: number;
}

/** Hold records are kept this long: an instance gives back an unsure hold at its next write. */
const HOLD_RECORD_SECONDS = 86_400;
/** A writer that has not written for this long is gone (its process ended). */
const WRITER_RECORD_SECONDS = 7 * 86_400;
export const now = () => Math.floor(Date.now() / 1000);

/**
 * Both limits checked on locked rows, key first; both rows held and the hold recorded, or
 * nothing. $1 micros, $2 key id (null: a signed-in user without a key), $3 user id, $4 the hold's
 * id, $5 now. A key or user that does not exist refuses.
 */
export const RESERVE = `WITH c AS (SELECT
  CASE WHEN $2::bigint IS NULL THEN true ELSE coalesce((SELECT quota_limit_micros IS NULL OR quota_used_micros + $1 <= quota_limit_micros FROM api_keys WHERE id = $2 FOR UPDATE), false) END AS key_ok,
  coalesce((SELECT quota_limit_micros IS NULL OR quota_used_micros + $1 <= quota_limit_micros FROM users WHERE id = $3 FOR UPDATE), false) AS user_ok),
k AS (UPDATE api_keys SET quota_used_micros = quota_used_micros + $1 WHERE id = $2 AND (SELECT key_ok AND user_ok FROM c) RETURNING 1),
u AS (UPDATE users SET quota_used_micros = quota_used_micros + $1 WHERE id = $3 AND (SELECT key_ok AND user_ok FROM c) RETURNING 1),
h AS (INSERT INTO quota_holds (id, created_time) SELECT $4::varchar, $5::bigint WHERE (SELECT key_ok AND user_ok FROM c) RETURNING 1)
SELECT key_ok, user_ok, (SELECT count(*) FROM k) + (SELECT count(*) FROM u) + (SELECT count(*) FROM h) AS n FROM c`;

/** Deletes hold records past their keeping time. */
export const pruneHolds = (t: number) =>
  `DELETE FROM quota_holds WHERE created_time < ${t - HOLD_RECORD_SECONDS}; `;

/** The writer's row (`id` quoted), created on its first batch, locked, and its last committed mark read. */
export function markCheck(id: string, t: number, first: boolean): string {
  let q = `INSERT INTO request_log_writers (id, last_seq, updated_time) VALUES (${id}, 0, ${t}) ON CONFLICT (id) DO NOTHING; `;
  if (first) q += `DELETE FROM request_log_writers WHERE updated_time < ${t - WRITER_RECORD_SECONDS}; `;
  return `${q}SELECT last_seq FROM request_log_writers WHERE id = ${id} FOR UPDATE; `;
}

/**
 * Locks the rows of the unsure holds and of the spend (keys, then users, each in id order, as
 * every writer does: no deadlock), which waits for a reservation still running on the server,
 * then deletes the records of the holds that were granted, returning their ids.
 */
export function findHolds(unsure: readonly UnsureHold[], spend: SpendDeltas | undefined): string {
  const keys = new Set<number>(spend?.keys.keys());
  const users = new Set<number>(spend?.users.keys());
  for (const h of unsure) {
    if (h.keyId !== null) keys.add(h.keyId);
    users.add(h.userId);
  }
  const lock = (table: string, ids: Set<number>) =>
    ids.size === 0
      ? ''
      : `SELECT 1 FROM ${table} WHERE id IN (${[...ids].join(', ')}) ORDER BY id FOR UPDATE; `;
  return (
    lock('api_keys', keys) +
    lock('users', users) +
    `DELETE FROM quota_holds WHERE id IN (${unsure.map((h) => `'${h.id}'`).join(', ')}) RETURNING id`
  );
}

/** The spend with the granted unsure holds taken back off their rows (a copy: a batch is retried as it is). */
export function giveBack(
  unsure: readonly UnsureHold[],
  found: ReadonlyArray<{ id?: string }>,
  spend: SpendDeltas | undefined,
): SpendDeltas | undefined {
  const granted = new Set(found.map((r) => r.id));
  let out: SpendDeltas | undefined;
  for (const h of unsure) {
    if (!granted.has(h.id)) continue;
    out ??= { keys: new Map(spend?.keys), users: new Map(spend?.users) };
    if (h.keyId !== null) out.keys.set(h.keyId, (out.keys.get(h.keyId) ?? 0) - h.micros);
    out.users.set(h.userId, (out.users.get(h.userId) ?? 0) - h.micros);
  }
  return out ?? spend;
}
