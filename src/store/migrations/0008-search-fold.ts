import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../database.js';
import { foldSearchText } from '../search-fold.js';

/**
 * Catalog search on text folded by the application (src/store/search-fold.ts) instead of each
 * database's lower(), which disagreed with each other and with the keyword's fold: a Greek name
 * ending in Σ, or one with İ, was not found by its own name.
 *
 * Five columns `search_*` hold the fold of name, short_description, description, tags and author,
 * each written with its own column (a partial update folds only what it changes, no read of the
 * row first). Every existing row is folded here.
 * - SQLite: the FTS5 trigram table now indexes those columns as external content (the text is
 *   not stored twice), case-sensitively: the text is already folded, and a second fold by FTS5's
 *   own table would match what the other database does not.
 * - PostgreSQL: the generated `search_doc` column goes; the pg_trgm GIN index is on the
 *   concatenation of the five columns, the expression the search queries with (apps-repo.ts).
 */
export function searchFold(dialect: Dialect) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      if (dialect === 'postgres') await sql`ALTER TABLE apps DROP COLUMN search_doc`.execute(db);
      else
        for (const s of [
          'DROP TRIGGER apps_fts_insert',
          'DROP TRIGGER apps_fts_delete',
          'DROP TRIGGER apps_fts_update',
          'DROP TABLE apps_fts',
        ])
          await sql.raw(s).execute(db);
      for (const c of COLUMNS)
        await db.schema
          .alterTable('apps')
          .addColumn(c, 'text', (col) => col.notNull().defaultTo(''))
          .execute();
      await foldRows(db, dialect);
      if (dialect === 'postgres') await indexPostgres(db);
      else await indexSqlite(db);
    },
  };
}

const FIELDS = ['name', 'short_description', 'description', 'tags', 'author'] as const;
const COLUMNS = FIELDS.map((f) => `search_${f}`);
const BATCH = 500;

async function foldRows(db: Kysely<any>, dialect: Dialect): Promise<void> {
  for (let after = 0; ; ) {
    const rows = await db
      .selectFrom('apps')
      .select(['id', ...FIELDS])
      .where('id', '>', after)
      .orderBy('id')
      .limit(BATCH)
      .execute();
    if (rows.length === 0) return;
    after = Number(rows[rows.length - 1].id);
    const folded = rows.map(
      (r) => [Number(r.id), ...FIELDS.map((f) => foldSearchText(String(r[f])))] as const,
    );
    if (dialect === 'postgres') {
      const values = folded.map(([id, ...t]) => sql`(${id}::int, ${sql.join(t)})`);
      await sql`
        UPDATE apps SET ${sql.join(COLUMNS.map((c) => sql.raw(`${c} = v.${c}`)))}
        FROM (VALUES ${sql.join(values)}) AS v(id, ${sql.raw(COLUMNS.join(', '))})
        WHERE apps.id = v.id`.execute(db);
    } else
      for (const [id, ...t] of folded)
        await db
          .updateTable('apps')
          .set(Object.fromEntries(COLUMNS.map((c, i) => [c, t[i]])))
          .where('id', '=', id)
          .execute();
  }
}

async function indexSqlite(db: Kysely<any>): Promise<void> {
  const cols = COLUMNS.join(', ');
  const of = (p: string) => COLUMNS.map((c) => `${p}.${c}`).join(', ');
  await sql
    .raw(
      `CREATE VIRTUAL TABLE apps_fts USING fts5(${cols}, content = 'apps', content_rowid = 'id',
         tokenize = 'trigram case_sensitive 1')`,
    )
    .execute(db);
  await sql.raw(`INSERT INTO apps_fts(apps_fts) VALUES ('rebuild')`).execute(db);
  await sql
    .raw(
      `CREATE TRIGGER apps_fts_insert AFTER INSERT ON apps BEGIN
         INSERT INTO apps_fts(rowid, ${cols}) VALUES (new.id, ${of('new')});
       END`,
    )
    .execute(db);
  // External content: the index forgets a row by being told the values it indexed.
  await sql
    .raw(
      `CREATE TRIGGER apps_fts_delete AFTER DELETE ON apps BEGIN
         INSERT INTO apps_fts(apps_fts, rowid, ${cols}) VALUES ('delete', old.id, ${of('old')});
       END`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER apps_fts_update AFTER UPDATE OF ${cols} ON apps BEGIN
         INSERT INTO apps_fts(apps_fts, rowid, ${cols}) VALUES ('delete', old.id, ${of('old')});
         INSERT INTO apps_fts(rowid, ${cols}) VALUES (new.id, ${of('new')});
       END`,
    )
    .execute(db);
}

async function indexPostgres(db: Kysely<any>): Promise<void> {
  // 0002 created the extension where it could; a savepoint keeps a refused CREATE EXTENSION from
  // aborting the migration's transaction, and search then works without the index.
  const have = await sql<{
    n: number;
  }>`SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'pg_trgm'`.execute(db);
  let trgm = (have.rows[0]?.n ?? 0) > 0;
  if (!trgm) {
    await sql`SAVEPOINT mg_trgm`.execute(db);
    try {
      await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`.execute(db);
      await sql`RELEASE SAVEPOINT mg_trgm`.execute(db);
      trgm = true;
    } catch {
      await sql`ROLLBACK TO SAVEPOINT mg_trgm`.execute(db);
    }
  }
  // The same expression as SEARCH_TEXT in apps-repo.ts, or the planner cannot use the index.
  const text = COLUMNS.join(` || ' ' || `);
  if (trgm)
    await sql.raw(`CREATE INDEX apps_search_trgm ON apps USING gin ((${text}) gin_trgm_ops)`).execute(db);
}
