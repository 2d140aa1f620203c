import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
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
 * Size limits on what upstreams answer (docs/routing.md, "Size limits"): an answer or one stream
 * event past its limit is a bad upstream answer (502 kind, next upstream before the first byte,
 * in-band error after it), and the gateway stops reading it instead of holding it. Channel a
 * (priority 10) misbehaves, b serves. The limits here are small so the answers stay small.
 */
const ROUTE = 'POST /v1/chat/completions';
const EVENT_LIMIT = 64 * 1024;
const BODY_LIMIT = 256 * 1024;
const ERROR_BODY_LIMIT = 4096;

let a: FakeUpstream;
let b: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  a = await startFakeUpstream();
  b = await startFakeUpstream();
  const channel = (name: string, up: FakeUpstream, priority: number) => ({
    name,
    kind: 'openai-compatible',
    base_url: `${up.url}/v1`,
    keys: [`key-${name}`],
    models: ['acme/m'],
    priority,
  });
  c = await startChatGateway({
    channels: [channel('a', a, 10), channel('b', b, 0)],
    models: [model('acme/m')],
    gateway: {
      retry_base_ms: 1,
      max_attempts: 2,
      circuit_failures: 1000,
      max_stream_event_bytes: EVENT_LIMIT,
      max_response_bytes: BODY_LIMIT,
      max_error_body_bytes: ERROR_BODY_LIMIT,
    },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await a?.close();
  await b?.close();
});
beforeEach(() => {
  b.on(ROUTE, (req) =>
    req.json?.stream
      ? { sse: sse([oaChunk({ role: 'assistant', content: 'from b' }), oaChunk({}, 'stop')]) }
      : { json: oaCompletion('from b') },
  );
  a.requests.length = 0;
  b.requests.length = 0;
});

const chat = (body: Record<string, unknown> = {}) =>
  c.gw.call('POST', '/v1/chat/completions', {
    token: c.key,
    body: { model: 'acme/m', messages: userMsg('hi'), ...body },
  });

/** `size` bytes in 8 KiB writes (chunked, no declared length), then the upstream holds on. */
function endless(status: number, size: number, type = 'application/json') {
  return {
    status,
    headers: { 'content-type': type },
    sse: [...Array.from({ length: Math.ceil(size / 8192) }, () => 'e'.repeat(8192)), 'hang' as const],
  };
}

/** One `data:` line of `size` characters of content, written `piece` characters at a time. */
function longEventSteps(size: number, piece = 1024): string[] {
  const head = `data: {"choices":[{"index":0,"delta":{"content":"`;
  const steps = [head];
  for (let n = 0; n < size; n += piece) steps.push('x'.repeat(piece));
  return steps;
}

describe('a stream event over gateway.max_stream_event_bytes', () => {
  it('as the first event: the next upstream serves, and the long line is not read to its end', async () => {
    // Twice the limit in 1 KiB writes, then the upstream holds the connection open: only the
    // gateway closing it ends this request.
    a.on(ROUTE, { sse: [...longEventSteps(2 * EVENT_LIMIT), 'hang'] });
    const r = await rawStream(c, { model: 'acme/m', messages: userMsg('hi') });
    expect(r.res.status).toBe(200);
    expect(r.chunks.map((ch) => ch.choices[0]?.delta?.content ?? '').join('')).toBe('from b');
    expect(r.res.headers.get('x-modelgate-attempts')).toBe('a/acme/m=bad_response, b/acme/m=ok');
    // Not retried on a: a malformed answer moves on at once.
    expect(a.requests).toHaveLength(1);
    expect(await a.requests[0]!.closed).toEqual({ completed: false });
  });

  it('after the first chunk: the stream ends in-band with a 502 error chunk, no fallback', async () => {
    a.on(ROUTE, {
      sse: [
        ...sse([oaChunk({ role: 'assistant', content: 'par' })], false),
        ...longEventSteps(2 * EVENT_LIMIT),
        'hang',
      ],
    });
    const r = await rawStream(c, { model: 'acme/m', messages: userMsg('hi') });
    expect(r.res.status).toBe(200);
    expect(r.events.at(-1)).toBe('[DONE]');
    const last = r.chunks.at(-1);
    expect(last.choices[0].finish_reason).toBe('error');
    expect(last.error.code).toBe(502);
    expect(last.error.message).toMatch(/stream event larger than the gateway's limit \(65536 bytes\)/);
    expect(r.chunks[0].choices[0].delta.content).toBe('par');
    expect(b.requests).toHaveLength(0);
    expect(await a.requests[0]!.closed).toEqual({ completed: false });
    const logs = await requestLogs(c);
    expect(logs[0]).toMatchObject({ status: 502, provider: 'a', stream: true });
  });

  it('an event just under the limit is delivered whole', async () => {
    const content = 'y'.repeat(EVENT_LIMIT - 200);
    a.on(ROUTE, { sse: sse([oaChunk({ role: 'assistant', content }), oaChunk({}, 'stop')]) });
    const r = await rawStream(c, { model: 'acme/m', messages: userMsg('hi') });
    expect(r.chunks[0].choices[0].delta.content).toBe(content);
    expect(r.res.headers.get('x-modelgate-attempts')).toBe('a/acme/m=ok');
  });
});

describe('an answer over gateway.max_response_bytes', () => {
  it('is a bad answer: the next upstream serves, and the answer is not read past the limit', async () => {
    a.on(ROUTE, endless(200, 4 * BODY_LIMIT));
    const r = await chat();
    expect(r.status).toBe(200);
    expect(r.body.choices[0].message.content).toBe('from b');
    expect(r.headers.get('x-modelgate-attempts')).toBe('a/acme/m=bad_response:200, b/acme/m=ok');
    expect(await a.requests[0]!.closed).toEqual({ completed: false });
  });

  it('on every upstream, a 502 for the client; one that declares its length is refused before its body', async () => {
    a.on(ROUTE, endless(200, 4 * BODY_LIMIT));
    b.on(ROUTE, { json: oaCompletion('z'.repeat(BODY_LIMIT)) });
    const r = await chat();
    expect(r.status).toBe(502);
    expect(r.body.error.code).toBe(502);
    expect(r.body.error.message).toMatch(/upstream answer larger than the gateway's limit \(262144 bytes\)/);
    expect(r.headers.get('x-modelgate-attempts')).toBe(
      'a/acme/m=bad_response:200, b/acme/m=bad_response:200',
    );
  });
});

describe('an error body over gateway.max_error_body_bytes', () => {
  it('non-streamed: classified by its status from its first bytes; the rest is not read', async () => {
    a.on(ROUTE, endless(500, 4 * BODY_LIMIT, 'text/html'));
    const r = await chat();
    expect(r.status).toBe(200);
    expect(r.body.choices[0].message.content).toBe('from b');
    // A 500 is retried (max_attempts 2), then the next upstream serves.
    expect(r.headers.get('x-modelgate-attempts')).toBe(
      'a/acme/m=server_error:500, a/acme/m=server_error:500, b/acme/m=ok',
    );
    for (const req of a.requests) expect(await req.closed).toEqual({ completed: false });
  });

  it('streamed: the same, before the first byte', async () => {
    a.on(ROUTE, endless(502, 4 * BODY_LIMIT, 'text/html'));
    const r = await rawStream(c, { model: 'acme/m', messages: userMsg('hi') });
    expect(r.res.status).toBe(200);
    expect(r.chunks.map((ch) => ch.choices[0]?.delta?.content ?? '').join('')).toBe('from b');
    expect(r.res.headers.get('x-modelgate-attempts')).toBe(
      'a/acme/m=server_error:502, a/acme/m=server_error:502, b/acme/m=ok',
    );
    for (const req of a.requests) expect(await req.closed).toEqual({ completed: false });
  });
});
