import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * docs/scaling.md, "Rate limits": the `x-ratelimit-*-requests` and `-tokens` headers of a 429 say
 * what the key has left once the refusal gave back what the other limits took, and the requests
 * headers are those of the limit that binds (the user's requests a minute when it refuses, not
 * the key's looser one). A client (the OpenAI SDKs, a dashboard) waits by them.
 */
let up: FakeUpstream;
let gw: TestGateway;
let cookie: string;

const MODEL = 'acme/chat';
const USER_RPM = 3;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': {
      json: {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1700000000,
        model: 'up',
        choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
      },
    },
  });
  gw = await startTestGateway(
    {
      gateway: { discover_models: false, max_attempts: 1 },
      limits: { user_rpm: USER_RPM },
      channels: [
        { name: 'up', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: [MODEL] },
      ],
      models: [{ id: MODEL, context_length: 100_000, max_completion_tokens: 4096 }],
    },
    // The Redis limiter under TEST_REDIS_URL (its keys prefixed by this file's database), else
    // the in-memory one.
  );
  cookie = await gw.login();
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

let users = 0;
/** A key of a user of its own: `limits.user_rpm` counts per user, so each test has its own. */
async function newKey(body: Record<string, unknown>): Promise<string> {
  const user = await gw.call('POST', '/api/user', {
    cookie,
    body: { username: `headers${++users}`, password: 'password-1234' },
  });
  expect(user.status).toBe(200);
  const r = await gw.call('POST', '/api/key', {
    cookie,
    body: { name: 'headers', user_id: user.body.data.id, ...body },
  });
  expect(r.status).toBe(200);
  return r.body.data.key;
}

const chat = (key: string, words: number) =>
  gw.call('POST', '/v1/chat/completions', {
    headers: { authorization: `Bearer ${key}` },
    body: { model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: 'hello '.repeat(words) }] },
  });

describe('rate-limit headers of a refusal', () => {
  it('a refusal by tokens a minute reports the request it gave back as still available', async () => {
    // rpm 2: one request a 30 s, so nothing refills during the test.
    const key = await newKey({ rpm_limit: 2, tpm_limit: 100 });
    const first = await chat(key, 60);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining-requests')).toBe('1');

    const refused = await chat(key, 60);
    expect(refused.status).toBe(429);
    expect(refused.body.error.metadata.scope).toBe('key_tpm');
    // The refusal took no request from the minute: one is left, as the next call shows.
    expect(refused.headers.get('x-ratelimit-limit-requests')).toBe('2');
    expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('1');
    expect(refused.headers.get('x-ratelimit-reset-requests')).toBe('30s');

    const small = await chat(key, 1);
    expect(small.status).toBe(200);
    expect(small.headers.get('x-ratelimit-remaining-requests')).toBe('0');
  });

  it('a refusal by requests a minute reports the tokens it gave back as still available', async () => {
    const key = await newKey({ rpm_limit: 1, tpm_limit: 1000 });
    const first = await chat(key, 1);
    expect(first.status).toBe(200);
    const left = Number(first.headers.get('x-ratelimit-remaining-tokens'));

    const refused = await chat(key, 200);
    expect(refused.status).toBe(429);
    expect(refused.body.error.metadata.scope).toBe('key_rpm');
    // Its ~200-token prompt was not spent: at least what the first call left is still there.
    expect(Number(refused.headers.get('x-ratelimit-remaining-tokens'))).toBeGreaterThanOrEqual(left);
  });

  it("a refusal by the user's requests a minute reports that limit, not the key's looser one", async () => {
    const key = await newKey({ rpm_limit: 100 });
    for (let i = 0; i < USER_RPM; i++) expect((await chat(key, 1)).status).toBe(200);

    const refused = await chat(key, 1);
    expect(refused.status).toBe(429);
    expect(refused.body.error.metadata).toEqual({ scope: 'user_rpm', limit: USER_RPM });
    expect(refused.headers.get('x-ratelimit-limit')).toBe(String(USER_RPM));
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('x-ratelimit-limit-requests')).toBe(String(USER_RPM));
    expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('0');
  });
});
