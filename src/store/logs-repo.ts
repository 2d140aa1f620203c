import { type Insertable, type RawBuilder, type Selectable, sql } from 'kysely';
import type { Database } from './database.js';
import type { RequestLogsTable } from './schema.js';
import { type BatchMark, createUsageStore, type SpendDeltas, type UsageStore } from './usage-store.js';

export type RequestLogRow = Selectable<RequestLogsTable>;
export type NewRequestLogRow = Insertable<RequestLogsTable>;
/**
 * A row as /api/log lists it: with the names of its user and key, or null once the user or
 * key is deleted (or the request had none).
 */
export type NamedRequestLogRow = RequestLogRow & {
  username: string | null;
  user_display_name: string | null;
  key_name: string | null;
};

export interface LogFilter {
  userId?: number;
  keyId?: number;
  /** Rows logged under exactly this name. */
  model?: string;
  /** Rows logged under any of these names (a model's registry id and the names it answers to). */
  models?: string[];
  status?: number;
  /** Unix seconds, inclusive. */
  from?: number;
  /** Unix seconds, inclusive. */
  to?: number;
}

export type StatsGroup = 'day' | 'model' | 'key';

export interface StatsRow {
  /** day: Unix seconds of the UTC day's start; model: the model id; key: the key id (or null). */
  bucket: number | string | null;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_micros: number;
}

/** Request logs: batched inserts from RequestLogWriter, filtered reads for /api/log. */
export class LogsRepo {
  private store: UsageStore | undefined;

  constructor(private readonly d: Database) {}

  /**
   * Writes `rows`, and the spend settled for them when given, in one transaction: a crash
   * loses both or neither, so settled spend always equals the sum of logged costs.
   */
  insertMany(rows: NewRequestLogRow[], spend?: SpendDeltas, mark?: BatchMark): Promise<void> {
    this.store ??= createUsageStore(this.d);
    return this.store.write(rows, spend, mark);
  }

  /** Whether the next write has work of its own even without rows (see UsageStore.pending). */
  pending(): boolean {
    return createUsageStore(this.d).pending();
  }

  async list(
    filter: LogFilter,
    offset: number,
    limit: number,
  ): Promise<{ rows: NamedRequestLogRow[]; total: number }> {
    const q = this.filtered(filter);
    // The page is chosen first, then joined to its users and keys: one query, and the join
    // touches only the page's rows whatever the table's size.
    const page = q
      .selectAll()
      .orderBy('created_time', 'desc')
      .orderBy('id', 'desc')
      .offset(offset)
      .limit(limit)
      .as('l');
    const [rows, total] = await Promise.all([
      this.d.db
        .selectFrom(page)
        .leftJoin('users as u', 'u.id', 'l.user_id')
        .leftJoin('api_keys as k', 'k.id', 'l.key_id')
        .selectAll('l')
        .select(['u.username as username', 'u.display_name as user_display_name', 'k.name as key_name'])
        .orderBy('l.created_time', 'desc')
        .orderBy('l.id', 'desc')
        .execute(),
      q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(total.n) };
  }

  async count(filter: LogFilter = {}): Promise<number> {
    const r = await this.filtered(filter)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /**
   * Totals per bucket. Days are UTC: integer division of created_time (a bigint) by 86400 is
   * integer division on both SQLite and PostgreSQL, so no date functions are needed.
   */
  async stats(group: StatsGroup, filter: LogFilter): Promise<StatsRow[]> {
    const bucket: RawBuilder<number | string | null> =
      group === 'day' ? sql`(created_time / 86400) * 86400` : group === 'model' ? sql`model` : sql`key_id`;
    const rows = await this.filtered(filter)
      .select([
        bucket.as('bucket'),
        (eb) => eb.fn.countAll<number>().as('requests'),
        (eb) => eb.fn.sum<number>('prompt_tokens').as('prompt_tokens'),
        (eb) => eb.fn.sum<number>('completion_tokens').as('completion_tokens'),
        (eb) => eb.fn.sum<number>('cost_micros').as('cost_micros'),
      ])
      .groupBy(bucket)
      .orderBy(group === 'day' ? bucket : sql`count(*)`, group === 'day' ? 'asc' : 'desc')
      .orderBy(bucket)
      .execute();
    return rows.map((r) => ({
      bucket: r.bucket === null ? null : group === 'model' ? String(r.bucket) : Number(r.bucket),
      requests: Number(r.requests),
      prompt_tokens: Number(r.prompt_tokens ?? 0),
      completion_tokens: Number(r.completion_tokens ?? 0),
      cost_micros: Number(r.cost_micros ?? 0),
    }));
  }

  private filtered(f: LogFilter) {
    let q = this.d.db.selectFrom('request_logs');
    if (f.userId !== undefined) q = q.where('user_id', '=', f.userId);
    if (f.keyId !== undefined) q = q.where('key_id', '=', f.keyId);
    if (f.model !== undefined) q = q.where('model', '=', f.model);
    if (f.models !== undefined) q = q.where('model', 'in', f.models);
    if (f.status !== undefined) q = q.where('status', '=', f.status);
    if (f.from !== undefined) q = q.where('created_time', '>=', f.from);
    if (f.to !== undefined) q = q.where('created_time', '<=', f.to);
    return q;
  }
}
