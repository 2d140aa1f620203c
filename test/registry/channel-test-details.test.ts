import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * `POST /api/channel/:id/test` on a failure: beside the message, what an administrator needs to
 * fix it (the upstream's status, the kind of failure, the model tried and the name sent for it).
 */
let up: FakeUpstream;
let gw: TestGateway;
let root: string;
let id: number;

const completion = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'acme-chat-v2',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
};

beforeAll(async () => {
  up = await startFakeUpstream();
  // A short connect/first-byte timeout: the channel test waits at most that long.
  gw = await startTestGateway({ gateway: { connect_timeout_ms: 400 } });
  root = await gw.login();
  const made = await gw.call('POST', '/api/channel', {
    cookie: root,
    body: {
      name: 'acme',
      kind: 'openai-compatible',
      base_url: `${up.url}/v1`,
      keys: ['sk-acme'],
      models: ['acme/chat'],
      model_mapping: { 'acme/chat': 'acme-chat-v2' },
    },
  });
  expect(made.status).toBe(200);
  id = made.body.data.id;
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

const test = async () => {
  const r = await gw.call('POST', `/api/channel/${id}/test`, { cookie: root });
  expect(r.status).toBe(200);
  return r.body;
};

describe('channel test details', () => {
  it('says what worked: the model, the name sent, the call, no status or error kind', async () => {
    up.on('POST /v1/chat/completions', { json: completion });
    const r = await test();
    expect(r).toMatchObject({ success: true, message: '' });
    expect(r.data).toMatchObject({
      success: true,
      model: 'acme/chat',
      upstream_model: 'acme-chat-v2',
      endpoint: 'chat',
      upstream_status: null,
      error_kind: null,
      message: 'ok',
    });
    expect(up.requests.at(-1)!.json.model).toBe('acme-chat-v2');
  });

  it("names a refused key's status and kind, keeping the upstream's message", async () => {
    up.on('POST /v1/chat/completions', {
      status: 401,
      json: {
        error: {
          message: 'Incorrect API key provided: sk-acme.',
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      },
    });
    const r = await test();
    expect(r.success).toBe(false);
    expect(r.message).toBe(r.data.message);
    expect(r.data).toMatchObject({
      success: false,
      model: 'acme/chat',
      upstream_model: 'acme-chat-v2',
      endpoint: 'chat',
      upstream_status: 401,
      error_kind: 'auth',
    });
    expect(r.data.message).toContain(`${up.url}/v1 answered 401`);
    expect(r.data.message).toContain('Incorrect API key provided');
    expect(Number.isInteger(r.data.latency_ms)).toBe(true);
  });

  it('names an unknown model as not_found with its 404', async () => {
    up.on('POST /v1/chat/completions', {
      status: 404,
      json: {
        error: {
          message: 'The model `acme-chat-v2` does not exist or you do not have access to it.',
          type: 'invalid_request_error',
          param: null,
          code: 'model_not_found',
        },
      },
    });
    const r = await test();
    expect(r.data).toMatchObject({ success: false, upstream_status: 404, error_kind: 'not_found' });
    expect(r.data.message).toContain('does not exist');
  });

  it('names a timeout, with no status (the upstream never answered)', async () => {
    up.on('POST /v1/chat/completions', { hang: true });
    const r = await test();
    expect(r.data).toMatchObject({ success: false, upstream_status: null, error_kind: 'timeout' });
    expect(r.data.latency_ms).toBeGreaterThanOrEqual(300);
  });

  it('names a refused connection, with no status', async () => {
    // Another host takes the keys again (they are not sent to a host they were not given for).
    const moved = await gw.call('PUT', '/api/channel', {
      cookie: root,
      body: { id, base_url: 'http://127.0.0.1:1/v1', keys: ['sk-acme'] },
    });
    expect(moved.status).toBe(200);
    const r = await test();
    expect(r.data).toMatchObject({ success: false, upstream_status: null, error_kind: 'connection' });
    expect(r.data.message).toMatch(/^http:\/\/127\.0\.0\.1:1\/v1: /);
  });
});
