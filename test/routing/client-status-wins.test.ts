import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyAnthropicError } from '../../src/providers/anthropic/anthropic-response.js';
import { classifyGeminiError } from '../../src/providers/gemini/gemini-response.js';
import { classifyOpenAiError } from '../../src/providers/openai-compatible/openai-response.js';
import { type ChatGateway, model, oaCompletion, startChatGateway, userMsg } from '../chat/chat-helpers.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';

/**
 * A 4xx is the request's (routing.md: "context length, other 400: the rest of that model's
 * upstreams are skipped"), whatever type the body gives it: an upstream that answers 400 with
 * `type: "server_error"` (seen in the wild on OpenAI-compatible servers) is not retried, does not
 * count against its circuit and does not fall back to that model's other upstreams. Body codes
 * still decide where the status does not (a 200 carrying an error, a stream's error event, a 5xx).
 */
const json = (body: unknown) => JSON.stringify(body);
const SERVER_TYPED_400 = { error: { message: 'bad param foo', type: 'server_error', code: 400 } };

describe('a 4xx status wins over a body that names a server-side failure', () => {
  it.each([
    ['OpenAI type server_error', () => classifyOpenAiError(400, json(SERVER_TYPED_400), {})],
    [
      'OpenAI type api_error on a 422',
      () => classifyOpenAiError(422, json({ error: { type: 'api_error' } }), {}),
    ],
    [
      'OpenAI code server_is_overloaded',
      () => classifyOpenAiError(400, json({ error: { message: 'x', code: 'server_is_overloaded' } }), {}),
    ],
    [
      'Anthropic api_error',
      () =>
        classifyAnthropicError(400, json({ type: 'error', error: { type: 'api_error', message: 'x' } }), {}),
    ],
    [
      'Anthropic overloaded_error',
      () =>
        classifyAnthropicError(
          400,
          json({ type: 'error', error: { type: 'overloaded_error', message: 'x' } }),
          {},
        ),
    ],
    [
      'Anthropic timeout_error',
      () =>
        classifyAnthropicError(
          400,
          json({ type: 'error', error: { type: 'timeout_error', message: 'x' } }),
          {},
        ),
    ],
    [
      'Gemini INTERNAL',
      () => classifyGeminiError(400, json({ error: { code: 400, message: 'x', status: 'INTERNAL' } }), {}),
    ],
    [
      'Gemini UNAVAILABLE',
      () => classifyGeminiError(400, json({ error: { code: 400, message: 'x', status: 'UNAVAILABLE' } }), {}),
    ],
    [
      'Gemini DEADLINE_EXCEEDED',
      () =>
        classifyGeminiError(
          400,
          json({ error: { code: 400, message: 'x', status: 'DEADLINE_EXCEEDED' } }),
          {},
        ),
    ],
  ])('%s is a bad request', (_name, classify) => {
    const e = classify();
    expect(e.kind).toBe('bad_request');
    expect(e.retryable).toBe(false);
  });

  it('body codes still refine a 4xx into what the request or the account is, and a 408 is a timeout', () => {
    const ctx = {
      error: { message: 'too long', type: 'invalid_request_error', code: 'context_length_exceeded' },
    };
    expect(classifyOpenAiError(400, json(ctx), {}).kind).toBe('context_length');
    const quota = { error: { message: 'no credit', type: 'insufficient_quota' } };
    expect(classifyOpenAiError(429, json(quota), {}).kind).toBe('payment');
    const precondition = {
      error: { code: 400, message: 'User location is not supported', status: 'FAILED_PRECONDITION' },
    };
    expect(classifyGeminiError(400, json(precondition), {}).kind).toBe('payment');
    expect(classifyOpenAiError(408, json({ error: { message: 'slow' } }), {}).kind).toBe('timeout');
  });

  it('where the status does not decide, the body still does', () => {
    // A 5xx refined by its code.
    const overloaded = { error: { message: 'busy', type: 'server_error', code: 'server_is_overloaded' } };
    expect(classifyOpenAiError(500, json(overloaded), {}).kind).toBe('overloaded');
    // A 200 that carries only an error: Anthropic's type, Gemini's code.
    const anthropic = { type: 'error', error: { type: 'overloaded_error', message: 'busy' } };
    expect(classifyAnthropicError(200, json(anthropic), {}).kind).toBe('overloaded');
    const gemini = { error: { code: 503, message: 'busy', status: 'UNAVAILABLE' } };
    expect(classifyGeminiError(200, json(gemini), {}).kind).toBe('overloaded');
  });
});

describe('over HTTP: a 400 typed server_error', () => {
  let a: FakeUpstream;
  let b: FakeUpstream;
  let d: FakeUpstream;
  let c: ChatGateway;
  const ROUTE = 'POST /v1/chat/completions';
  beforeAll(async () => {
    a = await startFakeUpstream({ [ROUTE]: { status: 400, json: SERVER_TYPED_400 } });
    b = await startFakeUpstream({ [ROUTE]: { json: oaCompletion('from b') } });
    d = await startFakeUpstream({ [ROUTE]: { json: oaCompletion('from d') } });
    const channel = (name: string, up: FakeUpstream, models: string[], priority: number) => ({
      name,
      kind: 'openai-compatible',
      base_url: `${up.url}/v1`,
      keys: [`key-${name}`],
      models,
      priority,
    });
    c = await startChatGateway({
      channels: [
        channel('a', a, ['acme/m'], 10),
        channel('b', b, ['acme/m'], 5),
        channel('d', d, ['acme/fb'], 0),
      ],
      models: [model('acme/m'), model('acme/fb')],
      gateway: { retry_base_ms: 1, retry_max_ms: 5, max_attempts: 3, circuit_failures: 2 },
    });
  });
  afterAll(async () => {
    await c?.gw.close();
    for (const u of [a, b, d]) await u?.close();
  });

  it("is tried once, skips the model's other upstreams for the next model, and does not count against the circuit", async () => {
    const r = await c.gw.call('POST', '/v1/chat/completions', {
      token: c.key,
      body: { model: 'acme/m', models: ['acme/fb'], messages: userMsg('hi') },
    });
    expect(r.status).toBe(200);
    expect(r.body.provider).toBe('d');
    expect(r.headers.get('x-modelgate-attempts')).toBe('a/acme/m=bad_request:400, d/acme/fb=ok');
    expect([a.requests.length, b.requests.length]).toEqual([1, 0]);
    // Alone, it is the client's 400, however often it is sent: the circuit stays closed.
    for (let i = 0; i < 3; i++) {
      const alone = await c.gw.call('POST', '/v1/chat/completions', {
        token: c.key,
        body: { model: 'acme/m', messages: userMsg('hi') },
      });
      expect(alone.status).toBe(400);
    }
    expect(a.requests.length).toBe(4);
    const counted = c.gw.services.chat.health.snapshot().filter((s) => s.last_error !== null);
    expect(counted).toEqual([]);
  });
});
