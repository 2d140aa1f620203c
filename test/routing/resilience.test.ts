import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type ChatGateway,
  fixtureJson,
  model,
  oaChunk,
  oaCompletion,
  rawStream,
  requestLogs,
  sse,
  startChatGateway,
  userMsg,
} from '../chat/chat-helpers.js';
import { type FakeAnswer, type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';

/**
 * Fault-injecting upstreams behind one model (channels a > b > c by priority) and a fallback
 * model served by d. Each test scripts the fakes; counts of requests each fake received show
 * which candidates were tried.
 */
const ROUTE = 'POST /v1/chat/completions';
const ok = (who: string): FakeAnswer => ({ json: oaCompletion(`from ${who}`) });
const okStream = (who: string): FakeAnswer => ({
  sse: sse([
    oaChunk({ role: 'assistant', content: `from ` }),
    oaChunk({ content: who }),
    oaChunk({}, 'stop'),
    { ...oaChunk({}), choices: [], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } },
  ]),
});
const answer = (who: string) => (req: { json: any }) => (req.json?.stream ? okStream(who) : ok(who));
const E500: FakeAnswer = { status: 500, json: fixtureJson('openai/error-500.json') };

let ups: Record<'a' | 'b' | 'c' | 'd', FakeUpstream>;
let c: ChatGateway;

const channel = (name: keyof typeof ups, o: Record<string, unknown> = {}) => ({
  name,
  kind: 'openai-compatible',
  base_url: `${ups[name].url}/v1`,
  keys: [`key-${name}`],
  models: [name === 'd' ? 'acme/fb' : 'acme/m'],
  ...o,
});

beforeAll(async () => {
  ups = {
    a: await startFakeUpstream(),
    b: await startFakeUpstream(),
    c: await startFakeUpstream(),
    d: await startFakeUpstream(),
  };
  c = await startChatGateway({
    channels: [
      channel('a', { priority: 10, settings: { provider: 'Acme-Cloud/eu', quantization: 'fp8' } }),
      channel('b', { priority: 5, settings: { data_collection: 'deny', quantization: 'fp16' } }),
      channel('c', { priority: 0 }),
      channel('d'),
    ],
    // Fractions of a micro-USD per token ($0.75 / $1.50 per million), so a bill that is not a
    // whole micro-USD shows whether the client is told what was charged.
    models: [
      model('acme/m', { pricing: { prompt: '0.00000075', completion: '0.0000015' } }),
      model('acme/fb'),
    ],
    gateway: {
      retry_base_ms: 1,
      retry_max_ms: 2000,
      max_attempts: 3,
      first_byte_timeout_ms: 300,
      // The hang below is a non-streamed call's: it waits this long, not the first byte's 300 ms.
      non_stream_timeout_ms: 300,
      idle_timeout_ms: 1000,
      keep_alive_interval_ms: 100,
      circuit_failures: 1000,
    },
  });
});
afterAll(async () => {
  await c?.gw.close();
  for (const u of Object.values(ups ?? {})) await u.close();
});
beforeEach(() => {
  for (const [name, u] of Object.entries(ups)) {
    u.on(ROUTE, answer(name));
    u.requests.length = 0;
  }
});

const counts = () => Object.fromEntries(Object.entries(ups).map(([k, u]) => [k, u.requests.length]));
const chat = (body: Record<string, unknown> = {}) =>
  c.gw.call('POST', '/v1/chat/completions', {
    token: c.key,
    body: { model: 'acme/m', messages: userMsg('hi'), ...body },
  });

describe('retries and fallbacks (non-stream)', () => {
  it('429 with a short Retry-After is retried on the same upstream after waiting', async () => {
    ups.a.on(ROUTE, [
      { status: 429, headers: { 'retry-after': '1' }, json: fixtureJson('openai/error-429.json') },
      ok('a'),
    ]);
    const t0 = Date.now();
    const r = await chat();
    expect(r.status).toBe(200);
    expect(r.body.choices[0].message.content).toBe('from a');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    expect(r.headers.get('x-modelgate-attempts')).toBe('a/acme/m=rate_limited:429, a/acme/m=ok');
  });

  it('429 with a long Retry-After moves on at once; when all are limited the client gets 429 + Retry-After', async () => {
    const limited: FakeAnswer = {
      status: 429,
      headers: { 'retry-after': '30' },
      json: fixtureJson('openai/error-429.json'),
    };
    ups.a.on(ROUTE, limited);
    const t0 = Date.now();
    const r = await chat();
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(r.body.choices[0].message.content).toBe('from b');
    for (const u of [ups.b, ups.c, ups.d]) u.on(ROUTE, limited);
    const all = await chat({ models: ['acme/fb'] });
    expect(all.status).toBe(429);
    expect(all.headers.get('retry-after')).toBe('30');
    expect(all.body.error.code).toBe(429);
    expect(all.headers.get('x-modelgate-attempts')).toContain('d/acme/fb=rate_limited:429');
  });

  it("an upstream's Retry-After reaches the client as 1 second to 1 day: 0, negative, garbage and far-future dates bounded", async () => {
    const cases: Array<[number, string, string]> = [
      [429, '0', '1'],
      [429, '-3', '1'], // ignored: a 429 without one says 1
      [429, 'soon', '1'],
      [429, 'Sun, 06 Nov 1994 08:49:37 GMT', '1'], // a date already past
      [503, '0', '1'],
      [429, '2.5', '3'],
      [429, '86400', '86400'],
      [429, '86401', '86400'], // at most a day
      [503, 'Fri, 01 Jan 2100 00:00:00 GMT', '86400'], // a broken date decades ahead
    ];
    for (const [status, value, expected] of cases) {
      for (const u of Object.values(ups))
        u.on(ROUTE, {
          status,
          headers: { 'retry-after': value },
          json: status === 429 ? fixtureJson('openai/error-429.json') : { error: { message: 'busy' } },
        });
      const r = await chat({ models: ['acme/fb'] });
      expect(r.status, value).toBe(status);
      expect(r.headers.get('retry-after'), `${status} Retry-After: ${value}`).toBe(expected);
    }
  });

  it('500 and 529 are retried with backoff, then the next upstream serves', async () => {
    ups.a.on(ROUTE, E500);
    ups.b.on(ROUTE, {
      status: 529,
      json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    });
    const r = await chat();
    expect(r.status).toBe(200);
    expect(r.body.provider).toBe('c');
    expect(counts()).toMatchObject({ a: 3, b: 3, c: 1, d: 0 });
    expect(r.headers.get('x-modelgate-attempts')).toBe(
      'a/acme/m=server_error:500, a/acme/m=server_error:500, a/acme/m=server_error:500, ' +
        'b/acme/m=overloaded:529, b/acme/m=overloaded:529, b/acme/m=overloaded:529, c/acme/m=ok',
    );
  });

  it('a connection reset is retried; a reset on every upstream is a 502', async () => {
    ups.a.on(ROUTE, [{ reset: true }, ok('a')]);
    const r = await chat();
    expect(r.body.provider).toBe('a');
    expect(r.headers.get('x-modelgate-attempts')).toBe('a/acme/m=connection, a/acme/m=ok');
    ups.a.on(ROUTE, { reset: true });
    const only = await chat({ provider: { only: ['a'] } });
    expect(only.status).toBe(502);
  });

  it('a hang past the first-byte timeout is a 504 when nothing else can serve, else a fallback', async () => {
    ups.a.on(ROUTE, { hang: true });
    const t0 = Date.now();
    const r = await chat({ provider: { only: ['a'] } });
    expect(r.status).toBe(504);
    // Three timeouts of 300 ms on undici's coarse (~0.5 s) timer take 1.5-3 s; the loose bound
    // only tells a timeout from a hang, on a loaded machine too.
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(r.headers.get('x-modelgate-attempts')).toMatch(/^a\/acme\/m=timeout(, a\/acme\/m=timeout){2}$/);
    const fb = await chat();
    expect(fb.body.provider).toBe('b');
  });

  it('malformed JSON is a 502 alone, and falls back otherwise', async () => {
    ups.a.on(ROUTE, {
      status: 200,
      body: '{"id": "x", "choices": [',
      headers: { 'content-type': 'application/json' },
    });
    expect((await chat({ provider: { only: ['a'] } })).status).toBe(502);
    const r = await chat();
    expect(r.body.provider).toBe('b');
    expect(r.headers.get('x-modelgate-attempts')).toMatch(/^a\/acme\/m=bad_response(:200)?, b\/acme\/m=ok$/);
  });

  it('a slow first byte within the timeout is waited for', async () => {
    ups.a.on(ROUTE, { delayMs: 150, json: oaCompletion('slow a') });
    const r = await chat();
    expect(r.body.choices[0].message.content).toBe('slow a');
  });

  it('models fallbacks fire when every upstream of the model failed', async () => {
    for (const u of [ups.a, ups.b, ups.c]) u.on(ROUTE, E500);
    const r = await chat({ models: ['acme/fb'] });
    expect(r.status).toBe(200);
    expect(r.body.model).toBe('acme/fb');
    expect(r.body.provider).toBe('d');
    // Without fallbacks the last error is returned.
    const none = await chat();
    expect(none.status).toBe(502);
    expect(none.body.error.code).toBe(502);
  });

  it('a context-length 400 skips the rest of that model and moves to the next model', async () => {
    ups.a.on(ROUTE, { status: 400, json: fixtureJson('openai/error-400-context.json') });
    const r = await chat({ models: ['acme/fb'] });
    expect(r.body.provider).toBe('d');
    expect(counts()).toMatchObject({ a: 1, b: 0, c: 0, d: 1 });
  });

  it("a content-filter block skips that model's upstreams for the next model; a client mistake goes nowhere", async () => {
    ups.a.on(ROUTE, {
      status: 400,
      json: {
        error: {
          message: 'flagged by our content management policy',
          code: 'content_filter',
          type: 'invalid_request_error',
        },
      },
    });
    // decisions.md: `models` is tried on any upstream failure; the model's own upstreams are not.
    const r = await chat({ models: ['acme/fb'] });
    expect(r.status).toBe(200);
    expect(r.body.provider).toBe('d');
    expect(counts()).toMatchObject({ a: 1, b: 0, c: 0, d: 1 });
    // With no model left, the filter's refusal is the answer, even when a later model failed too.
    const alone = await chat();
    expect(alone.status).toBe(400);
    expect(alone.body.error.message).toMatch(/content filter/);
    ups.d.on(ROUTE, E500);
    const both = await chat({ models: ['acme/fb'] });
    expect(both.status).toBe(400);
    expect(both.body.error.message).toMatch(/content filter/);
    const bad = await chat({ models: ['acme/fb'], temperature: 9 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('temperature');
    // The filtered model was tried once per request; the mistake reached no upstream.
    expect(counts()).toMatchObject({ a: 3, b: 0, c: 0 });
  });

  it('allow_fallbacks false returns the error of the primary upstream; model fallbacks still apply', async () => {
    ups.a.on(ROUTE, E500);
    const r = await chat({ provider: { allow_fallbacks: false } });
    expect(r.status).toBe(502);
    expect(counts()).toMatchObject({ a: 3, b: 0, c: 0 });
    // `models` is the other level of fallback (openrouter.md §3): its primary upstream is tried.
    const m = await chat({ models: ['acme/fb'], provider: { allow_fallbacks: false } });
    expect(m.body.provider).toBe('d');
    expect(counts()).toMatchObject({ a: 6, b: 0, c: 0, d: 1 });
  });
});

describe('provider preferences over HTTP', () => {
  const served = async (provider: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
    const r = await chat({ provider, ...extra });
    return r.status === 200 ? r.body.provider : r.status;
  };

  it('order, only, ignore, data_collection, zdr, quantizations, max_price, sort, require_parameters', async () => {
    expect(await served({ order: ['c', 'b'] })).toBe('c');
    expect(await served({ order: ['acme-cloud'] })).toBe('a');
    expect(await served({ only: ['b', 'c'] })).toBe('b');
    expect(await served({ ignore: ['a', 'b'] })).toBe('c');
    expect(await served({ data_collection: 'deny' })).toBe('b');
    // No channel here declares zero data retention: nothing may serve it.
    expect(await served({ zdr: true })).toBe(503);
    expect(await served({ zdr: false })).toBe('a');
    expect(await served({ zdr: 'yes' })).toBe(400);
    expect(await served({ quantizations: ['fp16', 'unknown'] })).toBe('b');
    expect(await served({ quantizations: ['int4'] })).toBe(503);
    expect(await served({ max_price: { prompt: '0.5' } })).toBe(503);
    expect(await served({ max_price: { prompt: 1, completion: '2' } })).toBe('a');
    expect(await served({ sort: 'price' })).toBe('a');
    expect(await served({ require_parameters: true }, { top_logprobs: 2, logprobs: true })).toBe('a');
  });

  it('order with allow_fallbacks false tries only the named ones', async () => {
    ups.c.on(ROUTE, E500);
    const r = await chat({ provider: { order: ['c'], allow_fallbacks: false } });
    expect(r.status).toBe(502);
    expect(counts()).toMatchObject({ a: 0, b: 0, c: 3 });
    const fb = await chat({ provider: { order: ['c'] } });
    expect(fb.body.provider).toBe('a');
  });
});

describe('streams', () => {
  it('a failure before the first byte falls back (status error or a leading error event)', async () => {
    ups.a.on(ROUTE, E500);
    ups.b.on(ROUTE, {
      sse: [
        'data: {"error":{"message":"overloaded","type":"server_error","code":"server_is_overloaded"}}\n\n',
      ],
    });
    const r = await rawStream(c, { model: 'acme/m', messages: userMsg('hi') });
    expect(r.res.status).toBe(200);
    expect(r.chunks.map((ch) => ch.choices[0]?.delta?.content ?? '').join('')).toBe('from c');
    expect(r.chunks[0].provider).toBe('c');
    // The tries from the request log: the header is set only when the head goes out after them,
    // and this gateway's 100 ms keep-alive can send the head first on a busy machine.
    const [log] = await requestLogs(c);
    const tries = log.attempts.map((t: { provider: string; ok: boolean; error_kind?: string }) =>
      t.ok ? `${t.provider}=ok` : `${t.provider}=${t.error_kind}`,
    );
    expect(tries.join(', ')).toMatch(/^a=server_error, .*b=overloaded, c=ok$/);
    expect(await ups.b.requests[0]!.closed).toMatchObject({ completed: true });
  });

  it('a stream cut after a few chunks ends in-band with no fallback, logged and billed once', async () => {
    ups.a.on(ROUTE, {
      // The pause lets the chunks reach the client before the reset (a reset discards unread data).
      sse: [
        ...sse([oaChunk({ role: 'assistant', content: 'par' }), oaChunk({ content: 'tial' })], false),
        { delayMs: 50 },
        'reset',
      ],
    });
    const before = (await requestLogs(c)).length;
    const r = await rawStream(c, {
      model: 'acme/m',
      messages: userMsg('hi'),
      models: ['acme/fb'],
      stream_options: { include_usage: true },
    });
    expect(r.res.status).toBe(200);
    expect(r.events.at(-1)).toBe('[DONE]');
    // The error, then what the part served was billed, as asked for.
    const last = r.chunks.at(-2);
    expect(last.choices[0].finish_reason).toBe('error');
    expect(last.error.code).toBe(502);
    const usage = r.chunks.at(-1);
    expect(usage.choices).toEqual([]);
    expect(usage.usage.completion_tokens).toBeGreaterThan(0);
    expect(r.chunks.map((ch) => ch.choices[0]?.delta?.content ?? '').join('')).toBe('partial');
    expect(counts()).toMatchObject({ a: 1, b: 0, c: 0, d: 0 });
    const logs = await requestLogs(c);
    expect(logs.length).toBe(before + 1);
    expect(logs[0]).toMatchObject({ status: 502, provider: 'a', stream: true });
    expect(logs[0].prompt_tokens).toBe(usage.usage.prompt_tokens);
    expect(logs[0].completion_tokens).toBe(usage.usage.completion_tokens);
    expect(logs[0].cost).toBeGreaterThan(0);
    // Exactly what was charged (whole micro-USD), not the unrounded price of the tokens.
    expect(usage.usage.cost).toBe(logs[0].cost);
    expect(logs[0].attempts.at(-1)).toMatchObject({
      provider: 'a',
      ok: false,
      error_kind: 'mid_stream_connection',
    });
    // The cut counts against the upstream's health.
    const h = c.gw.services.chat.health.snapshot().find((s) => s.last_error === 'connection');
    expect(h?.target).toMatch(/:acme\/m$/);
  });

  it("a stream cut mid-way logs its try's ms until the cut, not until the first chunk", async () => {
    ups.a.on(ROUTE, {
      sse: [...sse([oaChunk({ role: 'assistant', content: 'par' })], false), { delayMs: 300 }, 'reset'],
    });
    const r = await rawStream(c, { model: 'acme/m', messages: userMsg('hi'), provider: { only: ['a'] } });
    expect(r.chunks.at(-1).choices[0].finish_reason).toBe('error');
    const [log] = await requestLogs(c);
    expect(log).toMatchObject({ status: 502, provider: 'a', stream: true });
    expect(log.attempts).toEqual([
      {
        model: 'acme/m',
        provider: 'a',
        channel_id: expect.any(Number),
        ok: false,
        error_kind: 'mid_stream_connection',
        ms: expect.any(Number),
      },
    ]);
    // The upstream sent its first chunk at once and was cut 300 ms later.
    expect(log.attempts[0].ms).toBeGreaterThanOrEqual(290);
    expect(log.attempts[0].ms).toBeLessThanOrEqual(log.latency_ms);
    expect(log.ttft_ms).toBeLessThan(log.attempts[0].ms);
  });

  it('a slow first chunk gets keep-alive comments, then the stream', async () => {
    // 200 ms: keep-alives every 100 ms, and inside the 300 ms first-byte timeout, which runs from
    // the start of the try until the first chunk (early-failures.test.ts has it expire).
    ups.a.on(ROUTE, {
      sse: [{ delayMs: 200 }, ...sse([oaChunk({ role: 'assistant', content: 'late' }), oaChunk({}, 'stop')])],
    });
    const r = await rawStream(c, { model: 'acme/m', messages: userMsg('hi') });
    expect(r.text.startsWith(': keep-alive\n\n')).toBe(true);
    expect(r.chunks[0].choices[0].delta.content).toBe('late');
  });

  it('after a keep-alive committed the 200, a total failure is reported in-band', async () => {
    for (const u of [ups.a, ups.b, ups.c]) u.on(ROUTE, { delayMs: 120, ...E500 });
    const r = await rawStream(c, { model: 'acme/m', messages: userMsg('hi'), provider: { only: ['a'] } });
    expect(r.res.status).toBe(200);
    expect(r.chunks.at(-1).error.code).toBe(502);
    expect(r.events.at(-1)).toBe('[DONE]');
    // The error chunk names the upstream tried last, as the request log does (it said "").
    expect(r.chunks.at(-1).provider).toBe('a');
    const all = await rawStream(c, { model: 'acme/m', messages: userMsg('hi') });
    expect(all.text.startsWith(': keep-alive\n\n')).toBe(true);
    expect(all.chunks.at(-1)).toMatchObject({ provider: 'c', error: { code: 502 } });
    expect((await requestLogs(c))[0]).toMatchObject({ status: 502, provider: 'c', stream: true });
  });
});

describe('request logs', () => {
  it('exactly one log per request, with the trail on failures too', async () => {
    const before = (await requestLogs(c)).length;
    ups.a.on(ROUTE, E500);
    await chat();
    await chat({ provider: { only: ['a'] } });
    const logs = await requestLogs(c);
    expect(logs.length).toBe(before + 2);
    expect(logs[0]).toMatchObject({ status: 502, provider: 'a' });
    expect(logs[0].attempts).toHaveLength(3);
    expect(logs[0].attempts[0]).toMatchObject({
      provider: 'a',
      ok: false,
      error_kind: 'server_error',
      upstream_status: 500,
    });
    expect(logs[1]).toMatchObject({ status: 200, provider: 'b' });
    expect(logs[1].attempts.map((a: any) => a.ok)).toEqual([false, false, false, true]);
  });
});

describe('circuit breaker and key health', () => {
  let g: ChatGateway;
  beforeAll(async () => {
    g = await startChatGateway({
      channels: [
        channel('a', { priority: 10 }),
        channel('b', { priority: 5, keys: ['bad-key', 'good-key'] }),
        channel('c', { priority: 0 }),
      ],
      models: [model('acme/m')],
      gateway: {
        retry_base_ms: 1,
        max_attempts: 1,
        first_byte_timeout_ms: 300,
        circuit_failures: 2,
        circuit_window_ms: 10_000,
        // Long enough for the calls a test makes while the circuit is open, on a loaded machine.
        circuit_cooldown_ms: 1_500,
      },
    });
  });
  afterAll(async () => {
    await g?.gw.close();
  });
  const call = (body: Record<string, unknown> = {}) =>
    g.gw.call('POST', '/v1/chat/completions', {
      token: g.key,
      body: { model: 'acme/m', messages: userMsg('hi'), ...body },
    });

  it('opens after N failures, skips the dead upstream, half-opens with one probe, closes on success', async () => {
    ups.a.on(ROUTE, E500);
    expect((await call()).body.provider).toBe('b');
    expect((await call()).body.provider).toBe('b');
    expect(ups.a.requests.length).toBe(2);
    // Open: a is not tried while others serve.
    for (let i = 0; i < 3; i++) expect((await call()).body.provider).toBe('b');
    expect(ups.a.requests.length).toBe(2);
    const open = g.gw.services.chat.health
      .snapshot()
      .find((s) => s.target.endsWith(':acme/m') && s.state !== 'closed');
    expect(open?.state).toBe('open');
    await new Promise((r) => setTimeout(r, 1_600));
    ups.a.on(ROUTE, answer('a'));
    // Half-open: one probe goes through; it succeeds and closes the circuit.
    expect((await call()).body.provider).toBe('a');
    expect((await call()).body.provider).toBe('a');
    expect(g.gw.services.chat.health.snapshot().every((s) => s.state === 'closed')).toBe(true);
  });

  it('a failed half-open probe reopens the circuit', async () => {
    ups.a.on(ROUTE, E500);
    await call();
    await call();
    await new Promise((r) => setTimeout(r, 1_600));
    const n = ups.a.requests.length;
    expect((await call()).body.provider).toBe('b');
    expect(ups.a.requests.length).toBe(n + 1);
    expect((await call()).body.provider).toBe('b');
    expect(ups.a.requests.length).toBe(n + 1);
  });

  it('a 401 sets that key aside and another key of the same upstream serves', async () => {
    ups.a.on(ROUTE, E500);
    ups.b.requests.length = 0;
    ups.b.on(ROUTE, (req) =>
      req.headers.authorization === 'Bearer bad-key'
        ? { status: 401, json: fixtureJson('openai/error-401.json') }
        : ok('b'),
    );
    for (let i = 0; i < 4; i++) {
      const r = await call({ provider: { only: ['b'] } });
      expect(r.status).toBe(200);
      expect(r.body.provider).toBe('b');
    }
    const auths = ups.b.requests.map((r) => r.headers.authorization);
    expect(auths.filter((a) => a === 'Bearer bad-key')).toHaveLength(1);
    expect(auths.filter((a) => a === 'Bearer good-key')).toHaveLength(4);
    expect(g.gw.services.chat.health.disabledKeys()).toEqual([expect.objectContaining({ keys: 1 })]);
  });

  it('GET /api/channel/health lists each upstream and model with its state and figures (admin only)', async () => {
    const r = await g.gw.call('GET', '/api/channel/health', { cookie: g.cookie });
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    const rows = r.body.data as any[];
    expect(rows.map((x) => x.channel_name)).toEqual(['a', 'b', 'c']);
    const [a, b, c2] = rows;
    expect(a).toMatchObject({ model: 'acme/m', kind: 'openai-compatible', last_error: 'server_error' });
    expect(['open', 'half_open']).toContain(a.state);
    expect(a.error_rate).toBeGreaterThan(0);
    expect(b).toMatchObject({ state: 'closed', disabled_keys: 1, keys: 2 });
    expect(b.latency_ms).toBeGreaterThanOrEqual(0);
    expect(b.tokens_per_sec).toBeGreaterThan(0);
    expect(c2).toMatchObject({ state: 'closed', requests: 0, latency_ms: null });
    // Not the `/api/channel/:id` route, and not for API keys or anonymous callers.
    expect((await g.gw.call('GET', '/api/channel/health')).status).toBe(401);
    expect((await g.gw.call('GET', '/api/channel/health', { token: g.key })).status).toBe(401);
    expect((await g.gw.call('GET', '/api/channel/1', { cookie: g.cookie })).body.data.name).toBe('a');
  });
});
