import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeAnswer, type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  type ChatGateway,
  model,
  oaChunk,
  oaCompletion,
  rawStream,
  requestLogs,
  sse,
  startChatGateway,
  userMsg,
} from './chat-helpers.js';

/**
 * Failures an OpenAI-compatible server reports inside a 200 stream, in the shapes llama.cpp's
 * server has used: an SSE `error:` field (older `llama-server`, `server_sent_event(sink, "error",
 * ...)`, a field name the SSE spec ignores), `data: {"error": {...}}` (newer ones, as OpenAI and
 * vLLM), and `event: error` with the bare error object (other servers). Before any content they
 * are an upstream failure by their code (the `models` fallback serves); after it they end the
 * client's stream with the in-band error chunk, and the request is logged as failed.
 * `ll` serves acme/m, `fb` acme/fb.
 */
const OA = 'POST /v1/chat/completions';
const chunk = (o: object) => `data: ${JSON.stringify(o)}\n\n`;
const ROLE = chunk(oaChunk({ role: 'assistant', content: null }));
const SERVER_ERROR = { code: 500, message: 'llama_decode failed', type: 'server_error' };
const LOADING = { code: 503, message: 'Loading model', type: 'unavailable_error' };
const CONTEXT = {
  code: 400,
  message: 'the request exceeds the available context size, try increasing it',
  type: 'exceed_context_size_error',
};
/** The three shapes of one error object. */
const SHAPES: Record<string, (e: object) => string> = {
  'an `error:` field': (e) => `error: ${JSON.stringify(e)}\n\n`,
  'data: {"error": ...}': (e) => chunk({ error: e }),
  'event: error': (e) => `event: error\ndata: ${JSON.stringify(e)}\n\n`,
};
// llama-server writes [DONE] after its error event.
const failing = (e: string, before: string[] = []): FakeAnswer => ({
  sse: [ROLE, ...before, { delayMs: before.length ? 50 : 0 }, e, 'data: [DONE]\n\n'],
});

let ll: FakeUpstream;
let fb: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  [ll, fb] = [await startFakeUpstream(), await startFakeUpstream()];
  c = await startChatGateway({
    channels: [
      { name: 'll', kind: 'openai-compatible', base_url: `${ll.url}/v1`, keys: [''], models: ['acme/m'] },
      { name: 'fb', kind: 'openai-compatible', base_url: `${fb.url}/v1`, keys: ['k'], models: ['acme/fb'] },
    ],
    models: [model('acme/m'), model('acme/fb')],
    gateway: {
      retry_base_ms: 1,
      max_attempts: 1,
      first_byte_timeout_ms: 2000,
      // No keep-alive within a test: one commits the response head, after which the fallback's
      // x-modelgate-attempts header can no longer be set (a loaded host took >100 ms to fall back).
      keep_alive_interval_ms: 60_000,
      circuit_failures: 1000,
    },
  });
});
afterAll(async () => {
  await c?.gw.close();
  for (const u of [ll, fb]) await u?.close();
});
beforeEach(() => {
  fb.on(OA, (req) =>
    req.json?.stream
      ? { sse: sse([oaChunk({ role: 'assistant', content: 'from ' }), oaChunk({ content: 'fb' }, 'stop')]) }
      : { json: oaCompletion('from fb') },
  );
  for (const u of [ll, fb]) u.requests.length = 0;
});

const content = (chunks: any[]) => chunks.map((ch) => ch.choices[0]?.delta?.content ?? '').join('');
const stream = (extra: Record<string, unknown> = {}) =>
  rawStream(c, { model: 'acme/m', models: ['acme/fb'], messages: userMsg('hi'), ...extra });

describe('an error event before any content is an upstream failure by its code', () => {
  for (const [shape, write] of Object.entries(SHAPES)) {
    it(`${shape}: a 500 falls back to the next model`, async () => {
      ll.on(OA, failing(write(SERVER_ERROR)));
      const r = await stream();
      expect(content(r.chunks)).toBe('from fb');
      expect(r.res.headers.get('x-modelgate-attempts')).toBe('ll/acme/m=server_error:500, fb/acme/fb=ok');
    });
  }

  it('a 503 "Loading model" is overloaded, and a context-size 400 a context-length failure', async () => {
    ll.on(OA, failing(SHAPES['event: error']!(LOADING)));
    let r = await stream();
    expect(content(r.chunks)).toBe('from fb');
    expect(r.res.headers.get('x-modelgate-attempts')).toBe('ll/acme/m=overloaded:503, fb/acme/fb=ok');
    ll.on(OA, failing(SHAPES['an `error:` field']!(CONTEXT)));
    r = await stream();
    expect(content(r.chunks)).toBe('from fb');
    expect(r.res.headers.get('x-modelgate-attempts')).toBe('ll/acme/m=context_length:400, fb/acme/fb=ok');
  });

  it('with nowhere to fall back to, the client gets that error', async () => {
    ll.on(OA, failing(SHAPES['an `error:` field']!(LOADING)));
    const r = await c.gw.call('POST', '/v1/chat/completions', {
      token: c.key,
      body: { model: 'acme/m', messages: userMsg('hi'), stream: true },
    });
    expect(r.status).toBe(503);
    expect(r.body.error.message).toContain('Loading model');
  });
});

describe('an error event after content ends the stream in-band, logged as a failure', () => {
  for (const [shape, write] of Object.entries(SHAPES)) {
    it(shape, async () => {
      ll.on(
        OA,
        failing(write(SERVER_ERROR), [chunk(oaChunk({ content: 'Hel' })), chunk(oaChunk({ content: 'lo' }))]),
      );
      const r = await stream({ stream_options: { include_usage: true } });
      expect(r.res.status).toBe(200);
      expect(content(r.chunks)).toBe('Hello');
      expect(r.events.at(-1)).toBe('[DONE]');
      const failed = r.chunks.at(-2);
      expect(failed.choices[0].finish_reason).toBe('error');
      expect(failed.error).toMatchObject({
        code: 502,
        message: expect.stringContaining('llama_decode failed'),
      });
      expect(r.chunks.at(-1).usage.completion_tokens).toBeGreaterThan(0);
      expect(fb.requests.length).toBe(0);
      const [log] = await requestLogs(c);
      expect(log).toMatchObject({ status: 502, provider: 'll', stream: true });
      expect(log.attempts.at(-1)).toMatchObject({
        provider: 'll',
        ok: false,
        error_kind: 'mid_stream_server_error',
      });
    });
  }
});
