import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { model, oaCompletion } from '../chat/chat-helpers.js';
import { startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Which models a key's allow-list entry admits. An entry names a model by its id or an alias, or
 * by another of its names (its upstream name, its id without the author) only when that name
 * resolves to the model. Before, `["fake-model"]` admitted `premium/fake-model`, a different and
 * dearer model whose upstream name is `fake-model`, in chat and in `/v1/models`.
 */
let up: Awaited<ReturnType<typeof startFakeUpstream>>;
let gw: TestGateway;
let cookie: string;

const embedding = {
  object: 'list',
  data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }],
  model: 'up-embed',
  usage: { prompt_tokens: 1, total_tokens: 1 },
};
const EMBED = { output_modalities: ['embeddings'], pricing: { prompt: '0.0000001' } };

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': { json: oaCompletion('hi') },
    'POST /v1/embeddings': { json: embedding },
  });
  const served = [
    'fake-model',
    'premium/fake-model',
    'a/dup',
    'b/dup',
    'openai/gpt-4o-mini',
    'fake-embed',
    'premium/fake-embed',
  ];
  gw = await startTestGateway({
    gateway: { discover_models: false, retry_base_ms: 1 },
    channels: [
      { name: 'up', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: served },
    ],
    models: [
      model('fake-model'),
      model('premium/fake-model', {
        pricing: { prompt: '0.0001', completion: '0.0002' },
        aliases: ['fancy-model'],
      }),
      model('a/dup'),
      model('b/dup'),
      { id: 'fake-embed', ...EMBED },
      { id: 'premium/fake-embed', ...EMBED, pricing: { prompt: '0.0001' } },
    ],
  });
  cookie = await gw.login();
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

async function newKey(allowed_models: string[]) {
  const r = await gw.call('POST', '/api/key', { cookie, body: { name: 'k', allowed_models } });
  if (r.status !== 200) throw new Error(`key: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data.key as string;
}
const listed = async (key: string) =>
  (await gw.call('GET', '/v1/models', { token: key })).body.data.map((m: { id: string }) => m.id).sort();
const chat = (key: string, body: Record<string, unknown>) =>
  gw.call('POST', '/v1/chat/completions', {
    token: key,
    body: { messages: [{ role: 'user', content: 'x' }], ...body },
  });

describe('an exact allow-list entry', () => {
  it("does not admit another author's model whose upstream name it is (the reviewer's case)", async () => {
    const key = await newKey(['fake-model']);
    const refused = await chat(key, { model: 'premium/fake-model' });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({
      message: 'this API key may not use model premium/fake-model',
      param: 'model',
    });
    expect((await chat(key, { model: 'fake-model' })).status).toBe(200);
    expect(await listed(key)).toEqual(['fake-model']);
    expect((await gw.call('GET', '/v1/models/premium/fake-model', { token: key })).status).toBe(404);
    expect((await gw.call('GET', '/v1/models/premium/fake-model/endpoints', { token: key })).status).toBe(
      404,
    );
    // As a fallback it is dropped, as any fallback the key may not use.
    up.on('POST /v1/chat/completions', { status: 500, json: { error: { message: 'down' } } });
    try {
      const fb = await chat(key, { model: 'fake-model', models: ['premium/fake-model'] });
      expect(fb.headers.get('x-modelgate-attempts') ?? '').not.toContain('premium/fake-model');
      expect(up.requests.some((r) => r.json?.model === 'premium/fake-model')).toBe(false);
    } finally {
      up.on('POST /v1/chat/completions', { json: oaCompletion('hi') });
    }
    // The Anthropic and Responses ingresses plan as chat does.
    const messages = await gw.call('POST', '/v1/messages', {
      token: key,
      body: { model: 'premium/fake-model', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] },
    });
    expect(messages.status).toBe(403);
    const responses = await gw.call('POST', '/v1/responses', {
      token: key,
      body: { model: 'premium/fake-model', input: 'x' },
    });
    expect(responses.status).toBe(403);
  });

  it('admits a model by its id or an alias', async () => {
    const key = await newKey(['premium/fake-model']);
    expect((await chat(key, { model: 'premium/fake-model' })).status).toBe(200);
    expect((await chat(key, { model: 'fake-model' })).status).toBe(403);
    expect(await listed(key)).toEqual(['premium/fake-model']);
    const alias = await newKey(['fancy-model']);
    expect((await chat(alias, { model: 'premium/fake-model' })).status).toBe(200);
    expect(await listed(alias)).toEqual(['premium/fake-model']);
  });

  it('admits by a plain name only the model it resolves to: gpt-4o-mini still admits openai/gpt-4o-mini', async () => {
    const key = await newKey(['gpt-4o-mini']);
    expect((await chat(key, { model: 'openai/gpt-4o-mini' })).status).toBe(200);
    expect((await chat(key, { model: 'gpt-4o-mini' })).status).toBe(200);
    expect(await listed(key)).toEqual(['openai/gpt-4o-mini']);
    expect((await gw.call('GET', '/v1/models/openai/gpt-4o-mini', { token: key })).status).toBe(200);
    // `dup` is the plain name of two models: it resolves to neither, and admits neither.
    const dup = await newKey(['dup']);
    expect((await chat(dup, { model: 'a/dup' })).status).toBe(403);
    expect((await chat(dup, { model: 'b/dup' })).status).toBe(403);
    expect(await listed(dup)).toEqual([]);
  });

  it('is read the same way for embeddings', async () => {
    const key = await newKey(['fake-embed']);
    const embed = (m: string) =>
      gw.call('POST', '/v1/embeddings', { token: key, body: { model: m, input: 'x' } });
    const refused = await embed('premium/fake-embed');
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ param: 'model' });
    expect((await embed('fake-embed')).status).toBe(200);
  });
});

describe('a wildcard entry', () => {
  it('matches model ids, not upstream names', async () => {
    const key = await newKey(['fake-*']);
    expect(await listed(key)).toEqual(['fake-embed', 'fake-model']);
    expect((await chat(key, { model: 'premium/fake-model' })).status).toBe(403);
    expect((await chat(key, { model: 'fake-model' })).status).toBe(200);
    const author = await newKey(['premium/*']);
    expect(await listed(author)).toEqual(['premium/fake-embed', 'premium/fake-model']);
    expect((await chat(author, { model: 'premium/fake-model' })).status).toBe(200);
    expect((await chat(author, { model: 'fancy-model' })).status).toBe(200);
  });
});
