import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * Substring search over the catalog text (name, descriptions, tags, author), backed by a
 * trigram index so `LIKE '%word%'` does not scan the table:
 * - SQLite: an FTS5 table with the trigram tokenizer, kept in sync with `apps` by triggers.
 *   Its rowid is the app id. Download counting does not touch it (the update trigger is
 *   limited to the text columns).
 * - PostgreSQL: a generated lower-cased `search_doc` column with a pg_trgm GIN index. If the
 *   extension cannot be created (no privilege), search still works, without the index.
 */
export function appSearch(dialect: Dialect) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      if (dialect === 'postgres') await upPostgres(db);
      else await upSqlite(db);
    },
  };
}

const docOf = (p: string) =>
  `${p}name || ' ' || ${p}short_description || ' ' || ${p}description || ' ' || ${p}tags || ' ' || ${p}author`;

async function upSqlite(db: Kysely<any>): Promise<void> {
  await sql.raw(`CREATE VIRTUAL TABLE apps_fts USING fts5(doc, tokenize = 'trigram')`).execute(db);
  await sql.raw(`INSERT INTO apps_fts(rowid, doc) SELECT id, ${docOf('')} FROM apps`).execute(db);
  await sql
    .raw(
      `CREATE TRIGGER apps_fts_insert AFTER INSERT ON apps BEGIN
         INSERT INTO apps_fts(rowid, doc) VALUES (new.id, ${docOf('new.')});
       END`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER apps_fts_delete AFTER DELETE ON apps BEGIN
         DELETE FROM apps_fts WHERE rowid = old.id;
       END`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER apps_fts_update
         AFTER UPDATE OF name, short_description, description, tags, author ON apps BEGIN
         UPDATE apps_fts SET doc = ${docOf('new.')} WHERE rowid = new.id;
       END`,
    )
    .execute(db);
}

async function upPostgres(db: Kysely<any>): Promise<void> {
  await sql
    .raw(`ALTER TABLE apps ADD COLUMN search_doc text GENERATED ALWAYS AS (lower(${docOf('')})) STORED`)
    .execute(db);
  // The migration runs in a transaction; a savepoint keeps a refused CREATE EXTENSION from
  // aborting it.
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
  if (trgm) await sql`CREATE INDEX apps_search_trgm ON apps USING gin (search_doc gin_trgm_ops)`.execute(db);
}
