import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type ChatGateway,
  model,
  oaChunk,
  oaCompletion,
  rawStream,
  requestLogs,
  sse,
  startChatGateway,
  userMsg,
} from '../chat/chat-helpers.js';
import { type FakeAnswer, type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';

/**
 * OpenRouter's model variant suffixes (`acme/m:nitro`) and `provider.sort: "exacto"` over HTTP.
 * Two upstreams serve `acme/m` and `acme/e`: a (priority 10, so first by default) and b. Their
 * health figures are set the way the sort tests of plan.test.ts set them, far enough apart that
 * the requests the tests make (each one a success measured) cannot reorder them. `acme/x`
 * (served by b) and a model registered as `acme/x:free` (served by a) show that an id that
 * exists as written wins over its suffix.
 */
const ROUTE = 'POST /v1/chat/completions';
const answer =
  (who: string) =>
  (req: { json: any }): FakeAnswer =>
    req.json?.stream
      ? { sse: sse([oaChunk({ role: 'assistant', content: `from ${who}` }), oaChunk({}, 'stop')]) }
      : { json: oaCompletion(`from ${who}`) };

let ups: Record<'a' | 'b', FakeUpstream>;
let c: ChatGateway;
let ids: Record<string, number>;

beforeAll(async () => {
  ups = { a: await startFakeUpstream(), b: await startFakeUpstream() };
  const channel = (name: 'a' | 'b', models: string[], priority: number) => ({
    name,
    kind: 'openai-compatible',
    base_url: `${ups[name].url}/v1`,
    keys: [`key-${name}`],
    models,
    priority,
  });
  c = await startChatGateway({
    channels: [
      channel('a', ['acme/m', 'acme/e', 'acme/x:free'], 10),
      channel('b', ['acme/m', 'acme/e', 'acme/x', 'acme/zero'], 0),
    ],
    models: [
      model('acme/m'),
      model('acme/e'),
      model('acme/x'),
      model('acme/x:free'),
      model('acme/zero', { pricing: { prompt: '0', completion: '0' } }),
    ],
    gateway: { circuit_failures: 1000 },
  });
  const list = await c.gw.call('GET', '/api/channel?page_size=100', { cookie: c.cookie });
  ids = Object.fromEntries(list.body.data.map((ch: { name: string; id: number }) => [ch.name, ch.id]));
});
afterAll(async () => {
  await c?.gw.close();
  for (const u of Object.values(ups ?? {})) await u.close();
});
beforeEach(() => {
  for (const [name, u] of Object.entries(ups)) {
    u.on(ROUTE, answer(name));
    u.requests.length = 0;
  }
});

const chat = (body: Record<string, unknown>, key = c.key) =>
  c.gw.call('POST', '/v1/chat/completions', { token: key, body: { messages: userMsg('hi'), ...body } });

/**
 * b measured faster (more tokens/s) but slower to answer (higher latency) than a on `acme/m`,
 * by margins no loopback answer measured later can close.
 */
function measure() {
  const health = c.gw.services.chat.health;
  health.success(`${ids.a}:acme/m`, { latencyMs: 1, completionTokens: 1, durationMs: 1000 });
  health.success(`${ids.b}:acme/m`, { latencyMs: 1e6, completionTokens: 1e6, durationMs: 1 });
}

describe('model variant suffixes', () => {
  it(':nitro sorts by throughput: the faster upstream serves, and the response names the base model', async () => {
    measure();
    expect((await chat({ model: 'acme/m' })).body.provider).toBe('a');
    const r = await chat({ model: 'acme/m:nitro' });
    expect(r.status).toBe(200);
    expect(r.body.provider).toBe('b');
    expect(r.body.model).toBe('acme/m');
    expect(r.headers.get('x-modelgate-attempts')).toBe('b/acme/m=ok');
    // An explicit provider.sort wins over the suffix.
    expect((await chat({ model: 'acme/m:nitro', provider: { sort: 'latency' } })).body.provider).toBe('a');
    // So does provider.order.
    expect((await chat({ model: 'acme/m:nitro', provider: { order: ['a'] } })).body.provider).toBe('a');
  });

  it('a stream of a variant names the base model in every chunk, and the log records the base model', async () => {
    measure();
    const s = await rawStream(c, { model: 'acme/m:nitro', messages: userMsg('hi') });
    expect(s.res.status).toBe(200);
    expect(s.chunks.length).toBeGreaterThan(0);
    expect(new Set(s.chunks.map((ch) => ch.model))).toEqual(new Set(['acme/m']));
    expect(s.chunks[0].provider).toBe('b');
    const [log] = await requestLogs(c);
    expect(log).toMatchObject({ model: 'acme/m', provider: 'b', status: 200 });
  });

  it('a suffix applies to its own entry of models', async () => {
    measure();
    // A 400 skips the rest of a model's upstreams: the trail shows which upstream each entry's
    // order put first.
    const bad = { status: 400, json: { error: { message: 'bad', type: 'invalid_request_error' } } };
    ups.a.on(ROUTE, bad);
    ups.b.on(ROUTE, bad);
    const trail = async (body: Record<string, unknown>) =>
      (await chat(body)).headers.get('x-modelgate-attempts')?.replace(/=[^,]*/g, '');
    expect(await trail({ model: 'acme/x', models: ['acme/m:nitro'] })).toBe('b/acme/x, b/acme/m');
    expect(await trail({ model: 'acme/x', models: ['acme/m'] })).toBe('b/acme/x, a/acme/m');
    // The primary's suffix orders the primary only.
    expect(await trail({ model: 'acme/m:nitro', models: ['acme/e'] })).toBe('b/acme/m, a/acme/e');
    // A variant of a model already listed is not tried again.
    expect(await trail({ model: 'acme/m', models: ['acme/m:nitro', 'acme/e'] })).toBe('a/acme/m, a/acme/e');
  });

  it(':thinking turns reasoning on in what the upstream receives, unless the request decides', async () => {
    const r = await chat({ model: 'acme/m:thinking' });
    expect(r.status).toBe(200);
    expect(r.body.model).toBe('acme/m');
    expect(ups.a.requests.at(-1)!.json.reasoning_effort).toBe('medium');
    await chat({ model: 'acme/m' });
    expect(ups.a.requests.at(-1)!.json.reasoning_effort).toBeUndefined();
    await chat({ model: 'acme/m:thinking', reasoning: { effort: 'low' } });
    expect(ups.a.requests.at(-1)!.json.reasoning_effort).toBe('low');
  });

  it(':online is a 400 naming the suffix, as model or in models', async () => {
    const r = await chat({ model: 'acme/m:online' });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain(':online');
    expect(r.body.error.param).toBe('model');
    const fb = await chat({ model: 'acme/m', models: ['acme/x:online'] });
    expect(fb.status).toBe(400);
    expect(fb.body.error.param).toBe('models');
    expect(ups.a.requests.length + ups.b.requests.length).toBe(0);
  });

  it(':free is served only for a model that costs nothing; :extended serves the base model', async () => {
    const paid = await chat({ model: 'acme/m:free' });
    expect(paid.status).toBe(400);
    expect(paid.body.error.message).toContain('free');
    const zero = await chat({ model: 'acme/zero:free' });
    expect(zero.status).toBe(200);
    expect(zero.body.model).toBe('acme/zero');
    const ext = await chat({ model: 'acme/m:extended' });
    expect(ext.status).toBe(200);
    expect(ext.body.model).toBe('acme/m');
  });

  it('an id that exists as written wins over its suffix', async () => {
    const r = await chat({ model: 'acme/x:free' });
    expect(r.status).toBe(200);
    expect(r.body.model).toBe('acme/x:free');
    expect(r.body.provider).toBe('a');
    // A suffix the gateway does not know is part of the name: an unknown model.
    expect((await chat({ model: 'acme/m:turbo' })).status).toBe(404);
    // An unknown base is an unknown model, whatever the suffix.
    expect((await chat({ model: 'acme/nope:nitro' })).status).toBe(404);
  });

  it("the key's allow-list is read for the base model", async () => {
    const res = await c.gw.call('POST', '/api/key', {
      cookie: c.cookie,
      body: { name: 'only-m', allowed_models: ['acme/m'] },
    });
    const key = res.body.data.key as string;
    const r = await chat({ model: 'acme/m:nitro' }, key);
    expect(r.status).toBe(200);
    expect(r.body.model).toBe('acme/m');
    expect((await chat({ model: 'acme/x:nitro' }, key)).status).toBe(403);
    // A variant fallback of a model the key may not use is dropped, as any such fallback.
    ups.a.on(ROUTE, { status: 500, json: { error: { message: 'down' } } });
    ups.b.on(ROUTE, { status: 500, json: { error: { message: 'down' } } });
    const fb = await chat({ model: 'acme/m', models: ['acme/x:nitro'] }, key);
    expect(fb.headers.get('x-modelgate-attempts')).not.toContain('acme/x');
  });
});

describe('provider.sort exacto', () => {
  it('orders upstreams by their success record, as a string or {by}', async () => {
    const health = c.gw.services.chat.health;
    // On acme/e (no other test's traffic): a has 1 success and 3 failures that count, b 10
    // successes; b is the slower one, so exacto is not throughput or latency in disguise.
    health.success(`${ids.a}:acme/e`, { latencyMs: 1, completionTokens: 1000, durationMs: 1 });
    for (let i = 0; i < 3; i++) health.failure(`${ids.a}:acme/e`, 'server_error');
    for (let i = 0; i < 10; i++)
      health.success(`${ids.b}:acme/e`, { latencyMs: 1e6, completionTokens: 1, durationMs: 1e6 });
    expect((await chat({ model: 'acme/e' })).body.provider).toBe('a');
    expect((await chat({ model: 'acme/e', provider: { sort: 'throughput' } })).body.provider).toBe('a');
    expect((await chat({ model: 'acme/e', provider: { sort: 'exacto' } })).body.provider).toBe('b');
    const by = await chat({ model: 'acme/e', provider: { sort: { by: 'exacto', partition: 'model' } } });
    expect(by.status).toBe(200);
    expect(by.body.provider).toBe('b');
    expect((await chat({ model: 'acme/e:exacto' })).body.provider).toBe('b');
  });

  it('takes the sort object with by and partition each left out or null, as @openrouter/sdk types them', async () => {
    // No `by`: no sort, so the default order (a, by priority) serves.
    for (const sort of [{ partition: 'none' }, { by: null }, { by: null, partition: null }, {}]) {
      const r = await chat({ model: 'acme/m', provider: { sort } });
      expect(r.status, JSON.stringify(sort)).toBe(200);
      expect(r.body.provider).toBe('a');
    }
    const bad = await chat({ model: 'acme/m', provider: { sort: { by: 'fastest' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/provider\.sort/);
  });
});
