import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let up: FakeUpstream;
let gw: TestGateway;
let key: string;
let revoked = true;

const ok = {
  id: 'c1',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
};
const denied = {
  status: 401,
  json: { error: { message: 'Incorrect API key', type: 'invalid_request_error' } },
};

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': (r) =>
      r.headers.authorization === 'Bearer key-a' && revoked ? denied : { json: ok },
    'GET /v1/models': (r) =>
      r.headers.authorization === 'Bearer key-a' && revoked
        ? denied
        : { json: { object: 'list', data: [{ id: 'm' }] } },
  });
  gw = await startTestGateway({
    channels: [
      {
        name: 'two-keys',
        kind: 'openai-compatible',
        base_url: `${up.url}/v1`,
        keys: ['key-a', 'key-b'],
        models: ['acme/m'],
      },
    ],
    models: [{ id: 'acme/m', context_length: 1000 }],
    gateway: { key_probe_interval_ms: 0, retry_base_ms: 1 },
  });
  const cookie = await gw.login();
  key = (await gw.call('POST', '/api/key', { cookie, body: { name: 'probe' } })).body.data.key;
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

const chat = () =>
  gw.call('POST', '/v1/chat/completions', {
    token: key,
    body: { model: 'acme/m', messages: [{ role: 'user', content: 'hi' }] },
  });

describe('set-aside upstream keys', () => {
  it('a key refused with 401 is set aside, and the probe brings it back once the upstream accepts it', async () => {
    for (let i = 0; i < 4; i++) expect((await chat()).status).toBe(200);
    const health = gw.services.chat.health;
    expect(health.setAside()).toEqual([expect.objectContaining({ keys: ['key-a'] })]);
    // Still refused: the probe leaves it aside.
    expect(await gw.services.chat.keyProbe.runOnce()).toBe(0);
    expect(health.setAside()).toHaveLength(1);
    revoked = false;
    expect(await gw.services.chat.keyProbe.runOnce()).toBe(1);
    expect(health.setAside()).toEqual([]);
    const before = up.requests.filter(
      (r) => r.path.endsWith('/chat/completions') && r.headers.authorization === 'Bearer key-a',
    ).length;
    for (let i = 0; i < 6; i++) expect((await chat()).status).toBe(200);
    const after = up.requests.filter(
      (r) => r.path.endsWith('/chat/completions') && r.headers.authorization === 'Bearer key-a',
    ).length;
    expect(after).toBeGreaterThan(before);
  });
});
