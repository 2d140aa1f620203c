import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/databases.js';

/**
 * PostgreSQL only (`npm run test:pg`): `/readyz`'s database check has a connection of its own.
 * Through the request pool it waited behind a busy instance's queries, and an orchestrator's
 * probe timeout (3 s in the example manifest) then took every busy instance out of the load
 * balancer at once, which only moved the load to the next one.
 */
describe.skipIf(!onPostgres)('PostgreSQL readiness ping', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => t?.drop());

  it('answers while every connection of the request pool is taken', async () => {
    // A pool that would wait forever for a connection: a ping through it never returns.
    const d = openDatabase(t.url, { poolSize: 2, connectTimeoutMs: 0 });
    const held = [await d.pgPool!.connect(), await d.pgPool!.connect()];
    try {
      const answered = await Promise.race([
        d.ping().then(() => 'answered'),
        new Promise((r) => setTimeout(() => r('still waiting after 10 s'), 10_000).unref()),
      ]);
      expect(answered).toBe('answered');
      expect(d.pgPool!.waitingCount).toBe(0);
    } finally {
      for (const c of held) c.release();
      await d.close();
    }
  });

  it('fails within its own timeout when the server does not answer, not after the pool would', async () => {
    // A port with nothing that speaks PostgreSQL: a listener that accepts and stays silent.
    const { createServer } = await import('node:net');
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    const d = openDatabase(`postgres://postgres@127.0.0.1:${port}/test`, { connectTimeoutMs: 0 });
    try {
      const err = await d.ping().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
    } finally {
      await d.close();
      silent.close();
    }
  });
});
