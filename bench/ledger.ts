import { DeferredSettleLedger } from '../src/access/quota/deferred-ledger.js';
import { RequestLogWriter } from '../src/gateway/usage/request-log-writer.js';
import { openDatabase } from '../src/store/database.js';
import { LogsRepo } from '../src/store/logs-repo.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { createUsageStore } from '../src/store/usage-store.js';
import { createTestDatabase } from '../test/helpers/databases.js';

/**
 * The quota ledger alone (docs/quotas.md, "What it costs"): 3,000 reserve + settle + log-record
 * cycles on one limited key, sequentially and from 50 concurrent loops, then the writer closed
 * and the key's spend checked equal to the settled sum. SQLite by default; PostgreSQL with
 * TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test.
 * Usage: node --import tsx bench/ledger.ts
 */
const CYCLES = 3_000;
const tdb = await createTestDatabase();
const d = openDatabase(tdb.url);
try {
  await migrateToLatest(d);
  const now = Math.floor(Date.now() / 1000);
  const user = await d.db
    .insertInto('users')
    .values({
      username: 'ledger',
      password_hash: 'x',
      role: 1,
      status: 1,
      created_time: now,
      updated_time: now,
    } as never)
    .returning('id')
    .executeTakeFirstOrThrow();
  for (const concurrency of [1, 50]) {
    const key = await d.db
      .insertInto('api_keys')
      .values({
        user_id: user.id,
        name: `k${concurrency}`,
        key_hash: `h${concurrency}`,
        key_prefix: 'sk-x',
        status: 1,
        quota_limit_micros: 1e12,
        created_time: now,
        updated_time: now,
      } as never)
      .returning('id')
      .executeTakeFirstOrThrow();
    const writer = new RequestLogWriter(new LogsRepo(d), { flushMs: 500, batch: 200 });
    const ledger = new DeferredSettleLedger(createUsageStore(d), writer);
    let settled = 0;
    let n = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (n < CYCLES) {
          const i = n++;
          const r = await ledger.reserve({ keyId: key.id, userId: user.id, micros: 5_000 });
          const actual = 1_000 + (i % 7);
          settled += actual;
          await ledger.settle(r, actual);
          writer.record({
            request_id: `r${i}`,
            user_id: user.id,
            key_id: key.id,
            endpoint: 'chat.completions',
            model: 'm',
            status: 200,
            cost_micros: actual,
          });
        }
      }),
    );
    const ms = performance.now() - t0;
    await writer.close();
    const row = await d.db
      .selectFrom('api_keys')
      .select('quota_used_micros')
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow();
    const exact = Number(row.quota_used_micros) === settled;
    process.stdout.write(
      `${tdb.url.startsWith('postgres') ? 'postgresql' : 'sqlite'} concurrency ${concurrency}: ${(ms / CYCLES).toFixed(4)} ms per cycle, ${Math.round((CYCLES / ms) * 1000)} cycles/s, spend exact: ${exact}\n`,
    );
    if (!exact) process.exitCode = 1;
  }
} finally {
  await d.close?.();
  await tdb.drop();
}
