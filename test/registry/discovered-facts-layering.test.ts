import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oaCompletion } from '../chat/chat-helpers.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * What an upstream's model listing says (context window, `created`) sits between the default
 * file and the config file: a config or admin entry that prices a discovered model changes the
 * price only, and the listing's facts still show through (they fell back to created 0 and
 * 8,192 tokens, and a chat the listing's window admits was refused).
 */

/** A vLLM server's `GET /v1/models` entry, as it lists one. */
const vllmModel = (id: string, o: Record<string, unknown> = {}) => ({
  id,
  object: 'model',
  created: 1721172741,
  owned_by: 'vllm',
  root: id,
  parent: null,
  max_model_len: 131072,
  ...o,
});
const vllmListing = (data: unknown[]) => ({ json: { object: 'list', data } });

const PRICING = { prompt: '0.0000002', completion: '0.0000006' };
const chatBody = { model: 'fake-long', max_tokens: 20000, messages: [{ role: 'user', content: 'hi' }] };

describe('pricing a discovered model through /api/model', () => {
  let up: FakeUpstream;
  let gw: TestGateway;
  let root: string;
  let key: string;
  let channelId: number;
  let listing: unknown[];
  const refresh = async (g = gw, id = channelId) => {
    const r = await g.call('POST', `/api/channel/${id}/models/refresh`, { cookie: root });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  };
  const v1Model = async (g = gw) => (await g.call('GET', '/v1/models/fake-long', { token: key })).body;
  const adminModel = async (g = gw) =>
    (await g.call('GET', '/api/model/fake-long', { cookie: root })).body.data;

  beforeAll(async () => {
    // A self-hosted proxy that also serves gpt-4o-mini, with a smaller window than OpenAI's.
    listing = [
      vllmModel('fake-long'),
      vllmModel('gpt-4o-mini', { created: 1700000000, max_model_len: 32768 }),
    ];
    up = await startFakeUpstream({
      'GET /v1/models': () => vllmListing(listing),
      'POST /v1/chat/completions': { json: oaCompletion('ok') },
    });
    gw = await startTestGateway({
      channels: [{ name: 'long', kind: 'openai-compatible', base_url: `${up.url}/v1` }],
    });
    root = await gw.login();
    key = (await gw.call('POST', '/api/key', { cookie: root, body: { name: 'k' } })).body.data.key;
    channelId = (await gw.call('GET', '/api/channel', { cookie: root })).body.data.find(
      (c: any) => c.name === 'long',
    ).id;
    await refresh();
  });
  afterAll(async () => {
    await gw?.close();
    await up?.close();
  });

  it('keeps the listing’s context length and created, in every answer and for chat', async () => {
    expect(await v1Model()).toMatchObject({ created: 1721172741, context_length: 131072 });
    expect((await gw.call('POST', '/v1/chat/completions', { token: key, body: chatBody })).status).toBe(200);

    const put = await gw.call('PUT', '/api/model', {
      cookie: root,
      body: { id: 'fake-long', pricing: PRICING },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const facts = { created: 1721172741, context_length: 131072 };
    expect(put.body.data).toMatchObject({ ...facts, pricing: PRICING, overridden: true, source: 'admin' });
    expect(await adminModel()).toMatchObject({ ...facts, pricing: PRICING });
    const all = await gw.call('GET', '/api/model?q=fake-long', { cookie: root });
    expect(all.body.data.find((m: any) => m.id === 'fake-long')).toMatchObject(facts);
    expect(await v1Model()).toMatchObject({
      ...facts,
      pricing: PRICING,
      top_provider: { context_length: 131072 },
    });

    const chat = await gw.call('POST', '/v1/chat/completions', { token: key, body: chatBody });
    expect(chat.status, JSON.stringify(chat.body)).toBe(200);
    // Above the listed window it is still refused, naming the listed window.
    const over = await gw.call('POST', '/v1/chat/completions', {
      token: key,
      body: { ...chatBody, max_tokens: 131072 },
    });
    expect(over.status).toBe(400);
    expect(over.body.error.message).toBe(
      'max_tokens: must be below the context length of fake-long (131072)',
    );
  });

  it('the fields an admin sends win over the listing; unsetting one brings the listing back', async () => {
    const set = await gw.call('PUT', '/api/model', {
      cookie: root,
      body: { id: 'fake-long', context_length: 65536, created: 1600000000 },
    });
    expect(set.body.data).toMatchObject({ context_length: 65536, created: 1600000000, pricing: PRICING });
    const unset = await gw.call('PUT', '/api/model', {
      cookie: root,
      body: { id: 'fake-long', context_length: null },
    });
    expect(unset.body.data).toMatchObject({ context_length: 131072, created: 1600000000 });
    // Back to pricing only, for the tests below.
    await gw.call('DELETE', '/api/model/fake-long', { cookie: root });
    await gw.call('POST', '/api/model', { cookie: root, body: { id: 'fake-long', pricing: PRICING } });
    expect(await adminModel()).toMatchObject({ created: 1721172741, context_length: 131072 });
  });

  it('a default-file model takes the listed window under its admin price, and keeps the file’s date', async () => {
    const mini = await gw.call('PUT', '/api/model', {
      cookie: root,
      body: { id: 'openai/gpt-4o-mini', pricing: { prompt: '0.0000001' } },
    });
    expect(mini.body.data).toMatchObject({
      context_length: 32768,
      created: 1721260800,
      max_completion_tokens: 16384,
    });
    expect((await gw.call('GET', '/v1/models/gpt-4o-mini', { token: key })).body.context_length).toBe(32768);
    await gw.call('DELETE', '/api/model/openai/gpt-4o-mini', { cookie: root });
  });

  it('another instance on the same database merges the same way, after admin writes and refreshes', async () => {
    const gw2 = await startTestGateway(
      { channels: [{ name: 'long', kind: 'openai-compatible', base_url: `${up.url}/v1` }] },
      { databaseUrl: gw.databaseUrl },
    );
    try {
      expect(await adminModel(gw2)).toMatchObject({
        created: 1721172741,
        context_length: 131072,
        pricing: PRICING,
      });
      // An admin write on the first instance reaches the second (poll or push): only the price moves.
      await gw.call('PUT', '/api/model', {
        cookie: root,
        body: { id: 'fake-long', pricing: { prompt: '0.0000003' } },
      });
      let seen = await adminModel(gw2);
      for (let i = 0; i < 200 && seen.pricing.prompt !== '0.0000003'; i++) {
        await new Promise((r) => setTimeout(r, 25));
        seen = await adminModel(gw2);
      }
      expect(seen).toMatchObject({
        pricing: { prompt: '0.0000003' },
        created: 1721172741,
        context_length: 131072,
      });
      // A refresh on the first instance: the second takes the new window under the admin entry.
      listing[0] = vllmModel('fake-long', { max_model_len: 262144 });
      await refresh();
      for (let i = 0; i < 200 && seen.context_length !== 262144; i++) {
        await new Promise((r) => setTimeout(r, 25));
        seen = await adminModel(gw2);
      }
      expect(seen).toMatchObject({
        pricing: { prompt: '0.0000003' },
        context_length: 262144,
        created: 1721172741,
      });
      expect(await adminModel()).toMatchObject(seen);
    } finally {
      await gw2.close();
    }
    listing[0] = vllmModel('fake-long');
    await refresh();
    await gw.call('PUT', '/api/model', { cookie: root, body: { id: 'fake-long', pricing: PRICING } });
  });

  it('two channels listing different facts: the largest window and the earliest date, either way round', async () => {
    const small = vllmModel('fake-long', { created: 1700000000, max_model_len: 32768 });
    let otherListing = [small];
    const other = await startFakeUpstream({ 'GET /v1/models': () => vllmListing(otherListing) });
    let otherId: number | undefined;
    try {
      const made = await gw.call('POST', '/api/channel', {
        cookie: root,
        body: { name: 'short', kind: 'openai-compatible', base_url: `${other.url}/v1`, priority: 5 },
      });
      expect(made.status).toBe(200);
      otherId = made.body.data.id as number;
      await refresh(gw, otherId);
      const merged = { context_length: 131072, created: 1700000000 };
      expect(await adminModel()).toMatchObject({ ...merged, pricing: PRICING });
      expect(await v1Model()).toMatchObject(merged);
      // The other way round: the first channel lists the small facts, the second the large ones.
      otherListing = [vllmModel('fake-long')];
      await refresh(gw, otherId);
      listing[0] = small;
      await refresh();
      expect(await adminModel()).toMatchObject(merged);
      listing[0] = vllmModel('fake-long');
      await refresh();
    } finally {
      if (otherId !== undefined) await gw.call('DELETE', `/api/channel/${otherId}`, { cookie: root });
      await other.close();
    }
    expect(await adminModel()).toMatchObject({ context_length: 131072, created: 1721172741 });
  });

  it('a refresh that no longer lists the model takes its facts away; listing it again brings them back', async () => {
    listing = listing.filter((m: any) => m.id !== 'fake-long');
    await refresh();
    expect(await adminModel()).toMatchObject({
      servable: false,
      created: 0,
      context_length: 8192,
      pricing: PRICING,
    });
    listing.push(vllmModel('fake-long'));
    await refresh();
    expect(await adminModel()).toMatchObject({ servable: true, created: 1721172741, context_length: 131072 });
  });

  it('deleting the admin entry leaves the discovered model with its listed facts', async () => {
    expect((await gw.call('DELETE', '/api/model/fake-long', { cookie: root })).status).toBe(200);
    expect(await adminModel()).toMatchObject({
      source: 'discovered',
      overridden: false,
      created: 1721172741,
      context_length: 131072,
      pricing: { prompt: '0', completion: '0' },
    });
    expect(await v1Model()).toMatchObject({ created: 1721172741, context_length: 131072 });
  });
});

describe("a config file's models entry for a discovered model", () => {
  let up: FakeUpstream;
  let gw: TestGateway;
  let key: string;
  const v1 = async (id: string) => (await gw.call('GET', `/v1/models/${id}`, { token: key })).body;

  beforeAll(async () => {
    up = await startFakeUpstream({
      'GET /v1/models': vllmListing([vllmModel('fake-long'), vllmModel('fake-narrow')]),
      'POST /v1/chat/completions': { json: oaCompletion('ok') },
    });
    gw = await startTestGateway({
      channels: [
        { name: 'long', kind: 'openai-compatible', base_url: `${up.url}/v1` },
        // Jina can only embed, and lists nothing: the channel names its models.
        { name: 'jin', kind: 'jina', base_url: 'http://127.0.0.1:9/v1', keys: ['j'], models: ['jina-new'] },
      ],
      models: [
        { id: 'fake-long', pricing: PRICING },
        { id: 'fake-narrow', context_length: 4096 },
        { id: 'jina-new', pricing: { prompt: '0.00000002' } },
      ],
    });
    const root = await gw.login();
    key = (await gw.call('POST', '/api/key', { cookie: root, body: { name: 'k' } })).body.data.key;
    const ch = (await gw.call('GET', '/api/channel', { cookie: root })).body.data.find(
      (c: any) => c.name === 'long',
    );
    expect((await gw.call('POST', `/api/channel/${ch.id}/models/refresh`, { cookie: root })).status).toBe(
      200,
    );
  });
  afterAll(async () => {
    await gw?.close();
    await up?.close();
  });

  it('carrying only pricing: the listing still gives created and the context length', async () => {
    expect(await v1('fake-long')).toMatchObject({
      created: 1721172741,
      context_length: 131072,
      pricing: PRICING,
    });
    expect((await gw.call('POST', '/v1/chat/completions', { token: key, body: chatBody })).status).toBe(200);
  });

  it('a field the entry gives wins over the listing', async () => {
    expect(await v1('fake-narrow')).toMatchObject({ created: 1721172741, context_length: 4096 });
  });

  it('pricing a model only an embeddings-only channel serves keeps it an embedding model', async () => {
    const r = await gw.call('GET', '/v1/models?output_modalities=embeddings', { token: key });
    const found = r.body.data.find((m: any) => m.id === 'jina-new');
    expect(found).toMatchObject({
      pricing: { prompt: '0.00000002' },
      architecture: { output_modalities: ['embeddings'] },
      supported_parameters: ['input_type', 'truncation', 'encoding_format', 'dimensions', 'output_dimension'],
    });
    // Routing serves it on the embeddings endpoint (as a text model with a config entry it had none).
    const routed = await gw.call('GET', '/v1/models?endpoint=embeddings', { token: key });
    expect(routed.body.data.map((m: any) => m.id)).toContain('jina-new');
  });
});
