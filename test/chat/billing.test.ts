import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  type ChatGateway,
  model,
  oaChunk,
  oaCompletion,
  requestLogs,
  sse,
  startChatGateway,
  userMsg,
} from './chat-helpers.js';

/**
 * Billing under stress: a client that leaves mid-stream frees the upstream at once and is billed
 * for what was generated; 200 concurrent requests on one key with a limit never overspend by
 * more than one reservation, and what the key was charged equals the sum of the logged costs.
 * Runs on SQLite, and on PostgreSQL when TEST_DATABASE_URL is set.
 */
const LIMIT_USD = 0.01;
let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': (req) =>
      req.json.messages[0].content === 'leave'
        ? {
            sse: [
              ...sse([oaChunk({ role: 'assistant', content: 'some words were generated' })], false),
              'hang',
            ],
          }
        : req.json.messages[0].content === 'slow'
          ? // Left before the upstream answered (it would, after the test is over).
            {
              delayMs: 1_500,
              ...(req.json.stream
                ? { sse: sse([oaChunk({ content: 'late' })]) }
                : { json: oaCompletion('late') }),
            }
          : { delayMs: 20, json: oaCompletion('ok', { prompt_tokens: 50, completion_tokens: 40 }) },
  });
  c = await startChatGateway(
    {
      channels: [
        { name: 'up', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: ['acme/m'] },
      ],
      models: [model('acme/m')],
      gateway: { retry_base_ms: 1, first_byte_timeout_ms: 2000 },
    },
    { quota_limit: LIMIT_USD },
  );
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

describe('client disconnect mid-stream', () => {
  it('aborts the upstream at once and bills what was generated', async () => {
    const abort = new AbortController();
    const res = await fetch(`${c.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'acme/m', messages: userMsg('leave'), stream: true }),
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    let seen = '';
    while (!seen.includes('generated')) seen += new TextDecoder().decode((await reader.read()).value);
    const upstreamReq = up.requests.at(-1)!;
    await new Promise((r) => setTimeout(r, 200));
    const t0 = Date.now();
    abort.abort();
    const closed = await Promise.race([
      upstreamReq.closed,
      // The upstream hangs forever: still open after 5 s means the abort never reached it. (The
      // abort takes milliseconds; 5 s leaves room for a loaded machine.)
      new Promise((r) => setTimeout(() => r('still open'), 5_000)),
    ]);
    expect(closed).toEqual({ completed: false });
    expect(Date.now() - t0).toBeLessThan(5_000);
    let log: any;
    for (let i = 0; i < 100 && !log; i++) {
      log = (await requestLogs(c)).find((l) => l.stream);
      if (!log) await new Promise((r) => setTimeout(r, 50));
    }
    expect(log).toMatchObject({ status: 499, provider: 'up', error_kind: 'aborted' });
    expect(log.completion_tokens).toBeGreaterThan(0);
    expect(log.cost).toBeGreaterThan(0);
    // The try the client cut is in the trail, ended by the client, with how long it ran.
    expect(log.attempts).toEqual([
      {
        model: 'acme/m',
        provider: 'up',
        channel_id: expect.any(Number),
        ok: false,
        error_kind: 'client_aborted',
        ms: expect.any(Number),
      },
    ]);
    // Until the cut (the client stayed 200 ms after the first chunk), not until the first chunk.
    expect(log.attempts[0].ms).toBeGreaterThanOrEqual(190);
    expect(log.attempts[0].ms).toBeLessThanOrEqual(log.latency_ms);
  });

  for (const stream of [false, true])
    it(`a client that leaves before the upstream answered leaves that try in the trail (${stream ? 'stream' : 'non-stream'})`, async () => {
      const abort = new AbortController();
      const sent = fetch(`${c.gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'acme/m', messages: userMsg('slow'), stream }),
        signal: abort.signal,
      }).catch(() => 'aborted');
      const before = up.requests.length;
      await expect.poll(() => up.requests.length, { timeout: 5_000, interval: 10 }).toBe(before + 1);
      await new Promise((r) => setTimeout(r, 200));
      abort.abort();
      expect(await sent).toBe('aborted');
      let log: any;
      for (let i = 0; i < 100 && !log; i++) {
        log = (await requestLogs(c)).find(
          (l) => l.status === 499 && l.stream === stream && l.completion_tokens === 0,
        );
        if (!log) await new Promise((r) => setTimeout(r, 50));
      }
      expect(log).toMatchObject({ status: 499, provider: 'up', error_kind: 'aborted' });
      expect(log.attempts).toEqual([
        {
          model: 'acme/m',
          provider: 'up',
          channel_id: expect.any(Number),
          ok: false,
          error_kind: 'client_aborted',
          ms: expect.any(Number),
        },
      ]);
      // It ran from the request to the abort: at least the 200 ms waited, at most the request.
      expect(log.attempts[0].ms).toBeGreaterThanOrEqual(190);
      expect(log.attempts[0].ms).toBeLessThanOrEqual(log.latency_ms);
    });
});

describe('quota under 200 concurrent requests', () => {
  it('never overspends beyond one reservation; charged total equals the logged costs; the rest get 402', async () => {
    // Exact only after a flush: the earlier tests' unused credit stays counted for a few seconds.
    await c.gw.services.requestLogs.flush();
    const keys = (await c.gw.call('GET', '/api/key', { cookie: c.cookie })).body.data as any[];
    const before = keys[0].quota_used as number;
    const logsBefore = await requestLogs(c);
    const results = await Promise.all(
      Array.from({ length: 200 }, () =>
        c.gw.call('POST', '/v1/chat/completions', {
          token: c.key,
          body: { model: 'acme/m', messages: userMsg('hi'), max_tokens: 1000 },
        }),
      ),
    );
    const statuses = results.map((r) => r.status);
    const served = statuses.filter((s) => s === 200).length;
    const refused = results.filter((r) => r.status === 402);
    expect(served + refused.length).toBe(200);
    expect(served).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect(r.body.error.code).toBe(402);

    // Settlements are written with the request logs: flush before reading the spend.
    await c.gw.services.requestLogs.flush();
    const after = (await c.gw.call('GET', '/api/key', { cookie: c.cookie })).body.data[0];
    // One reservation: ~56 prompt tokens + 1000 completion tokens at the model's prices.
    const oneReservation = 60 * 0.000001 + 1000 * 0.000002;
    expect(after.quota_used).toBeLessThanOrEqual(LIMIT_USD + oneReservation);
    const logs = (await requestLogs(c)).slice(0, -logsBefore.length || undefined);
    // Every request leaves one record: the served ones and the refused ones (402, no cost).
    expect(logs).toHaveLength(200);
    expect(logs.filter((l) => l.status === 200)).toHaveLength(served);
    expect(logs.filter((l) => l.status === 402)).toHaveLength(refused.length);
    for (const l of logs.filter((l) => l.status === 402)) expect(l.cost).toBe(0);
    const logged = logs.reduce((s, l) => s + Math.round(l.cost * 1e6), 0);
    expect(Math.round((after.quota_used - before) * 1e6)).toBe(logged);
    expect(logged).toBe(served * (50 * 1 + 40 * 2));
  });
});
