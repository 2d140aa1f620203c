import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { toLogRow } from '../../src/gateway/usage/request-log-entry.js';
import { RequestLogWriter } from '../../src/gateway/usage/request-log-writer.js';
import { openDatabase } from '../../src/store/database.js';
import { isRefusedData } from '../../src/store/db-errors.js';
import type { LogsRepo, NewRequestLogRow } from '../../src/store/logs-repo.js';
import type { SpendDeltas } from '../../src/store/usage-store.js';
import { onPostgres } from '../helpers/databases.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({}, { redis: false });
});
afterAll(async () => gw?.close());

const entry = (i: number, tag: string) => ({
  request_id: `${tag}-${i}`,
  user_id: 1,
  key_id: null,
  endpoint: 'chat.completions',
  model: `m-${tag}`,
  status: 200,
  prompt_tokens: i,
  cost_micros: 10,
  attempts: [{ provider: 'p', status: 200 }],
});

/** The real repository, with injected failures and a record of each batch. */
function faultySink(repo: LogsRepo, failFirst: number) {
  const batches: number[] = [];
  let calls = 0;
  const sink = {
    failing: true,
    async insertMany(rows: NewRequestLogRow[]) {
      calls++;
      if (calls <= failFirst || (failFirst < 0 && sink.failing)) throw new Error('database unavailable');
      batches.push(rows.length);
      await repo.insertMany(rows);
    },
  };
  return { sink, batches, calls: () => calls };
}

const countModel = (model: string) => gw.services.repos.logs.count({ model });

describe('request log writer', () => {
  it('graceful shutdown writes every recorded entry', async () => {
    const local = await startTestGateway(
      { log: { request_logs_flush_ms: 60_000, request_logs_batch: 200 } },
      { redis: false },
    );
    const n = 1234;
    for (let i = 0; i < n; i++) local.services.requestLogs.record(entry(i, 'shutdown'));
    // record() only buffers: nothing was written synchronously.
    expect(local.services.requestLogs.pending).toBe(n);
    await local.stop();
    const db = openDatabase(local.databaseUrl);
    try {
      const r = await db.db
        .selectFrom('request_logs')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('model', '=', 'm-shutdown')
        .executeTakeFirstOrThrow();
      expect(Number(r.n)).toBe(n);
    } finally {
      await db.close();
      await local.close();
    }
  });

  it('writes in multi-row batches of request_logs_batch, with every field stored', async () => {
    const { sink, batches } = faultySink(gw.services.repos.logs, 0);
    const w = new RequestLogWriter(sink, { flushMs: 60_000, batch: 200 });
    for (let i = 0; i < 450; i++) w.record(entry(i, 'batches'));
    await w.flush();
    expect(batches).toEqual([200, 200, 50]);
    expect(await countModel('m-batches')).toBe(450);
    w.record({
      created_time: 1_700_000_000,
      request_id: 'full-1',
      user_id: 1,
      key_id: 9,
      endpoint: 'embeddings',
      model: 'm-full',
      provider: 'open"ai\\ {a,b} NULL é\t\n\r\\N\\.\\t',
      channel_id: 3,
      prompt_tokens: 11,
      completion_tokens: 22,
      cost_micros: 33,
      latency_ms: 44,
      ttft_ms: 5,
      status: 502,
      error_kind: 'server_error',
      stream: true,
      attempts: [{ channel_id: 3, error_kind: 'server_error' }],
    });
    await w.close();
    const { rows } = await gw.services.repos.logs.list({ model: 'm-full' }, 0, 10);
    expect(rows).toHaveLength(1);
    // The stored row: the names list() joins in (user, key) are not columns of request_logs.
    const { id: _id, username: _u, user_display_name: _d, key_name: _k, ...row } = rows[0]!;
    expect(row).toEqual({
      created_time: 1_700_000_000,
      request_id: 'full-1',
      user_id: 1,
      key_id: 9,
      endpoint: 'embeddings',
      model: 'm-full',
      provider: 'open"ai\\ {a,b} NULL é\t\n\r\\N\\.\\t',
      channel_id: 3,
      prompt_tokens: 11,
      completion_tokens: 22,
      cost_micros: 33,
      latency_ms: 44,
      ttft_ms: 5,
      status: 502,
      error_kind: 'server_error',
      stream: 1,
      attempts: JSON.stringify([{ channel_id: 3, error_kind: 'server_error' }]),
    });
  });

  it('stores every field of every row whether written ten to a statement or alone', async () => {
    // 23 rows: two statements of ten on SQLite, then three alone; one COPY on PostgreSQL.
    const full = (i: number) => ({
      created_time: 1_700_000_000 + i,
      request_id: `every-${i}`,
      user_id: 1,
      key_id: i % 2 ? 9 + i : null,
      endpoint: i % 3 ? 'chat.completions' : 'embeddings',
      model: 'm-every',
      provider: `p${i}`,
      channel_id: i % 4 ? i : null,
      prompt_tokens: 100 + i,
      completion_tokens: 200 + i,
      cost_micros: 300 + i,
      latency_ms: 400 + i,
      ttft_ms: i % 5 ? 500 + i : null,
      status: i % 6 ? 200 : 502,
      error_kind: i % 6 ? null : `kind-${i}`,
      stream: i % 2 === 0,
      attempts: i % 7 ? null : [{ channel_id: i }],
    });
    const w = new RequestLogWriter(gw.services.repos.logs, { flushMs: 60_000, batch: 200 });
    for (let i = 0; i < 23; i++) w.record(full(i));
    await w.close();
    const { rows } = await gw.services.repos.logs.list({ model: 'm-every' }, 0, 50);
    expect(rows).toHaveLength(23);
    const stored = new Map(
      rows.map(({ id: _id, username: _u, user_display_name: _d, key_name: _k, ...r }) => [r.request_id, r]),
    );
    for (let i = 0; i < 23; i++) {
      const e = full(i);
      expect(stored.get(e.request_id)).toEqual({
        ...e,
        stream: e.stream ? 1 : 0,
        attempts: e.attempts === null ? null : JSON.stringify(e.attempts),
      });
    }
  });

  it('a backlog larger than one statement is written whole, in order', async () => {
    const w = new RequestLogWriter(gw.services.repos.logs, { flushMs: 60_000, batch: 5_000 });
    for (let i = 0; i < 1_234; i++) w.record(entry(i, 'backlog'));
    await w.close();
    expect(await countModel('m-backlog')).toBe(1_234);
    const { rows } = await gw.services.repos.logs.list({ model: 'm-backlog' }, 0, 2);
    expect(rows.map((r) => r.request_id)).toEqual(['backlog-1233', 'backlog-1232']);
  });

  it('flushes on its own after flush_ms, and at once when a batch is waiting', async () => {
    const w = new RequestLogWriter(gw.services.repos.logs, { flushMs: 20, batch: 1_000 });
    for (let i = 0; i < 7; i++) w.record(entry(i, 'timer'));
    await vi.waitFor(async () => expect(await countModel('m-timer')).toBe(7), { timeout: 10_000 });
    const big = new RequestLogWriter(gw.services.repos.logs, { flushMs: 3_600_000, batch: 5 });
    for (let i = 0; i < 5; i++) big.record(entry(i, 'full-batch'));
    await vi.waitFor(async () => expect(await countModel('m-full-batch')).toBe(5), { timeout: 10_000 });
    await Promise.all([w.close(), big.close()]);
  });

  it('observers see every entry, even dropped ones, and one that throws breaks nothing', async () => {
    const w = new RequestLogWriter(gw.services.repos.logs, {
      flushMs: 60_000,
      batch: 1_000,
      maxBuffered: 3,
      log: { warn() {}, error() {} },
    });
    const seen: string[] = [];
    w.observe(() => {
      throw new Error('observer bug');
    });
    w.observe((e) => seen.push(e.request_id));
    for (let i = 0; i < 5; i++) w.record(entry(i, 'observed'));
    expect(seen).toEqual(['observed-0', 'observed-1', 'observed-2', 'observed-3', 'observed-4']);
    expect(w.pending).toBe(3);
    await w.close();
    expect(await countModel('m-observed')).toBe(3);
  });

  it('a failing database is retried with backoff and loses nothing', async () => {
    const { sink, calls } = faultySink(gw.services.repos.logs, 3);
    const warn = vi.fn();
    const w = new RequestLogWriter(sink, { flushMs: 10, batch: 5, log: { warn, error: vi.fn() } });
    for (let i = 0; i < 23; i++) w.record(entry(i, 'retry'));
    await vi.waitFor(async () => expect(await countModel('m-retry')).toBe(23), { timeout: 15_000 });
    expect(calls()).toBeGreaterThan(3);
    expect(warn.mock.calls.some(([, msg]) => /flush failed; will retry/.test(msg))).toBe(true);
    const { rows } = await gw.services.repos.logs.list({ model: 'm-retry' }, 0, 100);
    expect(new Set(rows.map((r) => r.request_id)).size).toBe(23);
    await w.close();
  });

  it('bounds the buffer during an outage with a clear warning, and writes what it kept', async () => {
    const { sink } = faultySink(gw.services.repos.logs, -1);
    const warn = vi.fn();
    const w = new RequestLogWriter(sink, {
      flushMs: 3_600_000,
      batch: 100,
      maxBuffered: 10,
      log: { warn, error: vi.fn() },
    });
    for (let i = 0; i < 15; i++) w.record(entry(i, 'overflow'));
    expect(w.pending).toBe(10);
    const full = warn.mock.calls.filter(([, msg]) => /buffer full/.test(msg));
    expect(full).toHaveLength(1);
    await expect(w.flush()).rejects.toThrow('database unavailable');
    expect(w.pending).toBe(10);
    sink.failing = false;
    await w.close();
    expect(await countModel('m-overflow')).toBe(10);
    expect(warn.mock.calls.some(([o, msg]) => /recovered/.test(msg) && o.dropped === 5)).toBe(true);
  });

  it('gives up on shutdown after a few attempts, reporting how many were lost', async () => {
    const { sink } = faultySink(gw.services.repos.logs, -1);
    const error = vi.fn();
    const w = new RequestLogWriter(sink, {
      flushMs: 10,
      batch: 100,
      closeAttempts: 2,
      log: { warn: vi.fn(), error },
    });
    w.record(entry(0, 'lost'));
    await w.close();
    expect(error).toHaveBeenCalledTimes(1);
    expect(error.mock.calls[0]![0]).toMatchObject({ lost: 1 });
  });
  it('under a steady trickle each write carries a full batch, not the few entries of one turn', async () => {
    const batches: number[] = [];
    const sink = {
      async insertMany(rows: NewRequestLogRow[]) {
        batches.push(rows.length);
        await new Promise((r) => setImmediate(r));
      },
    };
    // No timer write during the loop (a slow machine's turns would let a short one fire).
    const w = new RequestLogWriter(sink, { flushMs: 60_000, batch: 200 });
    // 3 entries per event-loop turn, like requests arriving while a write runs.
    for (let turn = 0; turn < 400; turn++) {
      for (let i = 0; i < 3; i++) w.record(entry(turn * 3 + i, 'trickle'));
      await new Promise((r) => setImmediate(r));
    }
    await w.close();
    expect(batches.reduce((a, b) => a + b, 0)).toBe(1_200);
    // Full batches of 200 (the rest at close); writing whenever a write ends would be ~400.
    expect(batches.length).toBeLessThanOrEqual(7);
    expect(batches.slice(0, 6).every((n) => n === 200)).toBe(true);
  });
  it('rowsPerWrite slices a batch into transactions an event-loop turn apart, spend kept with its rows', async () => {
    // SQLite's writes block the event loop: a 200-row transaction held every request arriving
    // meanwhile for ~2 ms. Slices let requests run between them; each carries the settlements
    // queued before its rows, so no commit logs a cost whose settlement is not written.
    const writes: Array<{ rows: string[]; spend: number }> = [];
    let turns = 0;
    let counting = true;
    const tick = () => {
      if (!counting) return;
      turns++;
      setImmediate(tick);
    };
    const sink = {
      async insertMany(rows: NewRequestLogRow[], spend?: SpendDeltas) {
        writes.push({
          rows: rows.map((r) => r.request_id ?? ''),
          spend: spend ? [...spend.users.values()].reduce((a, b) => a + b, 0) : 0,
        });
      },
    };
    const w = new RequestLogWriter(sink, { flushMs: 60_000, batch: 200, rowsPerWrite: 50 });
    for (let i = 0; i < 230; i++) {
      w.settle(1, 1, 10);
      w.record(entry(i, 'sliced'));
    }
    setImmediate(tick);
    // A full batch was kicked: only whole batches go now (200 rows in 4 slices), the 30-row tail
    // waits for its timer.
    await vi.waitFor(() => expect(writes.length).toBe(4), { timeout: 2000 });
    await new Promise((r) => setTimeout(r, 20));
    expect(writes.map((x) => x.rows.length)).toEqual([50, 50, 50, 50]);
    expect(w.pending).toBe(30);
    // Settlement i was queued before row i; a slice takes the settlements queued before the row
    // that ends it, so the first also carries row 50's: every settlement once, in order.
    expect(writes.map((x) => x.spend)).toEqual([510, 500, 500, 500]);
    expect(writes.flatMap((x) => x.rows)).toEqual(Array.from({ length: 200 }, (_, i) => `sliced-${i}`));
    // Requests ran between the slices: the slices were not written in one synchronous run.
    expect(turns).toBeGreaterThanOrEqual(3);
    counting = false;
    await w.close();
    expect(writes.map((x) => x.rows.length)).toEqual([50, 50, 50, 50, 30]);
    expect(writes.at(-1)!.spend).toBe(290);
    expect(writes.reduce((a, x) => a + x.spend, 0)).toBe(2_300);
  });
  it('on a slow database, what arrives during a write waits for a full batch', async () => {
    // A write that takes a few ms (PostgreSQL's round trips and commit) while requests keep
    // coming: the writes behind it must not each take the few entries of one millisecond.
    const batches: number[] = [];
    const sink = {
      async insertMany(rows: NewRequestLogRow[]) {
        batches.push(rows.length);
        await new Promise((r) => setTimeout(r, 5));
      },
    };
    const w = new RequestLogWriter(sink, { flushMs: 500, batch: 200 });
    for (let turn = 0; turn < 200; turn++) {
      for (let i = 0; i < 6; i++) w.record(entry(turn * 6 + i, 'slow'));
      await new Promise((r) => setTimeout(r, 1));
    }
    await w.close();
    expect(batches.reduce((a, b) => a + b, 0)).toBe(1_200);
    // 1,200 entries in batches of 200: 6, plus the rest at close. A write per timer turn behind
    // the running one gave ~100 batches of a few rows.
    expect(batches.length).toBeLessThanOrEqual(10);
  });

  it('stores what PostgreSQL text and integer columns cannot take, on both backends', async () => {
    // A NUL in a client's model name, or an upstream's absurd usage, once failed the whole batch
    // on PostgreSQL, and every retry of it: no request log or spend was written after it.
    const w = new RequestLogWriter(gw.services.repos.logs, { flushMs: 60_000, batch: 200 });
    w.record({ ...entry(0, 'nul'), request_id: 'nul-0', model: 'm-nul\u0000x', error_kind: 'a\u0000b' });
    w.record({
      ...entry(1, 'huge'),
      prompt_tokens: 5e9,
      completion_tokens: -1e12,
      latency_ms: Number.POSITIVE_INFINITY,
      ttft_ms: 3e10,
      cost_micros: 1e20,
      provider: `p${'\u0000'.repeat(200)}`,
    });
    await w.close();
    expect(w.pending).toBe(0);
    const nul = (await gw.services.repos.logs.list({ model: 'm-nul\uFFFDx' }, 0, 10)).rows;
    expect(nul.map((r) => [r.request_id, r.error_kind])).toEqual([['nul-0', 'a\uFFFDb']]);
    const [huge] = (await gw.services.repos.logs.list({ model: 'm-huge' }, 0, 10)).rows;
    expect(huge).toMatchObject({
      prompt_tokens: 2_147_483_647,
      completion_tokens: -2_147_483_647,
      latency_ms: 0,
      ttft_ms: 2_147_483_647,
      cost_micros: Number.MAX_SAFE_INTEGER,
      provider: `p${'\uFFFD'.repeat(127)}`,
    });
  });

  it('a long refused batch is split without losing or repeating its settlements', async () => {
    // 130,000 rows in one batch: spreading them as arguments overflowed the stack, after the
    // settlements were written and before they left the buffer, so every retry wrote them again.
    const spent: number[] = [];
    let rowsWritten = 0;
    const sink = {
      async insertMany(rows: NewRequestLogRow[], spend?: SpendDeltas) {
        if (rows.length > 1) throw Object.assign(new Error('refused'), { code: '23514' });
        rowsWritten += rows.length;
        if (spend) spent.push(...spend.users.values());
      },
    };
    const w = new RequestLogWriter(sink, {
      flushMs: 60_000,
      batch: 200_000,
      log: { warn: vi.fn(), error: vi.fn() },
    });
    w.settle(null, 1, 5);
    for (let i = 0; i < 130_000; i++) w.record(entry(i, 'long'));
    await w.flush();
    expect(spent).toEqual([5]);
    expect(rowsWritten).toBe(130_000);
    expect(w.pending).toBe(0);
    // Within the default timeout: the 130,000 rows are written one to a batch, and each write
    // took its row off the front of the queue with a splice that moved every row behind it
    // (quadratic: 30 s on a quiet machine, over a minute on a busy one). Now about a second.
  });

  it('a row the database refuses is dropped alone; the connection stays usable (a failed COPY on PostgreSQL)', async () => {
    const error = vi.fn();
    const repo = gw.services.repos.logs;
    // Past toLogRow, as a bug would: PostgreSQL refuses 1.5 for an integer column (SQLite stores it).
    const bad = { ...entry(1, 'refused'), request_id: 'refused-bad' };
    const sink = {
      insertMany: (rows: NewRequestLogRow[], spend?: SpendDeltas) =>
        repo.insertMany(
          rows.map((r) => (r.request_id === 'refused-bad' ? { ...r, prompt_tokens: 1.5 } : r)),
          spend,
        ),
    };
    const w = new RequestLogWriter(sink, { flushMs: 60_000, batch: 200, log: { warn: vi.fn(), error } });
    w.record(entry(0, 'refused'));
    w.record(bad);
    w.record(entry(2, 'refused'));
    await w.close();
    const ids = (await repo.list({ model: 'm-refused' }, 0, 10)).rows.map((r) => r.request_id).sort();
    expect(ids).toEqual(onPostgres ? ['refused-0', 'refused-2'] : ['refused-0', 'refused-2', 'refused-bad']);
    expect(error).toHaveBeenCalledTimes(onPostgres ? 2 : 0);
  });

  it.runIf(onPostgres)(
    'a connection lost during a write fails that write only: no crash, and the next write goes through',
    async () => {
      // pg-pool does not listen for 'error' on a checked-out client: a server that went away
      // mid-COPY (restart, failover, pg_terminate_backend) crashed the whole process.
      const repo = gw.services.repos.logs;
      const admin = new pg.Client({ connectionString: gw.databaseUrl });
      // Outside the locking transaction: inside one, pg_stat_activity is a snapshot taken once.
      const killer = new pg.Client({ connectionString: gw.databaseUrl });
      await Promise.all([admin.connect(), killer.connect()]);
      try {
        await admin.query('BEGIN; LOCK TABLE request_logs IN ACCESS EXCLUSIVE MODE');
        const write = repo.insertMany([toLogRow(entry(0, 'lostconn'), 1)]).then(
          () => undefined,
          (e: unknown) => e,
        );
        // The COPY waits for the lock; then its backend is terminated.
        await vi.waitFor(
          async () => {
            const r = await killer.query(
              "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'COPY request_logs%' AND pid <> pg_backend_pid()",
            );
            expect(r.rowCount).toBeGreaterThan(0);
          },
          { timeout: 15_000, interval: 20 },
        );
        expect(await write).toBeInstanceOf(Error);
        await admin.query('ROLLBACK');
        await repo.insertMany([toLogRow(entry(1, 'lostconn'), 1)]);
        expect(await countModel('m-lostconn')).toBe(1);
      } finally {
        await Promise.all([admin.end(), killer.end()]);
      }
    },
  );

  it('a batch refused for its data is written row by row: the refused row is dropped, the rest and all spend kept', async () => {
    const written: string[] = [];
    const spent: number[] = [];
    let transientOnce = true;
    const sink = {
      async insertMany(rows: NewRequestLogRow[], spend?: SpendDeltas) {
        if (rows.some((r) => r.model === 'poison'))
          throw Object.assign(new Error('invalid byte sequence'), { code: '22021' });
        // One transient failure on the first single-row write: only what is left is retried.
        if (rows.length === 1 && transientOnce) {
          transientOnce = false;
          throw Object.assign(new Error('connection reset'), { code: 'ECONNRESET' });
        }
        written.push(...rows.map((r) => r.request_id));
        if (spend) spent.push(...spend.users.values());
      },
    };
    const error = vi.fn();
    const w = new RequestLogWriter(sink, { flushMs: 60_000, batch: 200, log: { warn: vi.fn(), error } });
    w.record(entry(0, 'ok'));
    w.settle(1, 7, 100);
    w.record({ ...entry(1, 'x'), model: 'poison' });
    w.record(entry(2, 'ok'));
    w.settle(null, 7, 5);
    await expect(w.flush()).rejects.toThrow('connection reset');
    // The spend went alone and is no longer owed; the rows wait.
    expect(spent).toEqual([105]);
    expect(w.pending).toBe(3);
    await w.flush();
    expect(w.pending).toBe(0);
    expect(written).toEqual(['ok-0', 'ok-2']);
    expect(spent).toEqual([105]);
    // The transient failure retried the single row it hit, not the refused batch: one refusal.
    expect(error.mock.calls.map(([, msg]) => msg)).toEqual([
      expect.stringMatching(/batch refused by the database/),
      expect.stringMatching(/row refused by the database; dropped/),
    ]);
    expect(error.mock.calls[1]![0]).toMatchObject({ request_id: 'x-1', model: 'poison' });
    // Later entries go in batches again.
    w.record(entry(3, 'ok'));
    await w.close();
    expect(written).toEqual(['ok-0', 'ok-2', 'ok-3']);
  });
});

/**
 * After a long database outage: before, the retries had backed off to one every 30 s, so once the
 * database was back rows and settlements waited up to 30 s more (and the buffer kept growing),
 * and every retry logged a warning. Fake timers: the writer's clock is setTimeout and Date.now.
 */
describe('request log writer after a long outage', () => {
  /** Rows kept in memory: the test is about when the writer writes, not what the database stores. */
  function memorySink() {
    const rows: NewRequestLogRow[] = [];
    const sink = {
      failing: true,
      async insertMany(batch: NewRequestLogRow[]) {
        if (sink.failing) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
        rows.push(...batch);
      },
    };
    return { sink, rows };
  }

  it('retries at least every 5 s, and logs the outage once a minute, not at every retry', async () => {
    vi.useFakeTimers();
    try {
      const { sink, rows } = memorySink();
      const warn = vi.fn();
      const w = new RequestLogWriter(sink, { flushMs: 500, batch: 100, log: { warn, error: vi.fn() } });
      w.record(entry(0, 'long-outage'));
      await vi.advanceTimersByTimeAsync(10 * 60_000 + 7_000);
      const failed = warn.mock.calls.filter(([, msg]) => /flush (failed|still failing)/.test(msg));
      expect(failed[0]![1]).toBe('request log flush failed; will retry');
      expect(failed.length).toBeLessThanOrEqual(11);
      expect(failed.slice(1).every(([, msg]) => msg === 'request log flush still failing')).toBe(true);

      sink.failing = false;
      w.record(entry(1, 'long-outage'));
      await vi.advanceTimersByTimeAsync(5_000);
      expect(rows.map((r) => r.request_id)).toEqual(['long-outage-0', 'long-outage-1']);
      expect(warn.mock.calls.at(-1)![1]).toBe('request log writes recovered');
      await w.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('writes as soon as it is told the database is back, without waiting out its backoff', async () => {
    vi.useFakeTimers();
    try {
      const { sink, rows } = memorySink();
      const w = new RequestLogWriter(sink, {
        flushMs: 500,
        batch: 100,
        log: { warn: vi.fn(), error: vi.fn() },
      });
      w.databaseBack(); // nothing failing: nothing to do
      w.record(entry(0, 'back'));
      await vi.advanceTimersByTimeAsync(60_000);
      expect(rows).toHaveLength(0);
      sink.failing = false;
      w.databaseBack();
      await vi.advanceTimersByTimeAsync(0);
      expect(rows.map((r) => r.request_id)).toEqual(['back-0']);
      await w.close();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('isRefusedData', () => {
  it('tells data refusals from outages on both backends', () => {
    for (const code of [
      '22021',
      '22003',
      '23502',
      'SQLITE_CONSTRAINT_NOTNULL',
      'SQLITE_MISMATCH',
      'SQLITE_TOOBIG',
    ])
      expect([code, isRefusedData({ code })]).toEqual([code, true]);
    for (const code of [
      'ECONNRESET',
      '57P01',
      '08006',
      '40001',
      'SQLITE_BUSY',
      'SQLITE_IOERR_WRITE',
      undefined,
      22021,
    ])
      expect([code, isRefusedData({ code })]).toEqual([code, false]);
    expect(isRefusedData(null)).toBe(false);
  });
});
