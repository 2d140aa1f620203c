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

  it('a key set aside at a wrong address is tried again once the channel points elsewhere; a removed key is not probed', async () => {
    const wrong = await startFakeUpstream({ 'POST /v1/chat/completions': denied, 'GET /v1/models': denied });
    try {
      const cookie = await gw.login();
      const made = await gw.call('POST', '/api/channel', {
        cookie,
        body: {
          name: 'misaddressed',
          kind: 'openai-compatible',
          base_url: `${wrong.url}/v1`,
          keys: ['key-x', 'key-y'],
          models: ['acme/fixed'],
        },
      });
      expect(made.status).toBe(200);
      const id = made.body.data.id as number;
      await gw.call('POST', '/api/model', { cookie, body: { id: 'acme/fixed', context_length: 1000 } });
      const ask = () =>
        gw.call('POST', '/v1/chat/completions', {
          token: key,
          body: { model: 'acme/fixed', messages: [{ role: 'user', content: 'hi' }] },
        });
      await waitForModel(ask);
      expect((await ask()).status).not.toBe(200);
      const health = gw.services.chat.health;
      expect(
        health
          .setAside()
          .find((s) => s.channelId === id)
          ?.keys.sort(),
      ).toEqual(['key-x', 'key-y']);
      // The admin fixes the address (another host: the keys are sent again).
      const fixed = await gw.call('PUT', '/api/channel', {
        cookie,
        body: { id, base_url: `${up.url}/v1`, keys: ['key-x', 'key-y'] },
      });
      expect(fixed.status).toBe(200);
      await new Promise((r) => setTimeout(r, 1200)); // every instance reloads the registry within 1 s
      expect((await ask()).status).toBe(200);
      expect(health.setAside().find((s) => s.channelId === id)).toBeUndefined();
      // Keys dropped from a channel are no longer set aside (nor probed).
      await gw.call('PUT', '/api/channel', {
        cookie,
        body: { id, base_url: `${wrong.url}/v1`, keys: ['key-x'] },
      });
      await new Promise((r) => setTimeout(r, 1200));
      await ask();
      expect(health.setAside().find((s) => s.channelId === id)?.keys).toEqual(['key-x']);
      await gw.call('PUT', '/api/channel', { cookie, body: { id, keys: ['key-z'] } });
      await new Promise((r) => setTimeout(r, 1200));
      await ask();
      expect(health.setAside().find((s) => s.channelId === id)?.keys).toEqual(['key-z']);
    } finally {
      await wrong.close();
    }
  });
});

/** A model added through the API is routable once the registry has reloaded (within 1 s). */
async function waitForModel(ask: () => Promise<{ status: number }>) {
  for (let i = 0; i < 30; i++) {
    const r = await ask();
    if (r.status !== 404) return;
    await new Promise((res) => setTimeout(res, 100));
  }
}
