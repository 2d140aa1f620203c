import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/databases.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { type PgProxy, startPgProxy } from '../helpers/pg-proxy.js';

/**
 * PostgreSQL only: pool connections whose server went silent without closing them (a failover
 * that left the old address answering nothing, a NAT or firewall entry dropped) while new
 * connections work. Before, a query sent on one waited for an answer until the kernel gave up on
 * the connection (~15 min), and every request of a key whose lookup it was waited with it; the
 * server's statement timeout cannot end a query the server never received.
 */
describe.skipIf(!onPostgres)('pool connections that went silent', () => {
  let db: TestDatabase;
  let proxy: PgProxy;
  let gw: TestGateway;
  beforeAll(async () => {
    db = await createTestDatabase();
    proxy = await startPgProxy(db.url);
    gw = await startTestGateway(
      { database: { url: proxy.url, pool_size: 2, statement_timeout_ms: 200 } },
      { databaseUrl: proxy.url, redis: false },
    );
  });
  afterAll(async () => {
    // The proxy first: a connection still silent (the test failed) would hold the gateway's stop.
    await proxy?.close();
    await gw?.close();
    await db?.drop();
  });

  it('are closed once a query waits past the statement timeout, and the next requests get new ones', async () => {
    // Both pool connections open.
    const warm = await Promise.all([1, 2, 3, 4].map(() => gw.call('GET', '/api/app')));
    expect(warm.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    proxy.freeze();
    const statuses: number[] = [];
    for (let i = 0; i < 4 && statuses.at(-1) !== 200; i++) {
      const r = await gw.call('GET', '/api/app');
      statuses.push(r.status);
      if (r.status !== 200) {
        expect(r.status).toBe(503);
        expect(r.headers.get('retry-after')).toBe('1');
        expect(r.body.message).toMatch(/^database unavailable: /);
      }
    }
    // At most one failed request per silent connection, then the pool's new ones serve.
    expect(statuses.at(-1)).toBe(200);
    expect(statuses.length).toBeLessThanOrEqual(3);
  }, 60_000);

  it('a request-log write whose connection goes silent at its COPY is written again on a new one', async () => {
    const writer = gw.services.requestLogs;
    const frozen = proxy.freezeAt('COPY request_logs');
    const entry = { user_id: null, key_id: null, endpoint: 'chat.completions', model: 'm', status: 200 };
    writer.record({ ...entry, request_id: 'silent-copy' });
    await frozen;
    // Waits for the write under way (held by the silent connection), then writes what is left.
    writer.record({ ...entry, request_id: 'after-silent-copy' });
    await writer.flush();
    const rows = await gw.services.database.db
      .selectFrom('request_logs')
      .select('request_id')
      .where('request_id', 'in', ['silent-copy', 'after-silent-copy'])
      .orderBy('id')
      .execute();
    expect(rows.map((r) => r.request_id)).toEqual(['silent-copy', 'after-silent-copy']);
  }, 60_000);
});
