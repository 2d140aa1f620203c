import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let up: FakeUpstream;
let gw: TestGateway;
let root: string;
let listing: Array<Record<string, unknown>>;

beforeAll(async () => {
  // A local vLLM-style server: lists its models with max_model_len, needs no key.
  listing = [
    { id: 'Qwen/Qwen3-8B', object: 'model', created: 1700000000, owned_by: 'vllm', max_model_len: 32768 },
    { id: 'gpt-4o-mini', object: 'model', created: 1700000000, owned_by: 'vllm' },
  ];
  up = await startFakeUpstream({ 'GET /v1/models': () => ({ json: { object: 'list', data: listing } }) });
  gw = await startTestGateway({
    channels: [{ name: 'local-vllm', kind: 'openai-compatible', base_url: `${up.url}/v1` }],
    models: [{ id: 'acme/configured', name: 'Acme Configured', pricing: { prompt: '0.000001' } }],
  });
  root = await gw.login();
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

async function newKey(body: Record<string, unknown> = {}): Promise<string> {
  const r = await gw.call('POST', '/api/key', { cookie: root, body: { name: 'k', ...body } });
  expect(r.status).toBe(200);
  return r.body.data.key;
}

describe('model discovery', () => {
  it("discovers an OpenAI-compatible channel's models at start", () => {
    expect(up.requests.some((r) => r.method === 'GET' && r.path === '/v1/models')).toBe(true);
    const qwen = gw.services.registry.targetsFor('Qwen/Qwen3-8B', { endpoint: 'chat' });
    expect(qwen).toHaveLength(1);
    expect(qwen[0]).toMatchObject({ channelName: 'local-vllm', upstreamModel: 'Qwen/Qwen3-8B', keys: [] });
    // unknown to the registry: defaults, with the listing's context window
    expect(qwen[0]!.model).toMatchObject({
      context_length: 32768,
      pricing: { prompt: '0', completion: '0' },
    });
    // a known name is served under its registry id, with the registry's figures
    const mini = gw.services.registry.targetsFor('openai/gpt-4o-mini', { endpoint: 'chat' });
    expect(mini[0]).toMatchObject({ upstreamModel: 'gpt-4o-mini' });
    expect(mini[0]!.model.context_length).toBe(128000);
  });

  it('refreshes on demand', async () => {
    listing.push({ id: 'llama3:8b', object: 'model', owned_by: 'ollama' });
    const ch = (await gw.call('GET', '/api/channel', { cookie: root })).body.data.find(
      (c: any) => c.name === 'local-vllm',
    );
    expect(gw.services.registry.targetsFor('llama3:8b', { endpoint: 'chat' })).toEqual([]);
    const r = await gw.call('POST', `/api/channel/${ch.id}/models/refresh`, { cookie: root });
    expect(r.status).toBe(200);
    expect(r.body.data).toContain('llama3:8b');
    const t = gw.services.registry.targetsFor('llama3:8b', { endpoint: 'chat' });
    expect(t).toHaveLength(1);
    expect(t[0]!.model.context_length).toBe(8192);
  });

  it('GET /api/channel names the models each channel serves, discovered ones included', async () => {
    // `models` is what the channel declares: empty for one that serves its GET /models listing,
    // which the console showed as serving nothing.
    const list = await gw.call('GET', '/api/channel', { cookie: root });
    const vllm = list.body.data.find((c: any) => c.name === 'local-vllm');
    expect(vllm.models).toEqual([]);
    expect(vllm.served_models).toEqual(
      expect.arrayContaining(['Qwen/Qwen3-8B', 'openai/gpt-4o-mini', 'llama3:8b']),
    );
    const one = await gw.call('GET', `/api/channel/${vllm.id}`, { cookie: root });
    expect(one.body.data.served_models).toEqual(vllm.served_models);

    // One whose listing failed serves nothing, and says so.
    const made = await gw.call('POST', '/api/channel', {
      cookie: root,
      body: { name: 'unlisted', kind: 'openai-compatible', base_url: `${up.url}/` },
    });
    const id = made.body.data.id;
    // Create and update answer with the models served, as GET does.
    expect(made.body.data.served_models).toEqual([]);
    const named = await gw.call('PUT', '/api/channel', { cookie: root, body: { id, models: ['m/one'] } });
    expect(named.body.data.served_models).toEqual(['m/one']);
    await gw.call('PUT', '/api/channel', { cookie: root, body: { id, models: [] } });
    expect((await gw.call('POST', `/api/channel/${id}/models/refresh`, { cookie: root })).status).toBe(502);
    expect((await gw.call('GET', `/api/channel/${id}`, { cookie: root })).body.data.served_models).toEqual(
      [],
    );
    await gw.call('DELETE', `/api/channel/${id}`, { cookie: root });
  });

  it('tests a channel with a tiny chat request', async () => {
    up.on('POST /v1/chat/completions', {
      json: {
        id: 'c1',
        object: 'chat.completion',
        created: 1,
        model: 'Qwen/Qwen3-8B',
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
      },
    });
    const ch = (await gw.call('GET', '/api/channel', { cookie: root })).body.data.find(
      (c: any) => c.name === 'local-vllm',
    );
    const r = await gw.call('POST', `/api/channel/${ch.id}/test`, {
      cookie: root,
      body: { model: 'Qwen/Qwen3-8B' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      success: true,
      data: { success: true, model: 'Qwen/Qwen3-8B', message: 'ok' },
    });
    expect(Number.isInteger(r.body.data.latency_ms)).toBe(true);
    const sent = up.requests.filter((q) => q.path === '/v1/chat/completions').at(-1)!;
    expect(sent.json.model).toBe('Qwen/Qwen3-8B');
    expect(sent.json.messages).toHaveLength(1);

    up.on('POST /v1/chat/completions', { status: 401, json: { error: { message: 'bad key' } } });
    // The body is optional: none at all tests the channel's first model.
    const failed = await gw.call('POST', `/api/channel/${ch.id}/test`, { cookie: root });
    expect(failed.status).toBe(200);
    expect((await gw.call('POST', '/api/channel/99999/test', { cookie: root })).status).toBe(404);
    expect(failed.body.success).toBe(false);
    expect(failed.body.data.success).toBe(false);
    expect(failed.body.data.message).toBeTruthy();
  });

  it("prices a discovered model per channel (settings.pricing), without listing the channel's models again", async () => {
    const ch = (await gw.call('GET', '/api/channel', { cookie: root })).body.data.find(
      (c: any) => c.name === 'local-vllm',
    );
    const listings = () => up.requests.filter((r) => r.method === 'GET' && r.path === '/v1/models').length;
    const before = listings();
    const priced = await gw.call('PUT', '/api/channel', {
      cookie: root,
      body: { id: ch.id, settings: { pricing: { 'Qwen/Qwen3-8B': { prompt: '0.0000001' } } } },
    });
    expect(priced.status).toBe(200);
    const [qwen] = gw.services.registry.targetsFor('Qwen/Qwen3-8B', { endpoint: 'chat' });
    expect(qwen!.pricing).toMatchObject({ prompt: '0.0000001', completion: '0' });
    expect(qwen!.model.pricing.prompt).toBe('0');
    // A listing would have started with the change (the PUT does not wait for it).
    await new Promise((r) => setTimeout(r, 200));
    expect(listings()).toBe(before);
    // Other settings still list them again (headers may change what the upstream answers).
    await gw.call('PUT', '/api/channel', {
      cookie: root,
      body: { id: ch.id, settings: { headers: { 'x-test': '1' } } },
    });
    for (let i = 0; i < 100 && listings() === before; i++) await new Promise((r) => setTimeout(r, 20));
    expect(listings()).toBe(before + 1);
    expect(gw.services.registry.targetsFor('Qwen/Qwen3-8B', { endpoint: 'chat' })[0]!.pricing.prompt).toBe(
      '0',
    );
    await gw.call('PUT', '/api/channel', { cookie: root, body: { id: ch.id, settings: {} } });
    // That lists them again too: waited for, so that it does not land in the next test.
    for (let i = 0; i < 100 && listings() === before + 1; i++) await new Promise((r) => setTimeout(r, 20));
    expect(listings()).toBe(before + 2);
  });

  it('a channel whose base_url lacks /v1 says which address answered 404, with a hint', async () => {
    const made = await gw.call('POST', '/api/channel', {
      cookie: root,
      body: { name: 'no-v1', kind: 'openai-compatible', base_url: `${up.url}/`, models: ['no-v1-model'] },
    });
    expect(made.status).toBe(200);
    const id = made.body.data.id;
    const hint = `${up.url} answered 404: no route (openai-compatible channels take a base_url ending in /v1: ${up.url}/v1)`;
    const tested = await gw.call('POST', `/api/channel/${id}/test`, { cookie: root });
    expect(tested.body.data).toMatchObject({ success: false, message: hint });
    expect(up.requests.at(-1)).toMatchObject({ method: 'POST', path: '/chat/completions' });

    // The same for a model refresh, which the gateway answers 502.
    await gw.call('PUT', '/api/channel', { cookie: root, body: { id, models: [] } });
    const refreshed = await gw.call('POST', `/api/channel/${id}/models/refresh`, { cookie: root });
    expect(refreshed.status).toBe(502);
    expect(refreshed.body.message).toBe(`upstream failed: ${hint}`);
    const nothing = await gw.call('POST', `/api/channel/${id}/test`, { cookie: root });
    expect(nothing.status).toBe(400);
    expect(nothing.body.message).toBe(
      `channel serves no models: its model list could not be read (fix base_url or keys, then refresh its models: Refresh in the console's Upstreams, or POST /api/channel/${id}/models/refresh), or list them in models`,
    );

    // Fixing the base_url lists the models again, without a refresh or a restart.
    const served = () =>
      gw.services.registry
        .targetsFor('Qwen/Qwen3-8B', { endpoint: 'chat' })
        .some((t) => t.channelName === 'no-v1');
    expect(served()).toBe(false);
    await gw.call('PUT', '/api/channel', { cookie: root, body: { id, base_url: `${up.url}/v1` } });
    for (let i = 0; i < 100 && !served(); i++) await new Promise((r) => setTimeout(r, 20));
    expect(served()).toBe(true);

    // A base_url with a version segment gets no hint; an unreachable one names its address.
    // (A query string is refused at save now: request paths were appended after it.)
    const moved = await gw.call('PUT', '/api/channel', {
      cookie: root,
      body: { id, base_url: 'http://127.0.0.1:1/v1', models: ['no-v1-model'] },
    });
    expect(moved.status).toBe(200);
    const dead = await gw.call('POST', `/api/channel/${id}/test`, { cookie: root });
    expect(dead.body.data.message).toMatch(/^http:\/\/127\.0\.0\.1:1\/v1: upstream connection failed/);
    await gw.call('DELETE', `/api/channel/${id}`, { cookie: root });
  });
});

describe('GET /v1/models', () => {
  it('lists only servable models through the openai SDK, with integer created', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: await newKey() });
    const ids: string[] = [];
    for await (const m of client.models.list()) {
      expect(Number.isInteger(m.created)).toBe(true);
      expect(m.object).toBe('model');
      ids.push(m.id);
    }
    expect(ids).toContain('Qwen/Qwen3-8B');
    expect(ids).toContain('openai/gpt-4o-mini');
    // in the registry, but no channel serves it
    expect(ids).not.toContain('anthropic/claude-sonnet-4');
    expect(ids).not.toContain('openai/gpt-4o');

    const raw = await gw.call('GET', '/v1/models', { token: await newKey() });
    const mini = raw.body.data.find((m: any) => m.id === 'openai/gpt-4o-mini');
    expect(mini).toMatchObject({
      owned_by: 'openai',
      context_length: 128000,
      pricing: { prompt: '0.00000015', completion: '0.0000006', input_cache_read: '0.000000075' },
      architecture: { input_modalities: ['text', 'image', 'file'], output_modalities: ['text'] },
      top_provider: { context_length: 128000, max_completion_tokens: 16384 },
    });
    expect(mini.supported_parameters).toContain('tools');
  });

  it("filters by the key's allow-list, plain names included", async () => {
    const key = await newKey({ allowed_models: ['gpt-4o-mini'] });
    const r = await gw.call('GET', '/v1/models', { token: key });
    expect(r.body.data.map((m: any) => m.id)).toEqual(['openai/gpt-4o-mini']);
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key });
    expect((await client.models.retrieve('openai/gpt-4o-mini')).id).toBe('openai/gpt-4o-mini');
    expect((await gw.call('GET', '/v1/models/Qwen/Qwen3-8B', { token: key })).status).toBe(404);
    // Chat by the model's full id passes the same allow-list entry.
    const chat = await gw.call('POST', '/v1/chat/completions', {
      token: key,
      body: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] },
    });
    expect(chat.status).not.toBe(403);
  });

  it('a wildcard entry admits the same models in /v1/models as in chat', async () => {
    const key = await newKey({ allowed_models: ['openai/gpt-4o*'] });
    const ids = (await gw.call('GET', '/v1/models', { token: key })).body.data.map((m: any) => m.id);
    expect(ids).toContain('openai/gpt-4o-mini');
    expect(ids.every((id: string) => id.startsWith('openai/gpt-4o'))).toBe(true);
    expect((await gw.call('GET', '/v1/models/openai/gpt-4o-mini', { token: key })).status).toBe(200);
    const other = await gw.call('POST', '/v1/chat/completions', {
      token: key,
      body: { model: 'Qwen/Qwen3-8B', messages: [{ role: 'user', content: 'x' }] },
    });
    expect(other.status).toBe(403);
    expect(other.body.error).toMatchObject({
      code: 403,
      message: 'this API key may not use model Qwen/Qwen3-8B',
      param: 'model',
    });
  });

  it('answers one model by id or plain name, 404 for unknown, 401 without a key', async () => {
    const key = await newKey();
    const one = await gw.call('GET', '/v1/models/gpt-4o-mini', { token: key });
    expect(one.status).toBe(200);
    expect(one.body.id).toBe('openai/gpt-4o-mini');
    const missing = await gw.call('GET', '/v1/models/openai/gpt-4o', { token: key });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe(404);
    expect((await gw.call('GET', '/v1/models')).status).toBe(401);
  });
  it("shows a discovered model's listed created when it is sane; registry entries keep theirs", async () => {
    const now = Math.floor(Date.now() / 1000);
    listing.push(
      { id: 'future-model', object: 'model', created: now + 10 * 86_400 },
      { id: 'millis-model', object: 'model', created: Date.now() },
      { id: 'negative-model', object: 'model', created: -5 },
      { id: 'fraction-model', object: 'model', created: 1700000000.5 },
      { id: 'string-model', object: 'model', created: '1700000000' },
    );
    const ch = (await gw.call('GET', '/api/channel', { cookie: root })).body.data.find(
      (c: any) => c.name === 'local-vllm',
    );
    expect((await gw.call('POST', `/api/channel/${ch.id}/models/refresh`, { cookie: root })).status).toBe(
      200,
    );
    const r = await gw.call('GET', '/v1/models', { token: await newKey() });
    const created = Object.fromEntries(r.body.data.map((m: any) => [m.id, m.created]));
    expect(created['Qwen/Qwen3-8B']).toBe(1700000000);
    // the listing says 1700000000 for gpt-4o-mini too; the default entry's date wins
    expect(created['openai/gpt-4o-mini']).toBe(1721260800);
    for (const id of ['future-model', 'millis-model', 'negative-model', 'fraction-model', 'string-model'])
      expect(created[id]).toBe(0);
  });
});

describe('/api/model', () => {
  it('admin overrides win, and deleting the override reverts to the default', async () => {
    const put = await gw.call('PUT', '/api/model', {
      cookie: root,
      body: { id: 'openai/gpt-4o-mini', context_length: 64000, pricing: { prompt: 0.000001 } },
    });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ context_length: 64000, overridden: true, servable: true });
    expect(put.body.data.pricing).toMatchObject({ prompt: '0.000001', completion: '0.0000006' });
    expect(gw.services.registry.resolve('gpt-4o-mini')!.context_length).toBe(64000);

    const del = await gw.call('DELETE', '/api/model/openai/gpt-4o-mini', { cookie: root });
    expect(del.status).toBe(200);
    const back = await gw.call('GET', '/api/model/openai/gpt-4o-mini', { cookie: root });
    expect(back.body.data).toMatchObject({ context_length: 128000, overridden: false, source: 'default' });
    expect(back.body.data.pricing.prompt).toBe('0.00000015');
    expect((await gw.call('DELETE', '/api/model/openai/gpt-4o-mini', { cookie: root })).status).toBe(404);
  });

  it('POST of a model the registry describes is a 409 naming PUT; a listed model is priced with POST', async () => {
    const get = async (id: string) => (await gw.call('GET', `/api/model/${id}`, { cookie: root })).body.data;
    const before = await get('openai/gpt-4o-mini');
    expect(before).toMatchObject({ source: 'default', overridden: false, base_source: 'default' });
    // What the console's create form sent for a display name alone: every other field empty,
    // as 0 prices, text only and no parameters. It priced a built-in model at 0.
    const zeroing = {
      name: 'Mini',
      pricing: { prompt: '0', completion: '0', request: '0', image: '0' },
      input_modalities: ['text'],
      output_modalities: ['text'],
      supported_parameters: [],
    };
    for (const [id, from] of [
      ['openai/gpt-4o-mini', 'built in'],
      ['acme/configured', 'from the config file'],
    ]) {
      const post = await gw.call('POST', '/api/model', { cookie: root, body: { id, ...zeroing } });
      expect(post.status, id).toBe(409);
      expect(post.body).toEqual({
        success: false,
        message: `model ${id} is already in the registry (${from}): change its fields with PUT /api/model, which keeps the ones not sent`,
      });
    }
    // Its short name: an entry of that id would take the name's requests from the model.
    const short = await gw.call('POST', '/api/model', {
      cookie: root,
      body: { id: 'gpt-4o-mini', ...zeroing },
    });
    expect(short.status).toBe(409);
    expect(short.body.message).toBe(
      'model gpt-4o-mini names openai/gpt-4o-mini (its alias, upstream name or short name): change that model with PUT /api/model, or choose an id no model answers to',
    );
    expect(gw.services.registry.resolve('gpt-4o-mini')!.id).toBe('openai/gpt-4o-mini');
    expect(await get('openai/gpt-4o-mini')).toEqual(before);
    expect(await get('acme/configured')).toMatchObject({
      source: 'config',
      overridden: false,
      base_source: 'config',
      pricing: { prompt: '0.000001' },
    });

    // A model only a listing describes is priced with POST (docs/configuration.md): an entry of
    // the fields sent, over the listed window; deleting it leaves the listed model.
    const qwen = await gw.call('POST', '/api/model', {
      cookie: root,
      body: { id: 'Qwen/Qwen3-8B', pricing: { prompt: '0.000002' } },
    });
    expect(qwen.status).toBe(200);
    expect(qwen.body.data).toMatchObject({
      source: 'admin',
      overridden: true,
      base_source: 'discovered',
      context_length: 32768,
      pricing: { prompt: '0.000002', completion: '0' },
    });
    expect((await gw.call('DELETE', '/api/model/Qwen/Qwen3-8B', { cookie: root })).status).toBe(200);
    expect(await get('Qwen/Qwen3-8B')).toMatchObject({
      source: 'discovered',
      overridden: false,
      base_source: 'discovered',
      pricing: { prompt: '0' },
    });

    // An entry only an admin describes has nothing below it: deleting it removes the model.
    const own = await gw.call('POST', '/api/model', { cookie: root, body: { id: 'acme/own', name: 'Own' } });
    expect(own.body.data).toMatchObject({ source: 'admin', overridden: true, base_source: null });
    const again = await gw.call('POST', '/api/model', { cookie: root, body: { id: 'acme/own' } });
    expect(again.status).toBe(409);
    expect(again.body.message).toBe('model acme/own already exists: change it with PUT /api/model');
    const edited = await gw.call('PUT', '/api/model', {
      cookie: root,
      body: { id: 'acme/configured', name: 'C' },
    });
    expect(edited.body.data).toMatchObject({ source: 'admin', overridden: true, base_source: 'config' });
    for (const id of ['acme/own', 'acme/configured'])
      expect((await gw.call('DELETE', `/api/model/${id}`, { cookie: root })).status).toBe(200);
    expect((await gw.call('GET', '/api/model/acme/own', { cookie: root })).status).toBe(404);
  });

  it('shows and takes the one-hour cache-write price (input_cache_write_1h), also in GET /v1/models', async () => {
    const claude = await gw.call('GET', '/api/model/anthropic/claude-sonnet-4', { cookie: root });
    expect(claude.body.data.pricing).toMatchObject({
      prompt: '0.000003',
      input_cache_write: '0.00000375',
      input_cache_write_1h: '0.000006',
    });
    const put = await gw.call('PUT', '/api/model', {
      cookie: root,
      body: { id: 'openai/gpt-4o-mini', pricing: { input_cache_write_1h: 3e-7 } },
    });
    expect(put.status).toBe(200);
    expect(put.body.data.pricing.input_cache_write_1h).toBe('0.0000003');
    const listed = await gw.call('GET', '/v1/models/openai/gpt-4o-mini', { token: await newKey() });
    expect(listed.body.pricing).toMatchObject({ prompt: '0.00000015', input_cache_write_1h: '0.0000003' });
    expect((await gw.call('DELETE', '/api/model/openai/gpt-4o-mini', { cookie: root })).status).toBe(200);
  });

  it('null unsets upstream_model and context_length, as cleared console fields send them', async () => {
    const edit = (body: Record<string, unknown>) =>
      gw.call('PUT', '/api/model', { cookie: root, body: { id: 'openai/gpt-4o-mini', ...body } });
    const set = await edit({ upstream_model: 'gpt-4o-mini-2024-07-18', context_length: 32000 });
    expect(set.body.data).toMatchObject({ upstream_model: 'gpt-4o-mini-2024-07-18', context_length: 32000 });
    // Unset: the default description shows through again; other admin fields stay.
    const unset = await edit({ upstream_model: null, context_length: null, name: 'Mini' });
    expect(unset.status).toBe(200);
    expect(unset.body.data).toMatchObject({
      upstream_model: 'gpt-4o-mini',
      context_length: 128000,
      name: 'Mini',
      overridden: true,
    });
    // A later change without the fields does not bring the old values back.
    const later = await edit({ name: 'Mini 2' });
    expect(later.body.data).toMatchObject({ upstream_model: 'gpt-4o-mini', context_length: 128000 });
    expect((await gw.call('DELETE', '/api/model/openai/gpt-4o-mini', { cookie: root })).status).toBe(200);

    // An entry only an admin described: the id's own name and the fallback context length.
    await gw.call('POST', '/api/model', {
      cookie: root,
      body: {
        id: 'acme/unset',
        upstream_model: 'acme-unset-v2',
        context_length: 4096,
        max_completion_tokens: 512,
      },
    });
    const own = await gw.call('PUT', '/api/model', {
      cookie: root,
      body: { id: 'acme/unset', upstream_model: null, context_length: null, max_completion_tokens: null },
    });
    expect(own.status).toBe(200);
    expect(own.body.data).toMatchObject({
      upstream_model: 'unset',
      context_length: 8192,
      max_completion_tokens: null,
    });
    const price = await gw.call('PUT', '/api/model', {
      cookie: root,
      body: { id: 'acme/unset', pricing: { prompt: 'abc' } },
    });
    expect(price.status).toBe(400);
    expect(price.body.message).toBe('pricing.prompt: must be a numeric string, a number >= 0, or null');
  });

  it('creates new entries, names the bad field, and pages the list', async () => {
    const created = await gw.call('POST', '/api/model', {
      cookie: root,
      body: {
        id: 'acme/tiny',
        name: 'Acme Tiny',
        context_length: 4096,
        pricing: { prompt: '0.000002', completion: 0 },
      },
    });
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({ id: 'acme/tiny', upstream_model: 'tiny', servable: false });
    expect((await gw.call('POST', '/api/model', { cookie: root, body: { id: 'acme/tiny' } })).status).toBe(
      409,
    );
    const bad = await gw.call('POST', '/api/model', {
      cookie: root,
      body: { id: 'acme/x', context_length: 'big' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/context_length/);
    const unknown = await gw.call('POST', '/api/model', { cookie: root, body: { id: 'acme/y', colour: 1 } });
    expect(unknown.status).toBe(400);
    // Price keys outside the pattern, and values of the wrong type under any key (null is a
    // price not set: test/registry/model-admin-fields.test.ts).
    for (const pricing of [
      { Prompt: { x: 1 } },
      { Prompt: 1 },
      { Prompt: null },
      { '': 1 },
      { ['p'.repeat(65)]: 1 },
      { prompt: true },
      { prompt: [] },
    ]) {
      const r = await gw.call('POST', '/api/model', { cookie: root, body: { id: 'acme/z', pricing } });
      expect(r.status, JSON.stringify(pricing)).toBe(400);
      expect(r.body.message).toMatch(/^pricing/);
      expect(r.body.message).not.toMatch(/trim|undefined|null \(reading/);
    }
    const page = await gw.call('GET', '/api/model?p=0&page_size=5', { cookie: root });
    expect(page.body.data).toHaveLength(5);
    expect(page.body.total).toBeGreaterThan(30);
    const servable = await gw.call('GET', '/api/model?servable=true&page_size=100', { cookie: root });
    expect(servable.body.data.every((m: any) => m.servable)).toBe(true);
  });
});

describe('gateway.discover_models: false', () => {
  it('a channel created or changed through the admin API is not listed until an explicit refresh', async () => {
    const quiet = await startFakeUpstream({
      'GET /v1/models': { json: { object: 'list', data: [{ id: 'quiet-model', object: 'model' }] } },
    });
    const off = await startTestGateway({ gateway: { discover_models: false } });
    try {
      const cookie = await off.login();
      const listed = () => quiet.requests.filter((r) => r.method === 'GET' && r.path === '/v1/models').length;
      const made = await off.call('POST', '/api/channel', {
        cookie,
        body: { name: 'quiet', kind: 'openai-compatible', base_url: `${quiet.url}/v1/` },
      });
      expect(made.status).toBe(200);
      const id = made.body.data.id;
      const changed = await off.call('PUT', '/api/channel', {
        cookie,
        body: { id, base_url: `${quiet.url}/v1` },
      });
      expect(changed.status).toBe(200);
      // Discovery, were it started, reaches the loopback upstream within milliseconds.
      await new Promise((r) => setTimeout(r, 300));
      expect(listed()).toBe(0);
      expect(off.services.registry.targetsFor('quiet-model', { endpoint: 'chat' })).toEqual([]);

      // The explicit refresh still lists them.
      const refreshed = await off.call('POST', `/api/channel/${id}/models/refresh`, { cookie });
      expect(refreshed.status).toBe(200);
      expect(refreshed.body.data).toEqual(['quiet-model']);
      expect(listed()).toBe(1);
    } finally {
      await off.close();
      await quiet.close();
    }
  });
});
