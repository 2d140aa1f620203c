import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Keys of the embeddings-only kinds (Voyage, Jina, Cohere) that answered 401/403 are set aside
 * like a chat channel's; they have no model listing for the key probe to ask, so the probe gives
 * them back to the next request rather than leaving them aside until a restart.
 */
let up: FakeUpstream;
let gw: TestGateway;
let key: string;
let revoked = true;

const denied = { status: 401, json: { detail: 'Provided API key is invalid.' } };
const voyageAnswer = (input: string[]) => ({
  json: {
    object: 'list',
    data: input.map((_, index) => ({ object: 'embedding', embedding: [0.1, 0.2], index })),
    model: 'voyage-3.5',
    usage: { total_tokens: input.length },
  },
});

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/embeddings': (r) =>
      r.headers.authorization === 'Bearer vk-a' && revoked ? denied : voyageAnswer(r.json.input),
  });
  gw = await startTestGateway({
    channels: [
      { name: 'voy', kind: 'voyage', base_url: up.url, keys: ['vk-a', 'vk-b'], models: ['voyage-3.5'] },
    ],
    gateway: { key_probe_interval_ms: 0, retry_base_ms: 1, discover_models: false },
  });
  const cookie = await gw.login();
  key = (await gw.call('POST', '/api/key', { cookie, body: { name: 'probe' } })).body.data.key;
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

const embed = () =>
  gw.call('POST', '/v1/embeddings', { token: key, body: { model: 'voyageai/voyage-3.5', input: ['hi'] } });
const callsWith = (k: string) => up.requests.filter((r) => r.headers.authorization === `Bearer ${k}`).length;

describe('set-aside keys of an embeddings channel', () => {
  it('a Voyage key refused with 401 is set aside, then given back by the probe and used again', async () => {
    for (let i = 0; i < 4; i++) expect((await embed()).status).toBe(200);
    const health = gw.services.chat.health;
    expect(health.setAside()).toEqual([expect.objectContaining({ keys: ['vk-a'] })]);
    revoked = false;
    // Voyage has no model listing to probe with: the key goes back into rotation.
    expect(await gw.services.chat.keyProbe.runOnce()).toBe(1);
    expect(health.setAside()).toEqual([]);
    const before = callsWith('vk-a');
    for (let i = 0; i < 4; i++) expect((await embed()).status).toBe(200);
    expect(callsWith('vk-a')).toBeGreaterThan(before);
  });

  it('a key still refused when it is given back is set aside again by the next request that tries it', async () => {
    revoked = true;
    for (let i = 0; i < 4; i++) expect((await embed()).status).toBe(200);
    const health = gw.services.chat.health;
    expect(health.setAside()).toEqual([expect.objectContaining({ keys: ['vk-a'] })]);
    expect(await gw.services.chat.keyProbe.runOnce()).toBe(1);
    for (let i = 0; i < 4; i++) expect((await embed()).status).toBe(200);
    expect(health.setAside()).toEqual([expect.objectContaining({ keys: ['vk-a'] })]);
  });
});
