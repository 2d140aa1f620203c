import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUsageStore } from '../../src/store/usage-store.js';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/databases.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { type PgProxy, startPgProxy } from '../helpers/pg-proxy.js';

/**
 * PostgreSQL only: a connection cut after the server committed and before its answer arrived.
 * The gateway cannot tell it from a failure; what it wrote must still count exactly once.
 */
describe.skipIf(!onPostgres)('answers PostgreSQL committed but never sent', () => {
  let db: TestDatabase;
  let proxy: PgProxy;
  let gw: TestGateway;
  let direct: pg.Client;
  let root: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    proxy = await startPgProxy(db.url);
    gw = await startTestGateway(
      { database: { url: proxy.url }, log: { request_logs_flush_ms: 60_000 } },
      { databaseUrl: proxy.url, redis: false },
    );
    direct = new pg.Client({ connectionString: db.url });
    await direct.connect();
    root = await gw.login();
  });
  afterAll(async () => {
    await direct?.end();
    await gw?.close();
    await proxy?.close();
    await db?.drop();
  });

  const one = async (text: string, values: unknown[] = []) => (await direct.query(text, values)).rows[0];
  async function account() {
    const u = await gw.call('POST', '/api/user', {
      cookie: root,
      body: {
        username: `lost${Date.now()}${Math.random().toString(36).slice(2, 6)}`,
        password: 'password-123',
      },
    });
    const k = await gw.call('POST', '/api/key', {
      cookie: root,
      body: { name: 'k', user_id: u.body.data.id },
    });
    return { userId: u.body.data.id as number, keyId: k.body.data.id as number };
  }
  const used = async (table: 'api_keys' | 'users', id: number) =>
    Number((await one(`SELECT quota_used_micros AS n FROM ${table} WHERE id = $1`, [id])).n);

  it('a request-log batch retried after its COMMIT answer was lost is written once, its spend moved once', async () => {
    const { userId, keyId } = await account();
    const w = gw.services.requestLogs;
    for (let i = 0; i < 5; i++) {
      w.record({
        request_id: `lost-${i}`,
        user_id: userId,
        key_id: keyId,
        endpoint: 'chat.completions',
        model: 'm-lost-commit',
        status: 200,
        cost_micros: 100,
      });
      w.settle(keyId, userId, 100);
    }
    const lost = proxy.loseReplyTo('COMMIT');
    await expect(w.flush()).rejects.toThrow();
    await lost;
    // Committed on the server although the writer saw a failure.
    expect(
      Number((await one(`SELECT count(*) AS n FROM request_logs WHERE model = 'm-lost-commit'`)).n),
    ).toBe(5);
    await w.flush();
    expect(w.pending).toBe(0);
    expect(
      Number((await one(`SELECT count(*) AS n FROM request_logs WHERE model = 'm-lost-commit'`)).n),
    ).toBe(5);
    expect(await used('api_keys', keyId)).toBe(500);
    expect(await used('users', userId)).toBe(500);
    // The writer goes on: later batches are written.
    w.record({
      request_id: 'after',
      user_id: userId,
      key_id: null,
      endpoint: 'chat.completions',
      model: 'm-lost-commit',
      status: 200,
    });
    await w.flush();
    expect(
      Number((await one(`SELECT count(*) AS n FROM request_logs WHERE model = 'm-lost-commit'`)).n),
    ).toBe(6);
  });

  it('a reservation whose answer was lost fails, and its hold is given back by the next write', async () => {
    const { userId, keyId } = await account();
    const store = createUsageStore(gw.services.database);
    expect(await store.reserve(keyId, userId, 1_000)).toBeNull();
    const lost = proxy.loseReplyTo('INSERT INTO quota_holds');
    await expect(store.reserve(keyId, userId, 7_000)).rejects.toThrow();
    await lost;
    // Granted on the server: both rows hold it.
    expect(await used('api_keys', keyId)).toBe(8_000);
    expect(await used('users', userId)).toBe(8_000);
    await gw.services.requestLogs.flush();
    expect(await used('api_keys', keyId)).toBe(1_000);
    expect(await used('users', userId)).toBe(1_000);
    // Given back once: another write changes nothing.
    gw.services.requestLogs.settle(keyId, userId, 1);
    await gw.services.requestLogs.flush();
    expect(await used('api_keys', keyId)).toBe(1_001);
    expect(await used('users', userId)).toBe(1_001);
  });

  it('a reservation lost while a batch is being written is given back by the write after it', async () => {
    const a = await account();
    const b = await account();
    const store = createUsageStore(gw.services.database);
    const w = gw.services.requestLogs;
    // The batch's spend on key A waits behind a row lock held here, so the write is in flight
    // (its look-up of unsure holds already sent) while key B's reservation loses its answer.
    await direct.query('BEGIN');
    await direct.query('SELECT id FROM api_keys WHERE id = $1 FOR UPDATE', [a.keyId]);
    w.settle(a.keyId, a.userId, 10);
    const writing = w.flush();
    await new Promise((r) => setTimeout(r, 100));
    const lost = proxy.loseReplyTo('INSERT INTO quota_holds');
    await expect(store.reserve(b.keyId, b.userId, 7_000)).rejects.toThrow();
    await lost;
    expect(await used('api_keys', b.keyId)).toBe(7_000);
    await direct.query('COMMIT');
    await writing;
    expect(await used('api_keys', a.keyId)).toBe(10);
    // Not settled by the write that was running: the next one looks it up and gives it back.
    expect(store.pending()).toBe(true);
    await w.flush();
    expect(await used('api_keys', b.keyId)).toBe(0);
    expect(await used('users', b.userId)).toBe(0);
    expect(store.pending()).toBe(false);
  });

  it('a reservation refused by the user holds neither row, in one statement', async () => {
    const { userId, keyId } = await account();
    await direct.query('UPDATE users SET quota_limit_micros = 500 WHERE id = $1', [userId]);
    const store = createUsageStore(gw.services.database);
    expect(await store.reserve(keyId, userId, 1_000)).toBe('user');
    expect(await used('api_keys', keyId)).toBe(0);
    expect(await used('users', userId)).toBe(0);
    await direct.query('UPDATE api_keys SET quota_limit_micros = 500 WHERE id = $1', [keyId]);
    await direct.query('UPDATE users SET quota_limit_micros = NULL WHERE id = $1', [userId]);
    expect(await store.reserve(keyId, userId, 1_000)).toBe('key');
    expect(await store.reserve(keyId, userId, 500)).toBeNull();
    expect(await used('api_keys', keyId)).toBe(500);
    expect(await used('users', userId)).toBe(500);
    // A key that no longer exists refuses.
    expect(await store.reserve(2_000_000_000, userId, 1)).toBe('key');
  });
});
