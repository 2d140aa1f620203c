import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, fixtureJson } from '../chat/chat-helpers.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * What an upstream's model listing says beyond the context window and `created`: the output limit,
 * modalities, parameters, prices (OpenRouter's list format) and display names, each provider's
 * listing replayed as it writes it. The facts sit in the listing layer (default file < listings <
 * config < admin), so an admin entry still wins field by field. Before, a discovered OpenRouter
 * model was free, unbounded and text-only whatever its listing said.
 */

const refresh = async (gw: TestGateway, cookie: string, name: string) => {
  const id = (await gw.call('GET', '/api/channel', { cookie })).body.data.find(
    (c: any) => c.name === name,
  ).id;
  const r = await gw.call('POST', `/api/channel/${id}/models/refresh`, { cookie });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return id as number;
};
const newKey = async (gw: TestGateway, cookie: string) =>
  (await gw.call('POST', '/api/key', { cookie, body: { name: 'k' } })).body.data.key as string;
const ask = (model: string, o: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: 'user', content: 'Count to 5' }],
  ...o,
});

/** OpenRouter's `GET /api/v1/models`, as its fixture has it, with `change` applied to one model. */
const openRouterListing = (change: Record<string, Record<string, unknown>> = {}) => {
  const list = fixtureJson('openrouter/models.json');
  for (const m of list.data) Object.assign(m, change[m.id] ?? {});
  return list;
};

describe('an OpenRouter channel’s listing', () => {
  let up: FakeUpstream;
  let gw: TestGateway;
  let root: string;
  let key: string;
  let listing = openRouterListing();
  const v1 = async (id: string) => gw.call('GET', `/v1/models/${id}`, { token: key });

  beforeAll(async () => {
    up = await startFakeUpstream({
      'GET /api/v1/models': () => ({ json: listing }),
      'POST /api/v1/chat/completions': {
        body: fixture('openai/openrouter-stop-sequence.json'),
        headers: { 'content-type': 'application/json' },
      },
    });
    gw = await startTestGateway({
      channels: [
        { name: 'openrouter', kind: 'openai-compatible', base_url: `${up.url}/api/v1`, keys: ['sk-or-x'] },
      ],
    });
    root = await gw.login();
    key = await newKey(gw, root);
    await refresh(gw, root, 'openrouter');
  });
  afterAll(async () => {
    await gw?.close();
    await up?.close();
  });

  it('describes a model the registry does not know: name, output limit, modalities, parameters, prices', async () => {
    const r = await v1('mistralai/mistral-medium-3.1');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      id: 'mistralai/mistral-medium-3.1',
      name: 'Mistral: Mistral Medium 3.1',
      created: 1755095639,
      context_length: 131072,
      architecture: {
        modality: 'text+image->text',
        input_modalities: ['text', 'image'],
        output_modalities: ['text'],
      },
      pricing: { prompt: '0.0000004', completion: '0.000002', request: '0', image: '0', web_search: '0' },
      top_provider: { context_length: 131072, max_completion_tokens: 16384 },
    });
    expect(r.body.supported_parameters).toEqual(
      fixtureJson('openrouter/models.json').data[0].supported_parameters,
    );
    // The list's filters read the same facts.
    const images = await gw.call('GET', '/v1/models?input_modalities=image', { token: key });
    expect(images.body.data.map((m: any) => m.id)).toContain('mistralai/mistral-medium-3.1');
    const tools = await gw.call('GET', '/v1/models?supported_parameters=tools', { token: key });
    expect(tools.body.data.map((m: any) => m.id)).toContain('mistralai/mistral-medium-3.1');
  });

  it('a max_tokens above the listed output limit is sent as the limit', async () => {
    const r = await gw.call('POST', '/v1/chat/completions', {
      token: key,
      body: ask('mistralai/mistral-medium-3.1', { max_tokens: 100000 }),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(up.requests.at(-1)!.json).toMatchObject({
      model: 'mistralai/mistral-medium-3.1',
      max_tokens: 16384,
    });
  });

  it('bills at the listed price (21 prompt and 14 completion tokens)', async () => {
    const r = await gw.call('POST', '/v1/chat/completions', {
      token: key,
      body: ask('mistralai/mistral-medium-3.1', { usage: { include: true } }),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.usage).toMatchObject({ prompt_tokens: 21, completion_tokens: 14 });
    // 21 x 0.0000004 + 14 x 0.000002 = 0.0000364 USD, charged in whole micro-USD.
    expect(r.body.usage.cost).toBe(0.000036);
  });

  it('a negative listed price (OpenRouter’s "-1": decided per request) is no price', async () => {
    const r = await v1('openrouter/auto');
    expect(r.body).toMatchObject({
      name: 'Auto Router',
      context_length: 2000000,
      pricing: { prompt: '0', completion: '0' },
      top_provider: { max_completion_tokens: null },
      architecture: { output_modalities: ['text', 'image'] },
    });
    // An empty parameter list says nothing (the gateway reads an empty list as "not known").
    expect(r.body.supported_parameters).toEqual([]);
  });

  it('a default-file model keeps the file’s name, date and prices, and takes the listed limits', async () => {
    listing = openRouterListing({
      'anthropic/claude-sonnet-4.5': { name: 'Anthropic: Claude Sonnet 4.5 (1M)' },
    });
    await refresh(gw, root, 'openrouter');
    const r = await v1('anthropic/claude-sonnet-4.5');
    expect(r.body).toMatchObject({
      name: 'Anthropic: Claude Sonnet 4.5',
      created: 1759104000,
      context_length: 1000000,
      top_provider: { max_completion_tokens: 64000 },
      // The file's, not the listing's 0.0048 per image.
      pricing: { prompt: '0.000003', completion: '0.000015', image: '0', input_cache_write_1h: '0.000006' },
    });
    listing = openRouterListing();
    await refresh(gw, root, 'openrouter');
  });

  it('admin fields win over the listing one by one; removing them brings the listing back', async () => {
    const put = await gw.call('PUT', '/api/model', {
      cookie: root,
      body: {
        id: 'mistralai/mistral-medium-3.1',
        name: 'Mistral Medium (ours)',
        max_completion_tokens: null,
        pricing: { prompt: '0.000001' },
      },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect((await v1('mistralai/mistral-medium-3.1')).body).toMatchObject({
      name: 'Mistral Medium (ours)',
      pricing: { prompt: '0.000001', completion: '0.000002' },
      top_provider: { context_length: 131072, max_completion_tokens: null },
      architecture: { input_modalities: ['text', 'image'] },
    });
    // No limit now: the max_tokens goes as asked.
    const chat = await gw.call('POST', '/v1/chat/completions', {
      token: key,
      body: ask('mistralai/mistral-medium-3.1', { max_tokens: 100000 }),
    });
    expect(chat.status).toBe(200);
    expect(up.requests.at(-1)!.json.max_tokens).toBe(100000);

    await gw.call('DELETE', '/api/model/mistralai/mistral-medium-3.1', { cookie: root });
    expect((await v1('mistralai/mistral-medium-3.1')).body).toMatchObject({
      name: 'Mistral: Mistral Medium 3.1',
      pricing: { prompt: '0.0000004' },
      top_provider: { max_completion_tokens: 16384 },
    });
  });

  it('two channels listing one model: largest limit, every modality, each price at its dearest, either way round', async () => {
    const mine = {
      id: 'mistralai/mistral-medium-3.1',
      name: 'Mistral Medium 3.1',
      created: 1755100000,
      context_length: 65536,
      architecture: { modality: 'text->text', input_modalities: ['text'], output_modalities: ['text'] },
      pricing: { prompt: '0.0000005', completion: '0.0000015' },
      top_provider: { context_length: 65536, max_completion_tokens: 32768, is_moderated: false },
      supported_parameters: ['max_tokens', 'temperature', 'logit_bias'],
    };
    let otherListing: unknown = { data: [mine] };
    const other = await startFakeUpstream({ 'GET /v1/models': () => ({ json: otherListing }) });
    let otherId: number | undefined;
    const merged = {
      name: 'Mistral Medium 3.1',
      created: 1755095639,
      context_length: 131072,
      architecture: { input_modalities: ['text', 'image'] },
      pricing: { prompt: '0.0000005', completion: '0.000002' },
      top_provider: { max_completion_tokens: 32768 },
    };
    try {
      const made = await gw.call('POST', '/api/channel', {
        cookie: root,
        body: { name: 'self-hosted', kind: 'openai-compatible', base_url: `${other.url}/v1` },
      });
      expect(made.status).toBe(200);
      otherId = await refresh(gw, root, 'self-hosted');
      const m = (await v1('mistralai/mistral-medium-3.1')).body;
      expect(m).toMatchObject(merged);
      expect(new Set(m.supported_parameters)).toEqual(
        new Set([...fixtureJson('openrouter/models.json').data[0].supported_parameters, 'logit_bias']),
      );
      // The other way round: the same answer.
      const theirs = listing.data.find((x: any) => x.id === mine.id);
      otherListing = { data: [theirs] };
      listing = openRouterListing({ [mine.id]: mine });
      await refresh(gw, root, 'self-hosted');
      await refresh(gw, root, 'openrouter');
      expect((await v1('mistralai/mistral-medium-3.1')).body).toMatchObject(merged);
    } finally {
      if (otherId !== undefined) await gw.call('DELETE', `/api/channel/${otherId}`, { cookie: root });
      await other.close();
      listing = openRouterListing();
      await refresh(gw, root, 'openrouter');
    }
    expect((await v1('mistralai/mistral-medium-3.1')).body).toMatchObject({
      name: 'Mistral: Mistral Medium 3.1',
      pricing: { prompt: '0.0000004', completion: '0.000002' },
      top_provider: { max_completion_tokens: 16384 },
      architecture: { input_modalities: ['text', 'image'] },
    });
  });
});

describe('a Gemini channel’s listing', () => {
  let up: FakeUpstream;
  let gw: TestGateway;
  let key: string;

  beforeAll(async () => {
    up = await startFakeUpstream({
      'GET /v1beta/models': {
        body: fixture('gemini/models-limits.json'),
        headers: { 'content-type': 'application/json' },
      },
      'POST /v1beta/models/gemma-3-27b-it:generateContent': {
        body: fixture('gemini/chat.json'),
        headers: { 'content-type': 'application/json' },
      },
    });
    gw = await startTestGateway({
      channels: [{ name: 'gemini', kind: 'gemini', base_url: up.url, keys: ['g'] }],
    });
    const root = await gw.login();
    key = await newKey(gw, root);
    await refresh(gw, root, 'gemini');
  });
  afterAll(async () => {
    await gw?.close();
    await up?.close();
  });

  it('gives a model its displayName and outputTokenLimit, and sends at most that', async () => {
    expect((await gw.call('GET', '/v1/models/gemma-3-27b-it', { token: key })).body).toMatchObject({
      name: 'Gemma 3 27B',
      context_length: 131072,
      top_provider: { max_completion_tokens: 8192 },
    });
    const r = await gw.call('POST', '/v1/chat/completions', {
      token: key,
      body: ask('gemma-3-27b-it', { max_tokens: 100000 }),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(up.requests.at(-1)!.json.generationConfig).toMatchObject({ maxOutputTokens: 8192 });
  });

  it('a default-file model keeps the file’s name', async () => {
    expect((await gw.call('GET', '/v1/models/google/gemini-2.5-flash', { token: key })).body).toMatchObject({
      name: 'Google: Gemini 2.5 Flash',
      top_provider: { max_completion_tokens: 65536 },
    });
  });

  it('an embedContent-only model is not served (a Gemini channel has no embeddings)', async () => {
    expect((await gw.call('GET', '/v1/models/gemini-embedding-001', { token: key })).status).toBe(404);
  });
});

describe('an Anthropic channel’s listing', () => {
  let up: FakeUpstream;
  let gw: TestGateway;
  let key: string;

  beforeAll(async () => {
    up = await startFakeUpstream({
      'GET /v1/models': {
        body: fixture('anthropic/models-limits.json'),
        headers: { 'content-type': 'application/json' },
      },
      'POST /v1/messages': {
        body: fixture('anthropic/chat.json'),
        headers: { 'content-type': 'application/json' },
      },
    });
    gw = await startTestGateway({
      channels: [{ name: 'claude', kind: 'anthropic', base_url: up.url, keys: ['a'] }],
    });
    const root = await gw.login();
    key = await newKey(gw, root);
    await refresh(gw, root, 'claude');
  });
  afterAll(async () => {
    await gw?.close();
    await up?.close();
  });

  it('reads display_name, created_at, max_input_tokens and max_tokens', async () => {
    expect((await gw.call('GET', '/v1/models/claude-opus-4-6', { token: key })).body).toMatchObject({
      name: 'Claude Opus 4.6',
      created: Date.parse('2026-02-05T00:00:00Z') / 1000,
      context_length: 200000,
      top_provider: { max_completion_tokens: 128000 },
    });
    const r = await gw.call('POST', '/v1/chat/completions', {
      token: key,
      body: ask('claude-opus-4-6', { max_tokens: 150000 }),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(up.requests.at(-1)!.json).toMatchObject({ model: 'claude-opus-4-6', max_tokens: 128000 });
  });

  it('a default-file model keeps the file’s name and date', async () => {
    expect(
      (await gw.call('GET', '/v1/models/anthropic/claude-sonnet-4.5', { token: key })).body,
    ).toMatchObject({
      name: 'Anthropic: Claude Sonnet 4.5',
      created: 1759104000,
      top_provider: { max_completion_tokens: 64000 },
    });
  });
});
