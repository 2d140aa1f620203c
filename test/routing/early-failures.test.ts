import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type ChatGateway,
  fixture,
  model,
  oaChunk,
  oaCompletion,
  rawStream,
  requestLogs,
  sse,
  sseSteps,
  startChatGateway,
  userMsg,
} from '../chat/chat-helpers.js';
import { type FakeAnswer, type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';

/**
 * Upstreams that fail after answering 200 but before saying anything (an error or a cut right
 * after Anthropic's message_start or an OpenAI-style role chunk, silence, an empty answer) fail
 * the way an error status does: the `models` fallback serves, invisibly and without a bill for the
 * failed one. `o` (OpenAI-compatible) serves acme/m, `an` (Anthropic) acme/claude, `fb` acme/fb.
 */
const OA = 'POST /v1/chat/completions';
const AN = 'POST /v1/messages';
const IDLE_MS = 5_000;

const anthropicSteps = sseSteps(fixture('anthropic/chat-stream.sse'));
const MESSAGE_START = anthropicSteps[0]!;
const PING = 'event: ping\ndata: {"type": "ping"}\n\n';
const OVERLOADED = sseSteps(fixture('anthropic/error-after-200.sse')).at(-1)!;
const ROLE_CHUNK = `data: ${JSON.stringify(oaChunk({ role: 'assistant', content: '' }))}\n\n`;
const ERROR_CHUNK = `data: ${JSON.stringify({ error: { message: 'overloaded', type: 'server_error', code: 503 } })}\n\n`;

const fbAnswer = (req: { json: any }): FakeAnswer =>
  req.json?.stream
    ? { sse: sse([oaChunk({ role: 'assistant', content: 'from ' }), oaChunk({ content: 'fb' }, 'stop')]) }
    : { json: oaCompletion('from fb') };

let o: FakeUpstream;
let an: FakeUpstream;
let fb: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  [o, an, fb] = [await startFakeUpstream(), await startFakeUpstream(), await startFakeUpstream()];
  c = await startChatGateway({
    channels: [
      { name: 'o', kind: 'openai-compatible', base_url: `${o.url}/v1`, keys: ['k'], models: ['acme/m'] },
      { name: 'an', kind: 'anthropic', base_url: an.url, keys: ['k'], models: ['acme/claude'] },
      { name: 'fb', kind: 'openai-compatible', base_url: `${fb.url}/v1`, keys: ['k'], models: ['acme/fb'] },
    ],
    models: [model('acme/m'), model('acme/claude'), model('acme/fb')],
    gateway: {
      retry_base_ms: 1,
      max_attempts: 1,
      first_byte_timeout_ms: 400,
      idle_timeout_ms: IDLE_MS,
      keep_alive_interval_ms: 100,
      circuit_failures: 1000,
    },
  });
});
afterAll(async () => {
  await c?.gw.close();
  for (const u of [o, an, fb]) await u?.close();
});
beforeEach(() => {
  fb.on(OA, fbAnswer);
  for (const u of [o, an, fb]) u.requests.length = 0;
});

const content = (chunks: any[]) => chunks.map((ch) => ch.choices[0]?.delta?.content ?? '').join('');
const stream = (m: string, extra: Record<string, unknown> = {}) =>
  rawStream(c, { model: m, models: ['acme/fb'], messages: userMsg('hi'), ...extra });
const complete = (m: string, extra: Record<string, unknown> = {}) =>
  c.gw.call('POST', '/v1/chat/completions', {
    token: c.key,
    body: { model: m, models: ['acme/fb'], messages: userMsg('hi'), ...extra },
  });

/** The stream fell back to fb: its answer alone, nothing of the failed upstream, one log for fb. */
async function expectServedByFallback(r: Awaited<ReturnType<typeof stream>>) {
  expect(r.res.status).toBe(200);
  expect(content(r.chunks)).toBe('from fb');
  expect(r.chunks.every((ch) => ch.provider === 'fb' && !ch.error)).toBe(true);
  expect(r.chunks[0].choices[0].delta.role).toBe('assistant');
  expect(r.events.at(-1)).toBe('[DONE]');
  expect(fb.requests).toHaveLength(1);
  const [log] = await requestLogs(c);
  expect(log).toMatchObject({ status: 200, provider: 'fb', model: 'acme/fb' });
  expect(log.attempts.map((a: any) => a.ok)).toEqual([false, true]);
  return log;
}

describe('a stream that fails before anything the client must see falls back', () => {
  it.each([
    ['in reads of their own', [MESSAGE_START, PING, { delayMs: 50 }, OVERLOADED]],
    ['in one read', [MESSAGE_START + PING + OVERLOADED]],
  ])('Anthropic: message_start, ping, then an overloaded_error event, %s', async (_name, steps) => {
    an.on(AN, { sse: steps });
    const log = await expectServedByFallback(await stream('acme/claude'));
    expect(log.attempts[0]).toMatchObject({ provider: 'an', error_kind: 'overloaded' });
  });

  it('OpenAI-style: a role-only first chunk, then an error chunk 100 ms later', async () => {
    o.on(OA, { sse: [ROLE_CHUNK, { delayMs: 100 }, ERROR_CHUNK] });
    const log = await expectServedByFallback(await stream('acme/m'));
    expect(log.attempts[0]).toMatchObject({ provider: 'o', error_kind: 'overloaded' });
  });

  it('a 200 JSON error to a streamed request is that error (a payment failure), not a stream that ended early', async () => {
    o.on(OA, { json: { error: { code: 402, message: 'This request requires more credits' } } });
    const log = await expectServedByFallback(await stream('acme/m'));
    expect(log.attempts[0]).toMatchObject({ provider: 'o', error_kind: 'payment' });
  });

  it('a whole JSON answer to a streamed request (stream: true ignored) is a bad answer, and falls back', async () => {
    o.on(OA, { json: oaCompletion('not a stream') });
    const log = await expectServedByFallback(await stream('acme/m'));
    expect(log.attempts[0]).toMatchObject({ provider: 'o', error_kind: 'bad_response' });
  });

  it('OpenAI-style: a role-only first chunk, then the connection is cut', async () => {
    o.on(OA, { sse: [ROLE_CHUNK, { delayMs: 100 }, 'reset'] });
    const log = await expectServedByFallback(await stream('acme/m'));
    expect(log.attempts[0]).toMatchObject({ provider: 'o', error_kind: 'connection' });
  });

  it('Anthropic: message_start then silence is a first-byte timeout, not an in-band 504 after the idle timeout', async () => {
    an.on(AN, { sse: [MESSAGE_START, PING, 'hang'] });
    const t0 = Date.now();
    const r = await stream('acme/claude');
    // Keep-alives went out while waiting (so the 200 was already committed): still a fallback.
    expect(r.text.startsWith(': keep-alive\n\n')).toBe(true);
    const log = await expectServedByFallback(r);
    expect(log.attempts[0]).toMatchObject({ provider: 'an', error_kind: 'timeout' });
    expect(Date.now() - t0).toBeLessThan(IDLE_MS);
    expect(await an.requests[0]!.closed).toMatchObject({ completed: false });
  });

  it("the serving upstream's health figures start at its own try, not at the failed one's", async () => {
    an.on(AN, { sse: [MESSAGE_START, PING, 'hang'] });
    const health = c.gw.services.chat.health;
    const success = vi.spyOn(health, 'success');
    try {
      const log = await expectServedByFallback(await stream('acme/claude'));
      // The client waited the 400 ms first-byte timeout of `an`, and its log says so...
      expect(log.ttft_ms).toBeGreaterThanOrEqual(400);
      // ...but fb answered at once: its latency and TTFT samples are its own try's.
      const [key, sample] = success.mock.calls.find(([k]) => k.endsWith(':acme/fb'))!;
      expect(key).toMatch(/:acme\/fb$/);
      expect(sample!.ttftMs).toBeLessThan(log.ttft_ms - 300);
      expect(sample!.latencyMs).toBeLessThan(log.latency_ms - 300);
    } finally {
      success.mockRestore();
    }
  });

  it.each([
    // OpenRouter sends these while a provider warms up; they decode to no event at all.
    [
      'nothing but SSE comments',
      [
        ': OPENROUTER PROCESSING\n\n',
        ...Array.from({ length: 30 }, () => [{ delayMs: 100 }, ': OPENROUTER PROCESSING\n\n']).flat(),
        ROLE_CHUNK,
      ],
    ],
    ['nothing at all after the head', ['hang']],
  ])(
    'OpenAI-style: %s is a first-byte timeout and a fallback, not a wait for the idle timeout',
    async (_name, steps) => {
      o.on(OA, { sse: steps as any });
      const t0 = Date.now();
      const log = await expectServedByFallback(await stream('acme/m'));
      expect(log.attempts[0]).toMatchObject({ provider: 'o', error_kind: 'timeout' });
      // The first-byte timeout is 400 ms; the comments alone would have held the try 3 s, and
      // silence until the 5 s idle timeout.
      expect(Date.now() - t0).toBeLessThan(2_500);
    },
  );

  it('what was held back goes out with the first content, in order', async () => {
    o.on(OA, {
      sse: [ROLE_CHUNK, { delayMs: 150 }, ...sse([oaChunk({ content: 'late' }), oaChunk({}, 'stop')])],
    });
    const r = await stream('acme/m');
    expect(r.text.startsWith(': keep-alive\n\n')).toBe(true);
    expect(r.chunks.map((ch) => ch.choices[0].delta)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'late' },
      {},
    ]);
    expect(r.chunks.at(-1).choices[0].finish_reason).toBe('stop');
    expect(fb.requests).toHaveLength(0);
  });

  it('an empty answer that finishes is an answer: committed, no fallback', async () => {
    o.on(OA, { sse: sse([oaChunk({ role: 'assistant', content: '' }), oaChunk({}, 'length')]) });
    const r = await stream('acme/m');
    expect(r.chunks.map((ch) => ch.choices[0].finish_reason)).toEqual([null, 'length']);
    expect(r.chunks[0].provider).toBe('o');
    expect(fb.requests).toHaveLength(0);
  });

  it('after content, a failure is still reported in-band with no fallback', async () => {
    o.on(OA, {
      sse: [ROLE_CHUNK, ...sse([oaChunk({ content: 'Hel' })], false), { delayMs: 50 }, ERROR_CHUNK],
    });
    const r = await stream('acme/m');
    expect(content(r.chunks)).toBe('Hel');
    expect(r.chunks.at(-1).error.code).toBe(503);
    expect(fb.requests).toHaveLength(0);
  });
});

describe('an empty answer is a bad response: the next upstream serves at once', () => {
  const noChoices = { ...oaChunk({}), choices: [] };
  const usage = { prompt_tokens: 5, completion_tokens: 0, total_tokens: 5 };

  it.each([
    ['only [DONE]', ['data: [DONE]\n\n']],
    ['chunks without choices', sse([noChoices, noChoices])],
    ['chunks without choices, one with usage', sse([noChoices, { ...noChoices, usage }])],
    ['a role chunk, then [DONE]', sse([oaChunk({ role: 'assistant', content: '' })])],
  ])('a stream of %s', async (_name, steps) => {
    o.on(OA, { sse: steps });
    const log = await expectServedByFallback(await stream('acme/m'));
    expect(log.attempts[0]).toMatchObject({ provider: 'o', error_kind: 'bad_response' });
  });

  it('a non-streamed answer with choices: []', async () => {
    o.on(OA, { json: { ...oaCompletion('x'), choices: [] } });
    const r = await complete('acme/m');
    expect(r.status).toBe(200);
    expect(r.body.choices[0].message.content).toBe('from fb');
    expect(r.headers.get('x-modelgate-attempts')).toMatch(
      /^o\/acme\/m=bad_response(:200)?, fb\/acme\/fb=ok$/,
    );
  });

  it('with nothing to fall back to, it is a 502 (streamed or not), not an empty 200', async () => {
    o.on(OA, (req) =>
      req.json.stream ? { sse: ['data: [DONE]\n\n'] } : { json: { ...oaCompletion('x'), choices: [] } },
    );
    const s = await stream('acme/m', { models: undefined });
    expect(s.res.status).toBe(502);
    const n = await complete('acme/m', { models: undefined });
    expect(n.status).toBe(502);
    expect(n.body.error.code).toBe(502);
    const logs = await requestLogs(c);
    expect(logs.slice(0, 2).map((l) => [l.status, l.cost])).toEqual([
      [502, 0],
      [502, 0],
    ]);
  });
});
