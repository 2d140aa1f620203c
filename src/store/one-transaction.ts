import type SQLite from 'better-sqlite3';
import type { CompiledQuery } from 'kysely';
import type { Database } from './database.js';

/**
 * Runs the compiled writes in one transaction, all or none. On SQLite the whole transaction runs
 * synchronously (BEGIN IMMEDIATE, the statements, COMMIT) within one call, so the write lock is
 * never held across an await: a Kysely transaction whose body awaits kept it, and a write of
 * another connection on the same file in the same process (a second gateway instance) then
 * waited for it synchronously, blocking the event loop the holder needed to finish, until it
 * failed with "database is locked". PostgreSQL keeps its async transaction.
 */
export async function writeInOneTransaction(d: Database, queries: readonly CompiledQuery[]): Promise<void> {
  const conn = d.sqlite;
  if (!conn) {
    await d.db.transaction().execute(async (trx) => {
      for (const q of queries) await trx.executeQuery(q);
    });
    return;
  }
  await sqliteIdle(conn);
  conn
    .transaction(() => {
      const prepared = new Map<string, SQLite.Statement>();
      for (const q of queries) {
        let stmt = prepared.get(q.sql);
        if (!stmt) {
          stmt = conn.prepare(q.sql);
          prepared.set(q.sql, stmt);
        }
        stmt.run(q.parameters as unknown[]);
      }
    })
    .immediate();
}

/**
 * Resolves once the connection is in no transaction. Kysely shares the connection; while one of
 * its transactions is open (its statements run across awaits) a synchronous one must not join it.
 */
export async function sqliteIdle(conn: SQLite.Database): Promise<void> {
  while (conn.inTransaction) await new Promise((r) => setImmediate(r));
}

/**
 * Runs `first` and, when it returns a row (a write with RETURNING that matched), `then` after it,
 * in one transaction: all or none. The row, or undefined when `first` matched nothing (nothing
 * else is run). SQLite runs it synchronously, as `writeInOneTransaction` does.
 */
export async function writeWithFollowUps<R>(
  d: Database,
  first: CompiledQuery<R>,
  then: readonly CompiledQuery[],
): Promise<R | undefined> {
  const conn = d.sqlite;
  if (!conn)
    return d.db.transaction().execute(async (trx) => {
      const row = (await trx.executeQuery(first)).rows[0];
      if (row !== undefined) for (const q of then) await trx.executeQuery(q);
      return row;
    });
  await sqliteIdle(conn);
  return conn
    .transaction(() => {
      const row = conn.prepare(first.sql).get(first.parameters as unknown[]) as R | undefined;
      if (row !== undefined) for (const q of then) conn.prepare(q.sql).run(q.parameters as unknown[]);
      return row;
    })
    .immediate();
}
