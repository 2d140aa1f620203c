import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * docs/scaling.md, "Rate limits": a key's (and its user's) requests per minute count the calls
 * that reach a model, not the lookups around them. Listing models, one model, its endpoints
 * (`GET /v1/models...`, what a client or the console's playground asks first) take nothing
 * from a key with `rpm_limit: 1`.
 */
let up: FakeUpstream;
let gw: TestGateway;
let cookie: string;
let calls = 0;

const MODEL = 'acme/chat';

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': () => {
      calls++;
      return {
        json: {
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1700000000,
          model: 'up',
          choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
        },
      };
    },
  });
  gw = await startTestGateway(
    {
      gateway: { discover_models: false, max_attempts: 1 },
      channels: [
        { name: 'up', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: [MODEL] },
      ],
      models: [{ id: MODEL, context_length: 100_000, max_completion_tokens: 4096 }],
    },
    // The in-memory rate limiter: a 429 here is about this file's keys only.
    { redis: false },
  );
  cookie = await gw.login();
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

async function newKey(body: Record<string, unknown>): Promise<string> {
  const r = await gw.call('POST', '/api/key', { cookie, body: { name: 'lookups', ...body } });
  expect(r.status).toBe(200);
  return r.body.data.key;
}

const chat = (key: string) =>
  gw.call('POST', '/v1/chat/completions', {
    headers: { authorization: `Bearer ${key}` },
    body: { model: MODEL, messages: [{ role: 'user', content: 'hello' }] },
  });

const lookups = (key: string) => {
  const headers = { authorization: `Bearer ${key}` };
  return Promise.all([
    gw.call('GET', '/v1/models', { headers }),
    gw.call('GET', '/api/v1/models', { headers }),
    gw.call('GET', `/v1/models/${MODEL}`, { headers }),
    gw.call('GET', `/v1/models/${MODEL}/endpoints`, { headers }),
  ]);
};

describe('rate limits count model calls, not lookups', () => {
  it("a key's rpm: lookups before and after its one call are answered, the second call is refused", async () => {
    const key = await newKey({ rpm_limit: 1 });
    for (const r of await lookups(key)) expect(r.status).toBe(200);
    const before = calls;
    expect((await chat(key)).status).toBe(200);
    for (const r of await lookups(key)) expect(r.status).toBe(200);
    const refused = await chat(key);
    expect(refused.status).toBe(429);
    expect(calls).toBe(before + 1);
  });
});
