import {
  CompiledQuery,
  type Expression,
  type Insertable,
  type Selectable,
  type SqlBool,
  sql,
  type Updateable,
} from 'kysely';
import type { Database } from './database.js';
import { writeInOneTransaction } from './one-transaction.js';
import type { AppsTable } from './schema.js';
import { SEARCH_COLUMNS, searchColumnsOf } from './search-fold.js';

/** An app as stored, without the search columns. */
export type AppRow = Pick<Selectable<AppsTable>, (typeof COLUMNS)[number]>;

/** Listed explicitly: the table also has the `search_*` columns, which are not the record's. */
const COLUMNS = [
  'id',
  'name',
  'short_description',
  'description',
  'category',
  'version',
  'author',
  'author_url',
  'thumbnail_url',
  'download_url',
  'source_url',
  'documentation_url',
  'tags',
  'status',
  'featured',
  'download_count',
  'created_time',
  'updated_time',
  'created_by',
  'updated_by',
] as const;

export interface AppFilter {
  status?: number;
  category?: string;
  featured?: boolean;
}

export interface AppSort {
  field: 'id' | 'name' | 'download_count' | 'created_time' | 'updated_time';
  direction: 'asc' | 'desc';
}

/**
 * The folded text search matches (src/store/search-fold.ts): one space between fields, so no word
 * (words hold no whitespace) matches across two. PostgreSQL's trigram index is on this very
 * expression (migration 0008), so it must stay written exactly so.
 */
const SEARCH_PARTS = Object.values(SEARCH_COLUMNS);
const SEARCH_TEXT = sql.raw(
  `(search_name || ' ' || search_short_description || ' ' || search_description || ' ' || search_tags || ' ' || search_author)`,
);

/** Search words folded by foldSearchText; every one must occur in the record's folded text. */
export interface SearchWords {
  phrase: string;
  words: string[];
}

export type DownloadResult =
  | { ok: true; download_url: string; download_count: number }
  | { ok: false; reason: 'missing' | 'no_download_url' };

export class AppsRepo {
  constructor(private readonly d: Database) {}

  /**
   * `unindexed` writes the filters as `+column` so SQLite cannot drive the query from a
   * column index: a search must start from the (selective) full-text match instead of
   * walking every published row.
   */
  private filtered(f: AppFilter, unindexed = false) {
    const col = (c: 'status' | 'category' | 'featured') =>
      unindexed && this.d.dialect === 'sqlite'
        ? sql<string | number>`+${sql.ref(c)}`
        : sql.ref<string | number>(c);
    let q = this.d.db.selectFrom('apps');
    if (f.status !== undefined) q = q.where(col('status'), '=', f.status);
    if (f.category !== undefined) q = q.where(col('category'), '=', f.category);
    if (f.featured !== undefined) q = q.where(col('featured'), '=', f.featured ? 1 : 0);
    return q;
  }

  byId(id: number): Promise<AppRow | undefined> {
    return this.d.db.selectFrom('apps').select(COLUMNS).where('id', '=', id).executeTakeFirst();
  }

  async list(f: AppFilter, sort: AppSort, offset: number, limit: number) {
    const q = this.filtered(f);
    const [rows, total] = await Promise.all([
      q
        .select(COLUMNS)
        .orderBy(sort.field, sort.direction)
        // Ties follow the same direction so "newest first" stays newest first within a second.
        .orderBy('id', sort.direction)
        .offset(offset)
        .limit(limit)
        .execute(),
      q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(total.n) };
  }

  /**
   * Ranked: exact name, name prefix, all words in name, all in name or tags, elsewhere.
   * The total rides along as a window count so the text match runs once per request.
   */
  async search(terms: SearchWords, f: AppFilter, offset: number, limit: number) {
    const q = this.filtered(f, true).where(this.matches(terms.words));
    const found = await this.ranked(q, terms)
      .select(sql<number>`count(*) over ()`.as('total_count'))
      .offset(offset)
      .limit(limit)
      .execute();
    let total = found.length > 0 ? Number(found[0]!.total_count) : 0;
    if (found.length === 0 && offset > 0)
      total = Number((await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    const rows: AppRow[] = found.map(({ total_count: _, ...row }) => row);
    return { rows, total };
  }

  /** The plan of the search query, for checking that the trigram index is used. */
  async explainSearch(terms: SearchWords, f: AppFilter): Promise<string> {
    const c = this.ranked(this.filtered(f, true).where(this.matches(terms.words)), terms)
      .limit(20)
      .compile();
    const prefix = this.d.dialect === 'postgres' ? 'EXPLAIN ' : 'EXPLAIN QUERY PLAN ';
    const r = await this.d.db.executeQuery<Record<string, unknown>>(
      CompiledQuery.raw(prefix + c.sql, [...c.parameters]),
    );
    return r.rows.map((row) => String(row.detail ?? row['QUERY PLAN'] ?? JSON.stringify(row))).join('\n');
  }

  private ranked(q: ReturnType<AppsRepo['filtered']>, terms: SearchWords) {
    const pos = this.d.dialect === 'postgres' ? 'strpos' : 'instr';
    const inName = (w: string) => sql`${sql.raw(pos)}(search_name, ${w}) > 0`;
    const inNameOrTags = (w: string) =>
      sql`(${sql.raw(pos)}(search_name, ${w}) > 0 OR ${sql.raw(pos)}(search_tags, ${w}) > 0)`;
    const all = (parts: ReturnType<typeof sql>[]) => sql.join(parts, sql` AND `);
    const rank = sql<number>`CASE
      WHEN search_name = ${terms.phrase} THEN 0
      WHEN substr(search_name, 1, ${sql.lit([...terms.phrase].length)}) = ${terms.phrase} THEN 1
      WHEN ${all(terms.words.map(inName))} THEN 2
      WHEN ${all(terms.words.map(inNameOrTags))} THEN 3
      ELSE 4 END`;
    return q.select(COLUMNS).orderBy(rank).orderBy('download_count', 'desc').orderBy('id', 'asc');
  }

  private matches(words: string[]): Expression<SqlBool> {
    if (this.d.dialect === 'postgres') {
      const likes = words.map((w) => sql`${SEARCH_TEXT} LIKE ${`%${w.replace(/[\\%_]/g, '\\$&')}%`}`);
      return sql<SqlBool>`(${sql.join(likes, sql` AND `)})`;
    }
    // Words of 3+ characters go through FTS5 MATCH: with the trigram tokenizer a quoted phrase
    // is a substring match, served by the index (case-sensitive: the text is folded already).
    // Shorter words have no trigram and are tested with instr() on the rows, column by column
    // (no word spans two: words hold no whitespace), which spares concatenating each row.
    const long = words.filter((w) => [...w].length >= 3);
    const conds = words
      .filter((w) => [...w].length < 3)
      .map(
        (w) =>
          sql`(${sql.join(
            SEARCH_PARTS.map((c) => sql`instr(${sql.ref(c)}, ${w}) > 0`),
            sql` OR `,
          )})`,
      );
    if (long.length > 0)
      conds.unshift(
        sql`id IN (SELECT rowid FROM apps_fts WHERE apps_fts MATCH ${long.map((w) => `"${w.replaceAll('"', '""')}"`).join(' ')})`,
      );
    return sql<SqlBool>`(${sql.join(conds, sql` AND `)})`;
  }

  async insert(row: Insertable<AppsTable>): Promise<AppRow> {
    return this.d.db.insertInto('apps').values(withSearch(row)).returning(COLUMNS).executeTakeFirstOrThrow();
  }

  /** A few rows in one statement (atomic without a transaction held across awaits). */
  async insertRows(rows: Insertable<AppsTable>[]): Promise<void> {
    if (rows.length > 0) await this.d.db.insertInto('apps').values(rows.map(withSearch)).execute();
  }

  /**
   * Many rows in one transaction, in chunks that stay under both databases' parameter limits; on
   * SQLite run synchronously, so it holds no write lock across an await (one-transaction.ts).
   */
  async insertMany(rows: Insertable<AppsTable>[], chunk = 500): Promise<void> {
    const inserts: CompiledQuery[] = [];
    for (let i = 0; i < rows.length; i += chunk)
      inserts.push(
        this.d.db
          .insertInto('apps')
          .values(rows.slice(i, i + chunk).map(withSearch))
          .compile(),
      );
    await writeInOneTransaction(this.d, inserts);
  }

  async update(id: number, patch: Updateable<AppsTable>): Promise<AppRow | undefined> {
    return this.d.db
      .updateTable('apps')
      .set(withSearch(patch))
      .where('id', '=', id)
      .returning(COLUMNS)
      .executeTakeFirst();
  }

  async delete(id: number): Promise<boolean> {
    const r = await this.d.db.deleteFrom('apps').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /**
   * One atomic statement: concurrent downloads on any number of instances serialize on the
   * row, so none is lost. Only published apps with a download URL count.
   */
  async recordDownload(id: number, publishedStatus: number): Promise<DownloadResult> {
    const r = await this.d.db
      .updateTable('apps')
      .set((eb) => ({ download_count: eb('download_count', '+', 1) }))
      .where('id', '=', id)
      .where('status', '=', publishedStatus)
      .where('download_url', '<>', '')
      .returning(['download_url', 'download_count'])
      .executeTakeFirst();
    if (r) return { ok: true, download_url: r.download_url, download_count: Number(r.download_count) };
    const row = await this.byId(id);
    return {
      ok: false,
      reason: !row || Number(row.status) !== publishedStatus ? 'missing' : 'no_download_url',
    };
  }

  /** Inserts a kv marker row; true only for the caller whose insert landed (once per database). */
  async claimMarker(key: string): Promise<boolean> {
    const r = await this.d.db
      .insertInto('kv')
      .values({ key, value: String(Math.floor(Date.now() / 1000)) })
      .onConflict((oc) => oc.column('key').doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async count(): Promise<number> {
    const r = await this.d.db
      .selectFrom('apps')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }
}

/**
 * A write with the search fold of each searched field it carries: every write of those fields
 * goes through here, in the same statement, so the folded text never lags the record.
 */
function withSearch<T extends Updateable<AppsTable>>(row: T): T {
  return { ...row, ...searchColumnsOf(row) };
}
