import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { classifyAnthropicError } from '../../src/providers/anthropic/anthropic-response.js';
import { classifyGeminiError } from '../../src/providers/gemini/gemini-response.js';
import { classifyOpenAiError } from '../../src/providers/openai-compatible/openai-response.js';
import {
  type ChatGateway,
  model,
  oaChunk,
  oaCompletion,
  requestLogs,
  sse,
  startChatGateway,
  userMsg,
} from '../chat/chat-helpers.js';
import { type FakeAnswer, type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';

/**
 * A chat upstream's 413 is its own limit (a proxy's body limit, Anthropic's request size cap,
 * Groq's one request over its TPM), not the client's mistake: another channel may take the same
 * request. Only a 413 saying the prompt exceeds the model's context is the client's 400.
 */
const NGINX_413 =
  '<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';
const ANTHROPIC_413 = {
  type: 'error',
  error: { type: 'request_too_large', message: 'Request exceeds the maximum allowed number of bytes.' },
};
const GROQ_413 = {
  error: {
    message:
      'Request too large for model `llama-3.3-70b-versatile` in organization `org_01` service tier `on_demand` on tokens per minute (TPM): Limit 6000, Requested 9120, please reduce your message size and try again.',
    type: 'tokens',
    code: 'rate_limit_exceeded',
  },
};

describe('classifying a chat upstream 413', () => {
  it.each([
    ['a proxy body limit (HTML)', () => classifyOpenAiError(413, NGINX_413, {})],
    [
      'an OpenAI-shaped 413 without a code',
      () => classifyOpenAiError(413, JSON.stringify({ error: { message: 'payload too large' } }), {}),
    ],
    ["Groq's request over the whole TPM", () => classifyOpenAiError(413, JSON.stringify(GROQ_413), {})],
    ["Anthropic's request_too_large", () => classifyAnthropicError(413, JSON.stringify(ANTHROPIC_413), {})],
    [
      "Anthropic's request_too_large in a stream's error event",
      () => classifyAnthropicError(200, JSON.stringify(ANTHROPIC_413), {}),
    ],
    [
      "Google's 413",
      () =>
        classifyGeminiError(
          413,
          JSON.stringify({
            error: {
              code: 413,
              message: 'Request payload size exceeds the limit: 20971520 bytes.',
              status: 'FAILED_PRECONDITION',
            },
          }),
          {},
        ),
    ],
  ])('%s is too_large', (_name, classify) => {
    const e = classify();
    expect(e.kind).toBe('too_large');
    expect(e.upstreamStatus).toBe(413);
    expect(e.retryable).toBe(false);
  });

  it.each([
    ['prompt is too long: 250000 tokens > 200000 maximum'],
    ["This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens."],
  ])('a 413 saying "%s" is context_length', (message) => {
    expect(classifyOpenAiError(413, JSON.stringify({ error: { message } }), {}).kind).toBe('context_length');
  });
});

describe('a chat upstream answering 413', () => {
  let small: FakeUpstream;
  let big: FakeUpstream;
  let c: ChatGateway;
  let smallAnswer: FakeAnswer;
  let bigAnswer: FakeAnswer;
  beforeAll(async () => {
    small = await startFakeUpstream({ 'POST /v1/chat/completions': () => smallAnswer });
    big = await startFakeUpstream({
      'POST /v1/chat/completions': (req) =>
        req.json?.stream && bigAnswer.json
          ? { sse: sse([oaChunk({ content: 'served' }, 'stop')]) }
          : bigAnswer,
    });
    c = await startChatGateway({
      channels: [
        {
          name: 'small',
          kind: 'openai-compatible',
          base_url: `${small.url}/v1`,
          keys: ['k'],
          models: ['acme/m'],
          priority: 10,
        },
        {
          name: 'big',
          kind: 'openai-compatible',
          base_url: `${big.url}/v1`,
          keys: ['k'],
          models: ['acme/m'],
          priority: 1,
        },
      ],
      models: [model('acme/m')],
      gateway: { retry_base_ms: 1, max_attempts: 3, circuit_failures: 2 },
    });
  });
  beforeEach(() => {
    small.requests.length = 0;
    big.requests.length = 0;
  });
  afterAll(async () => {
    await c?.gw.close();
    await small?.close();
    await big?.close();
  });
  const chat = (stream = false) =>
    c.gw.call('POST', '/v1/chat/completions', {
      token: c.key,
      body: { model: 'acme/m', messages: userMsg('a long document ...'), stream },
    });

  it('moves on to the next channel at once, without retrying or counting it against the circuit', async () => {
    smallAnswer = { status: 413, headers: { 'content-type': 'text/html' }, body: NGINX_413 };
    bigAnswer = { json: oaCompletion('served') };
    for (let i = 0; i < 3; i++) {
      const r = await chat(i === 2);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.headers.get('x-modelgate-attempts')).toBe('small/acme/m=too_large:413, big/acme/m=ok');
    }
    // Asked once per request: a 413 is not retried on the upstream that refused it.
    expect(small.requests).toHaveLength(3);
    expect(big.requests).toHaveLength(3);
    const snap = c.gw.services.chat.health.snapshot().filter((s) => s.state !== 'closed');
    expect(snap).toEqual([]);
    const logs = await requestLogs(c);
    expect(logs[0].attempts.map((a: any) => a.error_kind ?? 'ok')).toEqual(['too_large', 'ok']);
  });

  it('when nothing else serves, the client gets a 413 naming the upstream failure, which SDKs do not retry', async () => {
    smallAnswer = { status: 413, headers: { 'content-type': 'text/html' }, body: NGINX_413 };
    bigAnswer = { status: 413, json: GROQ_413 };
    const r = await chat();
    expect(r.status).toBe(413);
    expect(r.body.error).toMatchObject({
      code: 413,
      metadata: { upstream_kind: 'too_large', upstream_status: 413 },
    });
    expect(r.body.error.message).toMatch(/^request too large for the upstream: Request too large for model/);
    expect(small.requests).toHaveLength(1);
    expect(big.requests).toHaveLength(1);
    const [log] = await requestLogs(c);
    expect(log.error_kind).toBe('too_large');
  });

  it("a 413 saying the prompt exceeds the model's context stays the client's 400 and skips the model's other channels", async () => {
    smallAnswer = {
      status: 413,
      json: { error: { message: 'prompt is too long: 250000 tokens > 200000 maximum' } },
    };
    bigAnswer = { json: oaCompletion('served') };
    const r = await chat();
    expect(r.status).toBe(400);
    expect(r.body.error.metadata).toMatchObject({ upstream_kind: 'context_length', upstream_status: 413 });
    expect(big.requests).toHaveLength(0);
  });
});
