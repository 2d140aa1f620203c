import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type SQLite from 'better-sqlite3';
import { CompiledQuery, type Kysely } from 'kysely';
import type PG from 'pg';
import type PgCopyStreams from 'pg-copy-streams';
import type { CopyStreamQuery } from 'pg-copy-streams';
import { clampInt, MAX_EXACT } from './column-bounds.js';
import type { Database } from './database.js';
import { isDatabaseUnavailable } from './db-errors.js';
import type { NewRequestLogRow } from './logs-repo.js';
import { sqliteIdle } from './one-transaction.js';
import {
  findHolds,
  giveBack,
  markCheck,
  now,
  pruneHolds,
  RESERVE,
  type UnsureHold,
} from './pg-write-once.js';
import type { DB } from './schema.js';

export type SpendScope = 'key' | 'user';

/** Names a request-log batch: its writer (one per process) and its number there, in order. */
export interface BatchMark {
  writer: string;
  seq: number;
}

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
  /**
   * One transaction: the spend deltas (unconditional) and the log rows, both or neither. Given a
   * `mark`, a batch already committed under it (its answer lost) is not written again.
   */
  write(rows: readonly NewRequestLogRow[], spend?: SpendDeltas, mark?: BatchMark): Promise<void>;
  /** Whether the next write has work of its own (PostgreSQL: a reservation to give back). */
  pending(): boolean;
}

/**
 * The database's one usage store: the quota ledger's reservations and the request-log writes
 * share it, so a reservation whose answer was lost is given back by the next write.
 */
export function createUsageStore(d: Database): UsageStore {
  let store = stores.get(d);
  if (!store) {
    if (d.sqlite) store = new SqliteUsageStore(d.sqlite);
    else if (d.pgPool) store = new PostgresUsageStore(d.db, d.pgPool);
    else throw new Error('usage store: neither a SQLite connection nor a PostgreSQL pool');
    stores.set(d, store);
  }
  return store;
}
const stores = new WeakMap<Database, UsageStore>();

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
/**
 * Spend saturates at 2^53 - 1 micro-USD (9 billion USD): past it PostgreSQL's bigint would
 * overflow in the end and refuse the settlement on every retry, and JavaScript numbers lose
 * precision anyway. `least` is the dialect's two-argument minimum (LEAST / MIN).
 */
const add = (table: string, p: (n: number) => string, least: 'LEAST' | 'MIN') =>
  `UPDATE ${table} SET quota_used_micros = ${least}(quota_used_micros + ${p(1)}, ${MAX_EXACT})` +
  ` WHERE id = ${p(2)}`;
/** A summed delta as sent: within the saturation bound (see `add`). */
const bounded = (d: number) => clampInt(d, MAX_EXACT);

/** Request-log rows per multi-row INSERT on SQLite (170 bound values, far below its limit). */
const ROWS_PER_INSERT = 10;

/** Writes row `r`'s values into `a` from `k` in LOG_COLUMNS order; returns the next index. */
function putRow(a: unknown[], k: number, r: NewRequestLogRow): number {
  a[k++] = r.created_time;
  a[k++] = r.request_id;
  a[k++] = r.user_id ?? null;
  a[k++] = r.key_id ?? null;
  a[k++] = r.endpoint;
  a[k++] = r.model;
  a[k++] = r.provider;
  a[k++] = r.channel_id ?? null;
  a[k++] = r.prompt_tokens;
  a[k++] = r.completion_tokens;
  a[k++] = r.cost_micros;
  a[k++] = r.latency_ms;
  a[k++] = r.ttft_ms ?? null;
  a[k++] = r.status;
  a[k++] = r.error_kind ?? null;
  a[k++] = r.stream;
  a[k++] = r.attempts ?? null;
  return k;
}

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
    const addKey = conn.prepare(add('api_keys', q, 'MIN'));
    const addUser = conn.prepare(add('users', q, 'MIN'));
    const values = (n: number) =>
      Array.from({ length: n }, () => `(${LOG_COLUMNS.map(() => '?').join(', ')})`).join(', ');
    const insertInto = `INSERT INTO request_logs (${LOG_COLUMNS.join(', ')}) VALUES `;
    const insert = conn.prepare(insertInto + values(1));
    // Rows go ROWS_PER_INSERT to a statement, their values in one reused array: a statement
    // execution per row cost ~1.1-1.3 µs of each row's ~5.2 on a request_logs-shaped table
    // with its three indexes (docs/performance.md, session 14).
    const insertMany = conn.prepare(insertInto + values(ROWS_PER_INSERT));
    const args = new Array<unknown>(ROWS_PER_INSERT * LOG_COLUMNS.length);
    this.reserveTx = conn
      .transaction((keyId: number | null, userId: number, micros: number) => {
        if (keyId !== null && holdKey.run({ d: micros, id: keyId }).changes === 0) throw new Refused('key');
        if (holdUser.run({ d: micros, id: userId }).changes === 0) throw new Refused('user');
      })
      .immediate.bind(null);
    this.writeTx = conn
      .transaction((rows: readonly NewRequestLogRow[], spend?: SpendDeltas) => {
        if (spend) {
          for (const [id, d] of spend.keys) if (d !== 0) addKey.run({ d: bounded(d), id });
          for (const [id, d] of spend.users) if (d !== 0) addUser.run({ d: bounded(d), id });
        }
        let i = 0;
        for (; i + ROWS_PER_INSERT <= rows.length; i += ROWS_PER_INSERT) {
          let k = 0;
          for (let j = i; j < i + ROWS_PER_INSERT; j++) k = putRow(args, k, rows[j]!);
          insertMany.run(args);
        }
        // The rest one by one, as separate arguments (binding 17 arguments is ~3 µs faster than
        // an array of 17; an array of 170 costs less per row than either).
        for (; i < rows.length; i++) {
          const r = rows[i]!;
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
    await sqliteIdle(this.conn);
    try {
      this.reserveTx(keyId, userId, micros);
      return null;
    } catch (err) {
      if (err instanceof Refused) return err.message as SpendScope;
      throw err;
    }
  }

  async write(rows: readonly NewRequestLogRow[], spend?: SpendDeltas): Promise<void> {
    await sqliteIdle(this.conn);
    this.writeTx(rows, spend);
  }

  pending(): boolean {
    return false;
  }
}

/**
 * PostgreSQL. A reservation is one statement, so one round trip and one commit for both rows:
 * both limits are checked on the rows locked (key first, like every writer), and both rows held
 * or neither, with a record of the hold (`quota_holds`) written by the same statement.
 *
 * A connection can fail after the server committed and before its answer arrived: the caller
 * cannot tell a granted hold from a failed one. Such a reservation fails (the request gets a
 * 503), and the hold, if it was granted, is given back by this instance's next request-log
 * write, which deletes its record and takes the amount off both rows in its transaction (once:
 * the record is gone with it). Likewise a batch of request logs carries its mark, and the
 * writer's last committed mark (`request_log_writers`) is read and moved in the batch's own
 * transaction, so a batch retried after a lost COMMIT answer is recognised and not written twice.
 */
class PostgresUsageStore implements UsageStore {
  /** pg-copy-streams, loaded with pg: a SQLite deployment never needs it. */
  private readonly copyFrom: (text: string) => CopyStreamQuery;
  private unsure: UnsureHold[] = [];
  private lastPrune = 0;
  private readonly writersSeen = new Set<string>();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly pool: PG.Pool,
  ) {
    this.copyFrom = (createRequire(import.meta.url)('pg-copy-streams') as typeof PgCopyStreams).from;
  }

  async reserve(keyId: number | null, userId: number, micros: number): Promise<SpendScope | null> {
    const id = randomUUID();
    let r: { rows: Array<{ key_ok: boolean; user_ok: boolean }> };
    try {
      r = await this.db.executeQuery<{ key_ok: boolean; user_ok: boolean }>(
        CompiledQuery.raw(RESERVE, [micros, keyId, userId, id, now()]),
      );
    } catch (err) {
      // Cut while on its way: the server may have committed it. A statement the server refused
      // or cancelled (a SQLSTATE) changed nothing.
      if (isDatabaseUnavailable(err)) this.unsure.push({ id, keyId, userId, micros });
      throw err;
    }
    const { key_ok, user_ok } = r.rows[0]!;
    return !key_ok ? 'key' : !user_ok ? 'user' : null;
  }

  pending(): boolean {
    return this.unsure.length > 0;
  }

  async write(rows: readonly NewRequestLogRow[], spend?: SpendDeltas, mark?: BatchMark): Promise<void> {
    // A copy: a reservation cut while this batch is written joins the list, and must wait for
    // the next write's look-up (this one's statement was built without it), not be forgotten.
    const unsure = this.unsure.slice();
    const t = now();
    const writer = mark && `'${mark.writer.replace(/[^0-9a-f-]/g, '')}'`;
    let begin = 'BEGIN; SET LOCAL synchronous_commit = off; ';
    if (writer) begin += markCheck(writer, t, !this.writersSeen.has(writer));
    const prune = t - this.lastPrune >= 60;
    if (prune) begin += pruneHolds(t);
    if (unsure.length > 0) begin += findHolds(unsure, spend);
    // Straight on a pool client (Kysely has no COPY): three round trips per batch.
    const client = await this.pool.connect();
    // A connection that failed during the write is not rolled back (it is gone) nor given back.
    let broken: Error | undefined;
    const lost = (err: Error) => {
      broken ??= err;
    };
    client.on('error', lost);
    try {
      // The commit does not wait for the WAL flush: while a checkpoint makes fsyncs slow (after a
      // burst of writes), a synchronous commit held the key's row lock for as long, and every
      // quota reservation of that key queued behind it (p99 of seconds). What this risks, a
      // PostgreSQL host crash losing the last ~0.6 s of batches, is the window the gateway's own
      // buffer already has (docs/quotas.md).
      const results = [(await client.query(begin)) as unknown as PG.QueryResult[]].flat();
      const last = results.find((x) => x.fields.length === 1 && x.fields[0]!.name === 'last_seq');
      if (mark && Number(last?.rows[0]?.last_seq) >= mark.seq) {
        // Committed before; its answer was lost.
        await client.query('ROLLBACK');
        return;
      }
      const given = unsure.length > 0 ? giveBack(unsure, results.at(-1)!.rows, spend) : spend;
      // COPY of tab-separated text: a quarter less PostgreSQL CPU per row than one INSERT of
      // unnested column arrays, and less encoding here (docs/performance.md, session 5).
      if (rows.length > 0) await this.copy(client, rows);
      // Spend last, so the rows it locks (which reservations wait for) are held only until the
      // commit, which goes with it. Rows in id order, keys before users (like reservations): no
      // deadlock. The figures are integers checked here, so they can be part of the text.
      const moved = writer
        ? `UPDATE request_log_writers SET last_seq = ${mark!.seq}, updated_time = ${t} WHERE id = ${writer}; `
        : '';
      await client.query(`${given ? spendText(given) : ''}${moved}COMMIT`);
      if (writer) this.writersSeen.add(writer);
      if (prune) this.lastPrune = t;
      // Found or not, these are settled: a granted one was given back with this commit.
      if (unsure.length > 0) this.unsure = this.unsure.filter((h) => !unsure.includes(h));
    } catch (err) {
      // A connection that cannot even roll back is not given back to the pool either.
      if (!broken)
        await client.query('ROLLBACK').catch((e: Error) => {
          broken ??= e;
        });
      throw err;
    } finally {
      client.off('error', lost);
      client.release(broken);
    }
  }

  private copy(client: PG.PoolClient, rows: readonly NewRequestLogRow[]): Promise<void> {
    // The text first: once COPY is sent, the server waits for its data (or a CopyFail).
    const text = copyText(rows);
    return new Promise((resolve, reject) => {
      const stream = client.query(this.copyFrom(PG_COPY));
      stream.on('error', reject);
      // 'finish' comes once PostgreSQL has taken every row (its ReadyForQuery).
      stream.once('finish', resolve);
      // One CopyData message for the batch: PostgreSQL reads it whole before it can refuse it.
      stream.end(text);
    });
  }
}

const PG_COPY = `COPY request_logs (${LOG_COLUMNS.join(', ')}) FROM STDIN`;

/** COPY text format: backslash, tab, newline and carriage return are escaped; `\N` is NULL. */
const COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_SPECIALS = /[\\\t\n\r]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const escapeOne = (c: string) => COPY_ESCAPES[c]!;
const txt = (s: string | null | undefined) =>
  s === null || s === undefined ? '\\N' : COPY_SPECIAL.test(s) ? s.replace(COPY_SPECIALS, escapeOne) : s;
const num = (n: number | null | undefined) => (n === null || n === undefined ? '\\N' : `${n}`);

/** The rows as COPY text, columns in LOG_COLUMNS order; NOT NULL columns take their defaults. */
function copyText(rows: readonly NewRequestLogRow[]): string {
  let out = '';
  for (const r of rows)
    out +=
      `${num(r.created_time)}\t${txt(r.request_id)}\t${num(r.user_id)}\t${num(r.key_id)}\t` +
      `${txt(r.endpoint)}\t${txt(r.model ?? '')}\t${txt(r.provider ?? '')}\t${num(r.channel_id)}\t` +
      `${num(r.prompt_tokens ?? 0)}\t${num(r.completion_tokens ?? 0)}\t${num(r.cost_micros ?? 0)}\t` +
      `${num(r.latency_ms ?? 0)}\t${num(r.ttft_ms)}\t${num(r.status)}\t${txt(r.error_kind)}\t` +
      `${num(r.stream ?? 0)}\t${txt(r.attempts)}\n`;
  return out;
}

/** The spend deltas as UPDATE statements, keys then users, each in id order. */
function spendText(spend: SpendDeltas): string {
  let out = '';
  for (const [table, m] of [
    ['api_keys', spend.keys],
    ['users', spend.users],
  ] as const)
    for (const id of [...m.keys()].sort((a, b) => a - b)) {
      // Only integers within ±2^53 enter the text (never in exponent form); a non-finite delta
      // (which `settle` never queues) is 0, since refusing the batch would repeat on every retry.
      const d = bounded(m.get(id)!);
      if (d === 0 || !Number.isSafeInteger(id)) continue;
      out += `${add(table, (n) => (n === 1 ? `${d}` : `${id}`), 'LEAST')}; `;
    }
  return out;
}
