import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { DeferredSettleLedger } from '../../src/access/quota/deferred-ledger.js';
import { loadConfig } from '../../src/config/load-config.js';
import { RequestLogWriter } from '../../src/gateway/usage/request-log-writer.js';
import { startGateway } from '../../src/main.js';
import { openDatabase } from '../../src/store/database.js';
import { oaChunk, sse } from '../chat/chat-helpers.js';
import { createTestDatabase } from '../helpers/databases.js';
import { type FakeRoutes, startFakeUpstream } from '../helpers/fake-upstream.js';

/** Pino lines at warn or above, parsed. */
function capture(): { log: FastifyBaseLogger; loud(): any[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return {
    log: pino({ level: 'info' }, sink) as FastifyBaseLogger,
    loud: () =>
      lines
        .join('')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .filter((l) => l.level >= 40),
  };
}

/**
 * A gateway with one upstream answering chat with `route`, and an API key with a quota limit, so
 * each request reserves its estimate and is refunded the difference when it settles.
 */
async function setup(route: FakeRoutes[string]) {
  const up = await startFakeUpstream({ 'POST /v1/chat/completions': route });
  const db = await createTestDatabase();
  const config = loadConfig(
    {},
    {
      server: { host: '127.0.0.1', port: 0, serve_console: false, shutdown_grace_ms: 60_000 },
      database: { url: db.url },
      auth: { root_password: 'a-root-password-for-shutdown' },
      catalog: { seed: false },
      channels: [
        { name: 'up', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: ['acme/m'] },
      ],
      models: [
        { id: 'acme/m', context_length: 1000, pricing: { prompt: '0.000001', completion: '0.000002' } },
      ],
    },
  );
  const cap = capture();
  const gw = await startGateway(config, cap.log);
  const user = (await gw.services.repos.users.byId(1))!;
  const { secret } = await gw.services.apiKeys.create(user, { name: 'limited', quota_limit: 1 });
  const chat = (stream: boolean, signal: AbortSignal) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      signal,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
      body: JSON.stringify({
        model: 'acme/m',
        messages: [{ role: 'user', content: 'hi' }],
        stream,
        max_tokens: 100,
      }),
    });
  /** Read from the database after the stop. */
  const stored = async () => {
    const d = openDatabase(db.url);
    try {
      const logs = await d.db.selectFrom('request_logs').selectAll().execute();
      const key = await d.db.selectFrom('api_keys').select('quota_used_micros').executeTakeFirstOrThrow();
      const root = await d.db
        .selectFrom('users')
        .select('quota_used_micros')
        .where('id', '=', 1)
        .executeTakeFirstOrThrow();
      return { logs, keySpent: Number(key.quota_used_micros), userSpent: Number(root.quota_used_micros) };
    } finally {
      await d.close();
    }
  };
  const close = async () => {
    gw.app.server.closeAllConnections();
    await gw.stop();
    await up.close();
    await db.drop();
  };
  return { up, gw, chat, stored, close, cap };
}

describe('a request that settles after the server closed, during a stop', () => {
  it('a client that leaves a non-streamed request during the drain: its row is written and its reservation given back', async () => {
    const d = await setup({ delayMs: 30_000, json: {} });
    try {
      const abort = new AbortController();
      const pending = d.chat(false, abort.signal).catch(() => 'left');
      await expect.poll(() => d.up.requests.length, { timeout: 5_000, interval: 10 }).toBe(1);
      const stopped = d.gw.stop();
      // The stop is under way (the server no longer accepts) when the client goes.
      await new Promise((r) => setTimeout(r, 50));
      abort.abort();
      expect(await pending).toBe('left');
      await stopped;
      const { logs, keySpent, userSpent } = await d.stored();
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatchObject({ status: 499, error_kind: 'aborted', cost_micros: 0 });
      // Before: the writer had closed when the request settled; no row, and the key's spend stayed
      // up by the whole estimate.
      expect(keySpent).toBe(0);
      expect(userSpent).toBe(0);
      expect(d.cap.loud().filter((l) => l.level >= 50)).toEqual([]);
    } finally {
      await d.close();
    }
  });

  it('a client that leaves a stream during the drain: billed for what was generated, the rest of its estimate given back', async () => {
    const d = await setup({
      sse: [...sse([oaChunk({ role: 'assistant', content: 'some words were generated' })], false), 'hang'],
    });
    try {
      const abort = new AbortController();
      const reader = (await d.chat(true, abort.signal)).body!.getReader();
      let seen = '';
      while (!seen.includes('generated')) seen += new TextDecoder().decode((await reader.read()).value);
      const stopped = d.gw.stop();
      await new Promise((r) => setTimeout(r, 50));
      abort.abort();
      await stopped;
      const { logs, keySpent, userSpent } = await d.stored();
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatchObject({ status: 499, error_kind: 'aborted', stream: 1 });
      const cost = Number(logs[0]!.cost_micros);
      expect(cost).toBeGreaterThan(0);
      expect(keySpent).toBe(cost);
      expect(userSpent).toBe(cost);
    } finally {
      await d.close();
    }
  });
});

describe('the quota ledger and the writer on shutdown', () => {
  /** A settlement queue that records what it is given. */
  function recordingQueue() {
    const settled: number[] = [];
    let hook = (_all: boolean) => {};
    return {
      settled,
      write: (all: boolean) => hook(all),
      queue: {
        settle: (_k: number | null, _u: number, delta: number) => void settled.push(delta),
        owes: () => false,
        flush: async () => hook(true),
        beforeWrite: (fn: (all: boolean) => void) => {
          hook = fn;
        },
        wake: () => {},
      },
    };
  }

  it('a refund settled after the ledger closed is queued, not kept as credit nothing gives back', async () => {
    const q = recordingQueue();
    const ledger = new DeferredSettleLedger({ reserve: async () => null }, q.queue);
    const held = await ledger.reserve({ keyId: 1, userId: 1, micros: 1_000 });
    await ledger.close();
    ledger.settle(held, 100);
    expect(ledger.credit).toBe(0);
    expect(q.settled.reduce((a, b) => a + b, 0)).toBe(-900);
  });

  it('close() gives back what the sink holds (a reservation whose answer was lost) even with nothing buffered', async () => {
    let writes = 0;
    let pending = true;
    const w = new RequestLogWriter(
      {
        insertMany: async () => {
          writes++;
          pending = false;
        },
        pending: () => pending,
      },
      { flushMs: 60_000, batch: 100 },
    );
    await w.close();
    expect(writes).toBe(1);
    expect(pending).toBe(false);
  });

  it('a row or settlement that comes after close() and cannot be written is reported at error level, with what was lost', async () => {
    const errors: Array<{ obj: any; msg: string }> = [];
    const w = new RequestLogWriter(
      {
        insertMany: async () => {
          throw new Error('the database is closed');
        },
      },
      {
        flushMs: 60_000,
        batch: 100,
        log: { warn: () => {}, error: (obj, msg) => void errors.push({ obj, msg }) },
      },
    );
    await w.close();
    w.settle(7, 3, -4_200);
    w.record({
      request_id: 'late-1',
      user_id: 3,
      key_id: 7,
      endpoint: 'chat.completions',
      model: 'm',
      status: 499,
    });
    await expect.poll(() => errors.length).toBeGreaterThan(0);
    expect(errors[0]!.msg).toContain('after shutdown');
    expect(errors[0]!.obj).toMatchObject({ lost_settlements: 1, lost_spend: -4_200 });
    expect(w.pending).toBe(0);
  });
});
