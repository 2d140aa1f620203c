import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * An OpenAI-compatible embeddings server without a model listing (text-embeddings-inference and
 * others serve `/v1/embeddings` but no `/v1/models`): the key probe's listing answers 404, which
 * says nothing about the key. The key is given back as the kinds without a listing have theirs,
 * for the next request to try; it used to stay aside until a restart. A listing that refuses the
 * key (401) still keeps it aside.
 */
let tei: FakeUpstream;
let vllm: FakeUpstream;
let gw: TestGateway;
let key: string;
let revoked = true;

const denied = {
  status: 401,
  json: { error: { message: 'invalid api key', type: 'invalid_request_error' } },
};
const answer = (input: string[]) => ({
  json: {
    object: 'list',
    data: input.map((_, index) => ({ object: 'embedding', embedding: [0.1, 0.2], index })),
    model: 'bge',
    usage: { prompt_tokens: 1, total_tokens: 1 },
  },
});
const bad = (auth: string | undefined, k: string) => auth === `Bearer ${k}` && revoked;

beforeAll(async () => {
  tei = await startFakeUpstream({
    'POST /v1/embeddings': (r) => (bad(r.headers.authorization, 'tk-a') ? denied : answer(r.json.input)),
  });
  vllm = await startFakeUpstream({
    'POST /v1/embeddings': (r) => (bad(r.headers.authorization, 'vk-a') ? denied : answer(r.json.input)),
    // Still refuses the key after the embeddings route took it back: the probe must believe this.
    'GET /v1/models': (r) =>
      r.headers.authorization === 'Bearer vk-a' ? denied : { json: { object: 'list', data: [] } },
  });
  gw = await startTestGateway({
    channels: [
      {
        name: 'tei',
        kind: 'openai-compatible',
        base_url: `${tei.url}/v1`,
        keys: ['tk-a', 'tk-b'],
        models: ['acme/tei'],
      },
      {
        name: 'vllm',
        kind: 'openai-compatible',
        base_url: `${vllm.url}/v1`,
        keys: ['vk-a', 'vk-b'],
        models: ['acme/vllm'],
      },
    ],
    models: [
      { id: 'acme/tei', output_modalities: ['embeddings'] },
      { id: 'acme/vllm', output_modalities: ['embeddings'] },
    ],
    gateway: { key_probe_interval_ms: 0, retry_base_ms: 1, discover_models: false },
  });
  const cookie = await gw.login();
  key = (await gw.call('POST', '/api/key', { cookie, body: { name: 'probe' } })).body.data.key;
});
afterAll(async () => {
  await gw?.close();
  await tei?.close();
  await vllm?.close();
});

const embed = (model: string) =>
  gw.call('POST', '/v1/embeddings', { token: key, body: { model, input: ['hi'] } });
const aside = () =>
  Object.fromEntries(gw.services.chat.health.setAside().map((s) => [s.channelId, [...s.keys].sort()]));

describe('the key probe of an OpenAI-compatible embeddings channel', () => {
  it('gives a key back when the upstream has no model listing (404), and keeps one its listing refuses', async () => {
    for (let i = 0; i < 4; i++) {
      expect((await embed('acme/tei')).status).toBe(200);
      expect((await embed('acme/vllm')).status).toBe(200);
    }
    const [teiId, vllmId] = ['acme/tei', 'acme/vllm'].map(
      (m) => gw.services.registry.targetsFor(m, { endpoint: 'embeddings' })[0]!.channelId,
    );
    expect(aside()).toEqual({ [teiId!]: ['tk-a'], [vllmId!]: ['vk-a'] });
    revoked = false;
    expect(await gw.services.chat.keyProbe.runOnce()).toBe(1);
    expect(aside()).toEqual({ [vllmId!]: ['vk-a'] });
    const before = tei.requests.filter((r) => r.headers.authorization === 'Bearer tk-a').length;
    for (let i = 0; i < 4; i++) expect((await embed('acme/tei')).status).toBe(200);
    expect(tei.requests.filter((r) => r.headers.authorization === 'Bearer tk-a').length).toBeGreaterThan(
      before,
    );
  });
});
