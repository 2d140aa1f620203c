/**
 * Two instances on one database file (two connections, as two gateways in one process or two
 * processes): a multi-statement write of one (AppsRepo.insertMany) and single writes of the other
 * at the same time. On SQLite a transaction held across awaits kept the write lock while the other
 * connection's write waited for it synchronously (better-sqlite3's busy wait blocks the one event
 * loop both run on), so the transaction could not finish and the other write failed with
 * "database is locked" after the busy timeout. The other writes start only once the first
 * instance's transaction is open and has written (checked between microtasks, nothing timed).
 * SQLite here, PostgreSQL under `npm run test:pg`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppsRepo } from '../../src/store/apps-repo.js';
import { type Database, openDatabase } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { appRow } from '../helpers/app-row.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';

let t: TestDatabase;
let a: Database;
let b: Database;

beforeAll(async () => {
  t = await createTestDatabase();
  a = openDatabase(t.url);
  b = openDatabase(t.url);
  await migrateToLatest(a);
});
afterAll(async () => {
  await b?.close();
  await a?.close();
  await t?.drop();
});

const app = (name: string) => appRow(name, { download_url: 'https://example.com/dl', version: '1.0' });

describe('a multi-row insert on one instance and writes on another, on one database', () => {
  it('neither fails with "database is locked" and no row is lost', async () => {
    const other = new AppsRepo(b);
    const existing = await other.insert(app('existing'));
    const rows = Array.from({ length: 30 }, (_, i) => app(`bulk-${i}`));
    // One row per statement: the transaction spans many statements.
    const bulk = new AppsRepo(a).insertMany(rows, 1);
    // On SQLite, wait (between microtasks) until the bulk insert holds the write lock.
    if (a.sqlite) {
      const count = a.sqlite.prepare(`SELECT count(*) AS n FROM apps WHERE name LIKE 'bulk-%'`);
      for (let i = 0; i < 10_000 && !(a.sqlite.inTransaction && (count.get() as { n: number }).n > 0); i++)
        await Promise.resolve();
    }
    const writes = Promise.all([
      other.insert(app('single')),
      other.update(existing.id, { version: '2.0' }),
      other.recordDownload(existing.id, 1),
    ]);
    const [, [, updated, download]] = await Promise.all([bulk, writes]);
    expect(updated?.version).toBe('2.0');
    expect(download).toMatchObject({ ok: true, download_count: 1 });
    expect(await new AppsRepo(a).count()).toBe(32);
  });
});
