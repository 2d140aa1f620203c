import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type PG from 'pg';
import { databaseUrlProblem } from './connection-urls.js';
import type { DB } from './schema.js';
import { startCheckpointer } from './sqlite-checkpointer.js';
import { GatewaySqliteDialect, SQLITE_BUSY_TIMEOUT_MS } from './sqlite-dialect.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Database {
  readonly db: Kysely<DB>;
  readonly dialect: Dialect;
  ping(): Promise<void>;
  close(): Promise<void>;
  /** Connection pool use (PostgreSQL only), for metrics. */
  poolStats?(): { total: number; idle: number; waiting: number };
  /**
   * The better-sqlite3 connection behind Kysely (SQLite only), for the few hot statements that
   * run synchronously outside Kysely (src/store/usage-store.ts). Kysely uses the same one.
   */
  readonly sqlite?: SQLite.Database;
  /** The pg pool behind Kysely (PostgreSQL only), for request-log COPY (src/store/usage-store.ts). */
  readonly pgPool?: PG.Pool;
  /**
   * PostgreSQL only: the same database on a one-connection pool of its own without the statement
   * timeout, for migrations (src/store/migrate.ts). The caller closes it.
   */
  untimed?(): Database;
}

/**
 * The PostgreSQL driver, loaded on first use: a SQLite deployment (the default) never needs it.
 * `require` keeps `openDatabase` synchronous; pg is CommonJS.
 */
let pgDriver: typeof PG | undefined;
function loadPg(): typeof PG {
  if (!pgDriver) {
    pgDriver = createRequire(import.meta.url)('pg') as typeof PG;
    // int8 (COUNT, SUM, bigint columns) arrives as a string by default; our values stay far below 2^53.
    pgDriver.types.setTypeParser(20, (v) => Number.parseInt(v, 10));
    pgDriver.types.setTypeParser(1700, (v) => Number.parseFloat(v));
  }
  return pgDriver;
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

/** The file a SQLite `database.url` names (`sqlite:` or `sqlite://` before it dropped), as given. */
export function sqliteFile(url: string): string {
  return url.replace(/^sqlite:(\/\/)?/i, '');
}

export interface DatabaseOptions {
  poolSize?: number;
  /**
   * PostgreSQL: `statement_timeout` of every pool connection (sent when it opens), in ms. A
   * statement running or waiting for a lock longer fails with SQLSTATE 57014 instead of holding
   * its request (and a pool connection) forever. 0 = the server's setting. Default 30 s.
   */
  statementTimeoutMs?: number;
  /**
   * PostgreSQL: how long a query waits for a pool connection, or for a new one to open, before it
   * fails (`connectionTimeoutMillis`); 0 = forever. Default 10 s.
   */
  connectTimeoutMs?: number;
  /**
   * SQLite: the connection's page cache in MB (`PRAGMA cache_size`). Default 2, SQLite's own
   * default; better-sqlite3 builds SQLite with 16, which a gateway writing request logs fills
   * with pages of the log table it will not read again (docs/performance.md, Session 11).
   */
  sqliteCacheMb?: number;
}

const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const DEFAULT_SQLITE_CACHE_MB = 2;
/**
 * PostgreSQL: how long past the statement timeout a query's answer may take before its connection
 * is taken for silent (the server's own timeout error comes back well within it).
 */
const SILENT_MARGIN_MS = 5_000;
/** PostgreSQL: how long `ping` (`/readyz`) waits to connect and for its answer, each. */
const PING_TIMEOUT_MS = 2_000;

export function openDatabase(url: string, opts: DatabaseOptions = {}): Database {
  // Anything else was taken for a SQLite path (folders named after the URL, an empty database).
  const problem = databaseUrlProblem(url);
  if (problem) throw new Error(`database.url: ${problem}`);
  if (isPostgresUrl(url)) {
    const statementTimeout = opts.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
    // TCP keep-alive probes after 10 s idle: a connection whose peer vanished (a failover, a
    // dropped NAT entry) fails instead of leaving a query, and the log writer behind it, waiting.
    const pool = new (loadPg().Pool)({
      connectionString: url,
      max: opts.poolSize ?? 10,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      // A startup parameter: set on the server for the connection's life, no extra round trip.
      statement_timeout: statementTimeout > 0 ? statementTimeout : false,
      connectionTimeoutMillis: opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    });
    // A client losing its connection must not crash the process: pg-pool listens for 'error' only
    // while a client is idle, and a checked-out client (a transaction, the log COPY) whose server
    // goes away emits 'error' with nobody listening. Its query fails on its own, and pg-pool
    // discards a client that is no longer queryable when it is released.
    pool.on('error', () => {});
    pool.on('connect', (client) => {
      client.on('error', () => {});
      if (statementTimeout > 0) closeWhenSilent(client, statementTimeout + SILENT_MARGIN_MS);
    });
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    const poolStats = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
    // Migrations may rightly run long (DDL on a large table, waiting for another instance's
    // migration lock): they get a pool of their own without the statement timeout.
    const untimed = () => {
      const d = openDatabase(url, { ...opts, poolSize: 1, statementTimeoutMs: 0 });
      // Explicitly 0, not just not sent: a timeout set on the role or database (as behind
      // PgBouncer, docs/configuration.md) would apply otherwise. Queued before any query of the
      // client; if it fails, the migration runs under the server's setting.
      d.pgPool!.on('connect', (client) => {
        client.query('SET statement_timeout = 0').catch(() => {});
      });
      return d;
    };
    // `/readyz` asks on a connection of its own, with short timeouts: through the request pool
    // it waited behind a busy instance's queries, and the orchestrator's probe timeout then took
    // every busy instance out at once (docs/scaling.md). Opened on the first ping.
    let probe: PG.Pool | undefined;
    const ping = async () => {
      if (!probe) {
        probe = new (loadPg().Pool)({
          connectionString: url,
          max: 1,
          idleTimeoutMillis: 60_000,
          keepAlive: true,
          statement_timeout: PING_TIMEOUT_MS,
          query_timeout: PING_TIMEOUT_MS,
          connectionTimeoutMillis: PING_TIMEOUT_MS,
        });
        probe.on('error', () => {});
      }
      await probe.query('select 1');
    };
    const base = wrap(db, 'postgres');
    const close = async () => {
      await probe?.end().catch(() => {});
      await base.close();
    };
    return { ...base, ping, close, poolStats, pgPool: pool, untimed };
  }
  const file = sqliteFile(url);
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const conn = new SQLite(file);
  // WAL lets readers proceed during writes; busy_timeout makes a second process wait for the
  // write lock instead of failing with "database is locked".
  conn.pragma('journal_mode = WAL');
  conn.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  conn.pragma('synchronous = NORMAL');
  conn.pragma('foreign_keys = ON');
  conn.pragma(`cache_size = ${-(opts.sqliteCacheMb ?? DEFAULT_SQLITE_CACHE_MB) * 1024}`);
  // SQLite's own lower() folds ASCII only ('Über' stays 'Über'); PostgreSQL's folds every
  // letter. The same queries must match the same rows on both, so lower() is JavaScript's.
  conn.function('lower', { deterministic: true }, (s: unknown) =>
    typeof s === 'string' ? s.toLowerCase() : s,
  );
  const db = new Kysely<DB>({ dialect: new GatewaySqliteDialect(withStatementCache(conn)) });
  const base = wrap(db, 'sqlite');
  if (file === ':memory:') return { ...base, sqlite: conn };
  const checkpointer = startCheckpointer(conn, file);
  return {
    ...base,
    sqlite: conn,
    async close() {
      await checkpointer.stop();
      await base.close();
    },
  };
}

function wrap(db: Kysely<DB>, dialect: Dialect): Database {
  return {
    db,
    dialect,
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await db.destroy();
    },
  };
}

/**
 * Kysely's SQLite driver prepares every query anew; preparing costs more than running the
 * small statements on the request path (credential lookups, spend updates). Statements are
 * reusable, and Kysely runs one query at a time per connection, so a cache by SQL text is safe.
 */
function withStatementCache(conn: SQLite.Database, max = 500): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = (sql: string): SQLite.Statement => {
    let stmt = cache.get(sql);
    if (!stmt) {
      stmt = conn.prepare(sql);
      if (cache.size >= max) cache.delete(cache.keys().next().value as string);
      cache.set(sql, stmt);
    }
    return stmt;
  };
  return new Proxy(conn, {
    get(target, prop) {
      if (prop === 'prepare') return prepare;
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/**
 * A query on `client` still unanswered `ms` after it was sent closes the connection: it fails
 * as on a cut connection ('Connection terminated', a 503 for the request), and the pool, which
 * does not take back a client that is ending, opens a new one for the next. A connection whose
 * server went silent without closing it (a failover that left the old address answering nothing,
 * a NAT or firewall entry dropped) otherwise held its query until the kernel gave up on it
 * (~15 min), and with it every request waiting for that query (a key's lookup is shared by its
 * requests): the statement timeout cannot end a query the server never received. Promise queries
 * (Kysely's, the request-log transaction's) and the request-log COPY stream alike: a write held
 * by a silent connection held every later batch of request logs and settlements behind it.
 */
function closeWhenSilent(client: PG.PoolClient, ms: number): void {
  const query = client.query as (...args: unknown[]) => unknown;
  const socket = (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream;
  client.query = ((...args: unknown[]) => {
    const result = query.apply(client, args);
    const stream = result as { once?: (event: string, fn: () => void) => unknown } | undefined;
    if (!(result instanceof Promise) && typeof stream?.once !== 'function') return result;
    const timer = setTimeout(() => {
      // Ending first: the pool drops the client on release instead of lending it again.
      client.end().catch(() => {});
      socket.destroy();
    }, ms);
    timer.unref();
    const done = () => clearTimeout(timer);
    if (result instanceof Promise) result.then(done, done);
    // A COPY stream: 'finish' once the server took it all (its ReadyForQuery), or its failure.
    else for (const event of ['finish', 'error', 'close']) stream!.once!(event, done);
    return result;
  }) as typeof client.query;
}
