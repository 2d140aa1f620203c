import type SQLite from 'better-sqlite3';
import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from './database.js';
import type { NewRequestLogRow } from './logs-repo.js';
import type { DB } from './schema.js';

export type SpendScope = 'key' | 'user';

/** Net micro-USD to add per row id, settled since the last write. */
export interface SpendDeltas {
  keys: Map<number, number>;
  users: Map<number, number>;
}

/**
 * The statements on the request path's books: holding a reservation on a key and its user, and
 * writing request logs together with the spend settled for them. Precompiled per dialect because
 * they run once or more per billed request (building them with Kysely cost ~9% of CPU).
 */
export interface UsageStore {
  /**
   * Adds `micros` to the key (when not null) and the user, each only if it stays within its
   * limit: both or neither. Returns the scope that refused, or null when both were held.
   */
  reserve(keyId: number | null, userId: number, micros: number): Promise<SpendScope | null>;
  /** One transaction: the spend deltas (unconditional) and the log rows, both or neither. */
  write(rows: readonly NewRequestLogRow[], spend?: SpendDeltas): Promise<void>;
}

export function createUsageStore(d: Database): UsageStore {
  return d.sqlite ? new SqliteUsageStore(d.sqlite) : new PostgresUsageStore(d.db);
}

const LOG_COLUMNS = [
  'created_time',
  'request_id',
  'user_id',
  'key_id',
  'endpoint',
  'model',
  'provider',
  'channel_id',
  'prompt_tokens',
  'completion_tokens',
  'cost_micros',
  'latency_ms',
  'ttft_ms',
  'status',
  'error_kind',
  'stream',
  'attempts',
] as const satisfies readonly (keyof NewRequestLogRow)[];

const hold = (table: string, p: (n: number) => string) =>
  `UPDATE ${table} SET quota_used_micros = quota_used_micros + ${p(1)} WHERE id = ${p(2)}` +
  ` AND (quota_limit_micros IS NULL OR quota_used_micros + ${p(1)} <= quota_limit_micros)`;
const add = (table: string, p: (n: number) => string) =>
  `UPDATE ${table} SET quota_used_micros = quota_used_micros + ${p(1)} WHERE id = ${p(2)}`;

class Refused extends Error {}

/**
 * better-sqlite3 is synchronous: each method runs its transaction to completion within one
 * call, so no other request's statement can interleave, and the write lock is never held across
 * an event-loop turn. Kysely shares the connection; while one of its transactions is open (its
 * statements run across awaits) ours must not join it, so we wait for it to end.
 */
class SqliteUsageStore implements UsageStore {
  private readonly reserveTx: (keyId: number | null, userId: number, micros: number) => void;
  private readonly writeTx: (rows: readonly NewRequestLogRow[], spend?: SpendDeltas) => void;

  constructor(private readonly conn: SQLite.Database) {
    const q = (n: number) => (n === 1 ? '@d' : '@id');
    const holdKey = conn.prepare(hold('api_keys', q));
    const holdUser = conn.prepare(hold('users', q));
    const addKey = conn.prepare(add('api_keys', q));
    const addUser = conn.prepare(add('users', q));
    const insert = conn.prepare(
      `INSERT INTO request_logs (${LOG_COLUMNS.join(', ')}) VALUES (${LOG_COLUMNS.map(() => '?').join(', ')})`,
    );
    this.reserveTx = conn
      .transaction((keyId: number | null, userId: number, micros: number) => {
        if (keyId !== null && holdKey.run({ d: micros, id: keyId }).changes === 0) throw new Refused('key');
        if (holdUser.run({ d: micros, id: userId }).changes === 0) throw new Refused('user');
      })
      .immediate.bind(null);
    this.writeTx = conn
      .transaction((rows: readonly NewRequestLogRow[], spend?: SpendDeltas) => {
        if (spend) {
          for (const [id, d] of spend.keys) if (d !== 0) addKey.run({ d, id });
          for (const [id, d] of spend.users) if (d !== 0) addUser.run({ d, id });
        }
        for (const r of rows) {
          // Separate arguments in LOG_COLUMNS order: better-sqlite3 binds 17 arguments ~3 µs
          // faster than one array of 17 (a third of the insert), and no keyed loads per column.
          insert.run(
            r.created_time,
            r.request_id,
            r.user_id ?? null,
            r.key_id ?? null,
            r.endpoint,
            r.model,
            r.provider,
            r.channel_id ?? null,
            r.prompt_tokens,
            r.completion_tokens,
            r.cost_micros,
            r.latency_ms,
            r.ttft_ms ?? null,
            r.status,
            r.error_kind ?? null,
            r.stream,
            r.attempts ?? null,
          );
        }
      })
      .immediate.bind(null);
  }

  async reserve(keyId: number | null, userId: number, micros: number): Promise<SpendScope | null> {
    await this.idle();
    try {
      this.reserveTx(keyId, userId, micros);
      return null;
    } catch (err) {
      if (err instanceof Refused) return err.message as SpendScope;
      throw err;
    }
  }

  async write(rows: readonly NewRequestLogRow[], spend?: SpendDeltas): Promise<void> {
    await this.idle();
    this.writeTx(rows, spend);
  }

  private async idle(): Promise<void> {
    while (this.conn.inTransaction) await new Promise((r) => setImmediate(r));
  }
}

/**
 * PostgreSQL: the reservation is one statement, so one round trip and one commit for both rows.
 * The user's UPDATE runs only if the key's matched (it reads the key CTE's RETURNING); the key's
 * cannot depend on the user's in the same statement, so a refusal by the user is undone by a
 * second statement, as before (the refusal path only).
 */
class PostgresUsageStore implements UsageStore {
  constructor(private readonly db: Kysely<DB>) {}

  async reserve(keyId: number | null, userId: number, micros: number): Promise<SpendScope | null> {
    const p = (n: number) => `$${n}`;
    const text =
      `WITH k AS (${hold('api_keys', p)} RETURNING 1),` +
      ` u AS (${hold('users', (n) => (n === 2 ? '$3' : p(n)))}` +
      ` AND ($2::bigint IS NULL OR EXISTS (SELECT 1 FROM k)) RETURNING 1)` +
      ' SELECT (SELECT count(*) FROM k)::int AS k, (SELECT count(*) FROM u)::int AS u';
    const r = await this.db.executeQuery<{ k: number; u: number }>(
      CompiledQuery.raw(text, [micros, keyId, userId]),
    );
    const { k, u } = r.rows[0]!;
    if (keyId !== null && k === 0) return 'key';
    if (u > 0) return null;
    if (keyId !== null) await undoKey(this.db, keyId, micros);
    return 'user';
  }

  async write(rows: readonly NewRequestLogRow[], spend?: SpendDeltas): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      // The commit does not wait for the WAL flush: while a checkpoint makes fsyncs slow (after a
      // burst of writes), a synchronous commit held the key's row lock for as long, and every
      // quota reservation of that key queued behind it (p99 of seconds). What this risks, a
      // PostgreSQL host crash losing the last ~0.6 s of batches, is the window the gateway's own
      // buffer already has (docs/quotas.md).
      await trx.executeQuery(ASYNC_COMMIT);
      // One array per column, unnested by the server: one short constant statement per chunk.
      // A multi-row VALUES list (850 placeholders per 50 rows) cost PostgreSQL ~3x the CPU per
      // row to parse and plan, and the gateway ~1.6x to send (docs/performance.md, session 4).
      // Chunks bound the event-loop time of one statement's encoding when a backlog drains.
      for (let i = 0; i < rows.length; i += PG_LOG_CHUNK) {
        const chunk = rows.length <= PG_LOG_CHUNK ? rows : rows.slice(i, i + PG_LOG_CHUNK);
        const columns = LOG_COLUMNS.map(() => new Array<unknown>(chunk.length));
        for (let r = 0; r < chunk.length; r++) {
          const row = chunk[r]!;
          for (let c = 0; c < LOG_COLUMNS.length; c++) columns[c]![r] = row[LOG_COLUMNS[c]!] ?? null;
        }
        await trx.executeQuery(CompiledQuery.raw(PG_INSERT, columns));
      }
      // Spend last, so the rows it locks (which reservations wait for) are held only until the
      // commit. Rows in id order, keys before users (like reservations): no deadlock.
      if (spend) {
        for (const [table, m] of [
          ['api_keys', spend.keys],
          ['users', spend.users],
        ] as const)
          for (const id of [...m.keys()].sort((a, b) => a - b))
            if (m.get(id) !== 0)
              await trx.executeQuery(
                CompiledQuery.raw(
                  add(table, (n) => `$${n}`),
                  [m.get(id), id],
                ),
              );
      }
    });
  }
}

const ASYNC_COMMIT = CompiledQuery.raw('SET LOCAL synchronous_commit = off');
const PG_LOG_CHUNK = 500;
/** PostgreSQL type of each of LOG_COLUMNS, for the unnest of one array per column. */
const PG_LOG_TYPES: Record<(typeof LOG_COLUMNS)[number], string> = {
  created_time: 'bigint',
  request_id: 'text',
  user_id: 'integer',
  key_id: 'integer',
  endpoint: 'text',
  model: 'text',
  provider: 'text',
  channel_id: 'integer',
  prompt_tokens: 'integer',
  completion_tokens: 'integer',
  cost_micros: 'bigint',
  latency_ms: 'integer',
  ttft_ms: 'integer',
  status: 'integer',
  error_kind: 'text',
  stream: 'integer',
  attempts: 'text',
};
const PG_INSERT =
  `INSERT INTO request_logs (${LOG_COLUMNS.join(', ')}) SELECT * FROM unnest(` +
  `${LOG_COLUMNS.map((c, i) => `$${i + 1}::${PG_LOG_TYPES[c]}[]`).join(', ')})`;

/** The key's hold must not outlive a refusal by its user; a transient error is retried. */
async function undoKey(db: Kysely<DB>, keyId: number, micros: number): Promise<void> {
  const q = CompiledQuery.raw(
    add('api_keys', (n) => `$${n}`),
    [-micros, keyId],
  );
  for (let attempt = 1; ; attempt++) {
    try {
      await db.executeQuery(q);
      return;
    } catch (err) {
      if (attempt >= 3) throw err;
      await new Promise((r) => setTimeout(r, 20 * 2 ** attempt));
    }
  }
}
