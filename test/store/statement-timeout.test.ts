import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/store/database.js';
import { isDatabaseTimeout } from '../../src/store/db-errors.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { type ChatGateway, model, oaCompletion, startChatGateway, userMsg } from '../chat/chat-helpers.js';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/databases.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';

/**
 * PostgreSQL only (`npm run test:pg`): a statement that runs or waits for a lock longer than
 * `database.statement_timeout_ms` fails (SQLSTATE 57014) instead of holding its request and a pool
 * connection forever; the request answers 503. Migrations are exempt.
 */
const showTimeout = async (d: Database) =>
  (await sql<{ statement_timeout: string }>`show statement_timeout`.execute(d.db)).rows[0]!.statement_timeout;

/** Kysely's PostgreSQL migration lock (an advisory lock; kysely/dist/esm/dialect/postgres/postgres-adapter.js). */
const MIGRATION_LOCK_ID = '3853314791062309107';

describe.skipIf(!onPostgres)('PostgreSQL statement timeout', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => t?.drop());

  it('is 30 s by default, and a statement past it fails with 57014 rather than hanging', async () => {
    const byDefault = openDatabase(t.url);
    const d = openDatabase(t.url, { statementTimeoutMs: 200 });
    try {
      expect(await showTimeout(byDefault)).toBe('30s');
      expect(await showTimeout(d)).toBe('200ms');
      const t0 = Date.now();
      const err = await sql`select pg_sleep(30)`.execute(d.db).catch((e: unknown) => e);
      expect(Date.now() - t0).toBeLessThan(5000);
      expect(err).toMatchObject({ code: '57014', message: 'canceling statement due to statement timeout' });
      expect(isDatabaseTimeout(err)).toBe(true);
      // The connection stays usable.
      await d.ping();
    } finally {
      await byDefault.close();
      await d.close();
    }
  });

  it('a query that gets no pool connection within connect_timeout_ms fails instead of waiting', async () => {
    // 1 s: the same bound also covers opening `held` (a new backend, slower on a loaded machine).
    const d = openDatabase(t.url, { poolSize: 1, connectTimeoutMs: 1_000 });
    const held = await d.pgPool!.connect();
    try {
      const t0 = Date.now();
      // A request's query (the readiness ping has a connection of its own: readiness-probe.test.ts).
      const err = await sql`select 1`.execute(d.db).catch((e: unknown) => e);
      expect(Date.now() - t0).toBeLessThan(5000);
      expect((err as Error).message).toBe('timeout exceeded when trying to connect');
      expect(isDatabaseTimeout(err)).toBe(true);
    } finally {
      held.release();
      await d.close();
    }
  });

  it("migrations run without it: waiting 1 s for another instance's migration lock under a 200 ms timeout", async () => {
    const fresh = await createTestDatabase();
    const d = openDatabase(fresh.url, { statementTimeoutMs: 200 });
    const other = new pg.Client({ connectionString: fresh.url });
    await other.connect();
    try {
      await other.query(`select pg_advisory_lock(${MIGRATION_LOCK_ID})`);
      const migrating = migrateToLatest(d);
      await new Promise((r) => setTimeout(r, 1000));
      await other.query(`select pg_advisory_unlock(${MIGRATION_LOCK_ID})`);
      expect((await migrating).length).toBeGreaterThan(0);
      expect(await d.db.selectFrom('users').selectAll().execute()).toEqual([]);
      // The gateway's own pool keeps its timeout.
      expect(await showTimeout(d)).toBe('200ms');
    } finally {
      await other.end();
      await d.close();
      await fresh.drop();
    }
  });

  it('migrations run without a timeout set on the database or role either (as behind PgBouncer)', async () => {
    const fresh = await createTestDatabase();
    const admin = new pg.Client({ connectionString: fresh.url });
    await admin.connect();
    // No startup parameter (0 = the server's setting), but the database itself says 200 ms.
    await admin.query(
      `ALTER DATABASE "${new URL(fresh.url).pathname.slice(1)}" SET statement_timeout = '200ms'`,
    );
    const d = openDatabase(fresh.url, { statementTimeoutMs: 0 });
    const other = new pg.Client({ connectionString: fresh.url });
    await other.connect();
    try {
      expect(await showTimeout(d)).toBe('200ms');
      await other.query(`select pg_advisory_lock(${MIGRATION_LOCK_ID})`);
      const migrating = migrateToLatest(d);
      await new Promise((r) => setTimeout(r, 1000));
      await other.query(`select pg_advisory_unlock(${MIGRATION_LOCK_ID})`);
      expect((await migrating).length).toBeGreaterThan(0);
    } finally {
      await Promise.all([other.end(), admin.end()]);
      await d.close();
      await fresh.drop();
    }
  });
});

describe.skipIf(!onPostgres)('a request waiting on a database lock', () => {
  let up: FakeUpstream;
  let c: ChatGateway;
  let locker: pg.Client;
  beforeAll(async () => {
    up = await startFakeUpstream({ 'POST /v1/chat/completions': { json: oaCompletion('ok') } });
    c = await startChatGateway(
      {
        // Every query of this gateway has it, set-up included: 1 s, not less, for a loaded machine.
        database: { statement_timeout_ms: 1_000 },
        channels: [
          {
            name: 'up',
            kind: 'openai-compatible',
            base_url: `${up.url}/v1`,
            keys: ['k'],
            models: ['acme/m'],
          },
        ],
        models: [model('acme/m')],
      },
      { quota_limit: 10 },
    );
    locker = new pg.Client({ connectionString: c.gw.databaseUrl });
    await locker.connect();
  });
  afterAll(async () => {
    await locker?.end();
    await c?.gw.close();
    await up?.close();
  });

  const chat = () =>
    c.gw.call('POST', '/v1/chat/completions', {
      token: c.key,
      body: { model: 'acme/m', messages: userMsg('hi') },
    });

  it('answers 503 once database.statement_timeout_ms passes, and 200 once the lock is gone', async () => {
    // Another session holds the key's row: the quota reservation (an UPDATE of it) waits.
    await locker.query('BEGIN');
    await locker.query('SELECT 1 FROM api_keys FOR UPDATE');
    try {
      const t0 = Date.now();
      const r = await chat();
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toBe('1');
      expect(r.body.error).toMatchObject({ code: 503, type: 'service_unavailable' });
      expect(r.body.error.message).toMatch(
        /^database timeout: the database did not answer in time, try again later \(request id \S+\)$/,
      );
    } finally {
      await locker.query('ROLLBACK');
    }
    expect((await chat()).status).toBe(200);
  });

  it('the management API answers 503 with its envelope', async () => {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE request_logs IN ACCESS EXCLUSIVE MODE');
    try {
      const r = await c.gw.call('GET', '/api/log', { cookie: c.cookie });
      expect(r.status).toBe(503);
      expect(r.body).toEqual({ success: false, message: expect.stringMatching(/^database timeout: /) });
    } finally {
      await locker.query('ROLLBACK');
    }
    expect((await c.gw.call('GET', '/api/log', { cookie: c.cookie })).status).toBe(200);
  });
});
