import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDatabaseTimeout, isDatabaseUnavailable } from '../../src/store/db-errors.js';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/databases.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { type PgProxy, startPgProxy } from '../helpers/pg-proxy.js';

describe('isDatabaseUnavailable', () => {
  it('tells an unreachable or departed server from a bad statement and from a timeout', async () => {
    const refused = await new pg.Client({ host: '127.0.0.1', port: 1, user: 'x', database: 'x' })
      .connect()
      .catch((e: unknown) => e);
    expect(isDatabaseUnavailable(refused)).toBe(true);
    for (const message of ['Connection terminated unexpectedly', 'Connection terminated']) {
      expect(isDatabaseUnavailable(new Error(message))).toBe(true);
    }
    for (const code of ['08006', '08001', '57P01', '57P03', '53300', 'SQLITE_BUSY', 'SQLITE_FULL']) {
      expect(isDatabaseUnavailable(Object.assign(new Error(code), { code })), code).toBe(true);
    }
    for (const code of ['23505', '42P01', '22P02', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_ERROR', '57014']) {
      expect(isDatabaseUnavailable(Object.assign(new Error(code), { code })), code).toBe(false);
    }
    expect(isDatabaseUnavailable(new Error('timeout exceeded when trying to connect'))).toBe(false);
    expect(isDatabaseTimeout(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(isDatabaseUnavailable(new TypeError('x is undefined'))).toBe(false);
  });
});

/**
 * PostgreSQL only: a gateway whose database server goes away answers 503 with Retry-After (the
 * service, not the request), and serves again once the server is back.
 */
describe.skipIf(!onPostgres)('a database that goes away', () => {
  let db: TestDatabase;
  let proxy: PgProxy;
  let gw: TestGateway;
  beforeAll(async () => {
    db = await createTestDatabase();
    proxy = await startPgProxy(db.url);
    gw = await startTestGateway(
      { database: { url: proxy.url, connect_timeout_ms: 2000 } },
      { databaseUrl: proxy.url, redis: false },
    );
  });
  afterAll(async () => {
    await gw?.close();
    await proxy?.close();
    await db?.drop();
  });

  it('is a 503 with Retry-After on every kind of route, and over once it is back', async () => {
    expect((await gw.call('GET', '/api/app')).status).toBe(200);
    proxy.down();
    for (const [method, path, body] of [
      ['GET', '/api/app', undefined],
      ['POST', '/api/user/login', { username: 'root', password: 'whatever-it-is' }],
    ] as const) {
      const r = await gw.call(method, path, { body });
      expect(r.status, path).toBe(503);
      expect(r.headers.get('retry-after'), path).toBe('1');
      expect(r.body.message, path).toMatch(/^database unavailable: .*request id/);
    }
    await proxy.up();
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await gw.call('GET', '/api/app')).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
  });
});
