import type SQLite from 'better-sqlite3';
import { CompiledQuery, type DatabaseConnection, type Driver, SqliteDialect } from 'kysely';

/** How long a SQLite write waits for another connection's write lock (`busy_timeout`). */
export const SQLITE_BUSY_TIMEOUT_MS = 10_000;

/**
 * Kysely's SQLite dialect, with two changes.
 *
 * SQLite's DDL is transactional, but Kysely's SQLite adapter says it is not, so its migrator ran
 * each statement on its own: a start killed during a migration (the first start's tables, 0002's
 * search index) left tables with no `mg_migrations` row, and every later start failed on
 * "already exists". Saying so runs the pending migrations and their rows in one transaction.
 *
 * Its transactions (the migrator's; the repositories' writes run theirs synchronously,
 * one-transaction.ts) begin IMMEDIATE, taking the write lock first, and wait for it without
 * blocking the event loop. A deferred BEGIN read first and then failed at once with "database is
 * locked" when another connection on the file had written meanwhile: SQLite does not wait
 * (busy_timeout) to upgrade a read that may have seen an older state. And a BEGIN IMMEDIATE that
 * waited through busy_timeout would hold the event loop, and with it a transaction of another
 * instance in the same process that holds the lock across awaits, until it failed.
 */
export class GatewaySqliteDialect extends SqliteDialect {
  constructor(private readonly conn: SQLite.Database) {
    super({ database: conn });
  }

  override createAdapter() {
    const adapter = super.createAdapter();
    Object.defineProperty(adapter, 'supportsTransactionalDdl', { get: () => true });
    return adapter;
  }

  override createDriver(): Driver {
    const driver = super.createDriver();
    driver.beginTransaction = (connection) => beginImmediate(this.conn, connection);
    return driver;
  }
}

async function beginImmediate(conn: SQLite.Database, connection: DatabaseConnection): Promise<void> {
  const deadline = Date.now() + SQLITE_BUSY_TIMEOUT_MS;
  for (let i = 0; ; i++) {
    // No busy wait for this statement: the wait below lets the holder finish meanwhile.
    conn.pragma('busy_timeout = 0');
    try {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw err;
    } finally {
      conn.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
    }
    await new Promise((r) => setTimeout(r, Math.min(100, 2 ** i)));
  }
}
