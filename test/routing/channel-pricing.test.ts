import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
 * Prices per upstream (a channel's `settings.pricing`, docs/routing.md "Prices per upstream"):
 * two channels serve `acme/m`, each at its own price over the model's. `dear` has the higher
 * priority, so it serves by default; a price sort, `:floor` and `max_price` go by the channel's
 * price, and what is billed (quota, request log, `usage.cost`) is the price of the channel that
 * served, after a fallback too. Runs on SQLite, and on PostgreSQL when TEST_DATABASE_URL is set.
 *
 * Every answer reports 1000 prompt and 500 completion tokens, so a request costs
 *   cheap: 1000 x 0.0000005 + 500 x 0.000001 = 0.001 USD
 *   model: 1000 x 0.000002  + 500 x 0.000004 = 0.004 USD (what both cost before)
 *   dear:  1000 x 0.00001   + 500 x 0.00002  = 0.02 USD
 */
const ROUTE = 'POST /v1/chat/completions';
const USAGE = { prompt_tokens: 1000, completion_tokens: 500 };
const COST = { cheap: 0.001, model: 0.004, dear: 0.02 };

/** Answers as `who`, streamed or not; a message `fail` is a 500 (the fallback tests). */
const answer =
  (who: string) =>
  (req: { json: any }): FakeAnswer => {
    if (req.json?.messages?.[0]?.content === 'fail' && who === 'cheap')
      return { status: 500, json: { error: { message: 'boom', type: 'server_error' } } };
    return req.json?.stream
      ? {
          sse: sse([
            oaChunk({ role: 'assistant', content: `from ${who}` }),
            oaChunk({}, 'stop'),
            { ...oaChunk({}), choices: [], usage: { ...USAGE, total_tokens: 1500 } },
          ]),
        }
      : { json: oaCompletion(`from ${who}`, USAGE) };
  };

let ups: Record<'cheap' | 'dear', FakeUpstream>;
let c: ChatGateway;
let ids: Record<string, number>;

beforeAll(async () => {
  ups = {
    cheap: await startFakeUpstream({ [ROUTE]: answer('cheap') }),
    dear: await startFakeUpstream({
      [ROUTE]: answer('dear'),
      'POST /v1/embeddings': {
        json: {
          object: 'list',
          data: [{ object: 'embedding', index: 0, embedding: [0.1] }],
          model: 'e',
          usage: { prompt_tokens: 1000, total_tokens: 1000 },
        },
      },
    }),
  };
  const channel = (name: 'cheap' | 'dear', priority: number, pricing: Record<string, unknown>) => ({
    name,
    kind: 'openai-compatible',
    base_url: `${ups[name].url}/v1`,
    keys: [`key-${name}`],
    models: ['acme/m', 'acme/f', 'acme/e'],
    priority,
    settings: { pricing },
  });
  c = await startChatGateway({
    channels: [
      channel('cheap', 0, {
        // Numbers and strings, as model prices; fields not named keep the model's.
        'acme/m': { prompt: 5e-7, completion: '0.000001' },
        'acme/f': { prompt: '0', completion: 0 },
        // A model no channel lists (yet) is allowed.
        'acme/later': { prompt: '0.1' },
      }),
      channel('dear', 10, {
        'acme/m': { prompt: '0.00001', completion: '0.00002' },
        'acme/e': { prompt: '0.00003' },
      }),
    ],
    models: [
      model('acme/m', { pricing: { prompt: '0.000002', completion: '0.000004' } }),
      model('acme/f', { pricing: { prompt: '0.000002', completion: '0.000004' } }),
      model('acme/e', { output_modalities: ['embeddings'], pricing: { prompt: '0.000001' } }),
    ],
    gateway: { retry_base_ms: 1, max_attempts: 1, circuit_failures: 1000 },
    log: { request_logs_flush_ms: 60_000 },
  });
  const list = await c.gw.call('GET', '/api/channel?page_size=100', { cookie: c.cookie });
  ids = Object.fromEntries(list.body.data.map((ch: { name: string; id: number }) => [ch.name, ch.id]));
});
afterAll(async () => {
  await c?.gw.close();
  await ups?.cheap.close();
  await ups?.dear.close();
});

const chat = (body: Record<string, unknown>, token = c.key) =>
  c.gw.call('POST', '/v1/chat/completions', {
    token,
    body: { model: 'acme/m', messages: userMsg('hi'), usage: { include: true }, ...body },
  });

/** The newest request log row. */
const lastLog = async () => (await requestLogs(c))[0];

describe('prices per upstream: routing', () => {
  it('provider.sort "price" and :floor pick the cheaper channel; by default priority decides', async () => {
    expect((await chat({})).body.provider).toBe('dear');
    const sorted = await chat({ provider: { sort: 'price' } });
    expect(sorted.status).toBe(200);
    expect(sorted.body.provider).toBe('cheap');
    expect(sorted.headers.get('x-modelgate-attempts')).toBe('cheap/acme/m=ok');
    const floor = await chat({ model: 'acme/m:floor' });
    expect([floor.status, floor.body.provider, floor.body.model]).toEqual([200, 'cheap', 'acme/m']);
  });

  it('max_price keeps the channels under it, by their own prices', async () => {
    // USD per million tokens: cheap 0.5 / 1, the model 2 / 4, dear 10 / 20.
    const r = await chat({ provider: { max_price: { prompt: 1, completion: '1' } } });
    expect([r.status, r.body.provider]).toEqual([200, 'cheap']);
    // Both under it: the default order again.
    expect((await chat({ provider: { max_price: { prompt: 10, completion: 20 } } })).body.provider).toBe(
      'dear',
    );
    const none = await chat({ provider: { max_price: { prompt: 0.1 } } });
    expect(none.status).toBe(503);
    expect(none.body.error.metadata.excluded_by).toEqual(['max_price']);
  });

  it(':free is served by the channels that charge nothing for the model, and costs nothing', async () => {
    const r = await chat({ model: 'acme/f:free' });
    expect([r.status, r.body.provider, r.body.model, r.body.usage.cost]).toEqual([200, 'cheap', 'acme/f', 0]);
    expect(await lastLog()).toMatchObject({ provider: 'cheap', cost: 0 });
    // No channel serves acme/m for nothing.
    const paid = await chat({ model: 'acme/m:free' });
    expect(paid.status).toBe(400);
    expect(paid.body.error.message).toContain('for free');
  });

  it('GET /v1/models keeps the model price', async () => {
    const r = await c.gw.call('GET', '/v1/models', { token: c.key });
    const m = r.body.data.find((x: { id: string }) => x.id === 'acme/m');
    expect(m.pricing).toMatchObject({ prompt: '0.000002', completion: '0.000004' });
  });
});

describe('prices per upstream: billing', () => {
  it('the cost logged and returned is the serving channel price', async () => {
    const dear = await chat({});
    expect([dear.body.provider, dear.body.usage.cost]).toEqual(['dear', COST.dear]);
    expect(await lastLog()).toMatchObject({ provider: 'dear', channel_id: ids.dear, cost: COST.dear });
    const cheap = await chat({ provider: { only: ['cheap'] } });
    expect([cheap.body.provider, cheap.body.usage.cost]).toEqual(['cheap', COST.cheap]);
    expect(await lastLog()).toMatchObject({ provider: 'cheap', channel_id: ids.cheap, cost: COST.cheap });
  });

  it('after a fallback from the cheap channel failing, the dear one that served is billed', async () => {
    const r = await chat({ messages: userMsg('fail'), provider: { sort: 'price' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-modelgate-attempts')).toMatch(
      /^cheap\/acme\/m=server_error[^,]*, dear\/acme\/m=ok$/,
    );
    expect([r.body.provider, r.body.usage.cost]).toEqual(['dear', COST.dear]);
    expect(await lastLog()).toMatchObject({
      provider: 'dear',
      channel_id: ids.dear,
      cost: COST.dear,
      status: 200,
    });
  });

  it('a stream is billed at the price of the channel that served it, after a fallback too', async () => {
    const plain = await rawStream(c, {
      model: 'acme/m',
      messages: userMsg('hi'),
      provider: { sort: 'price' },
      usage: { include: true },
    });
    expect(plain.chunks[0].provider).toBe('cheap');
    expect(plain.chunks.at(-1).usage.cost).toBe(COST.cheap);
    expect(await lastLog()).toMatchObject({ provider: 'cheap', cost: COST.cheap, stream: true });

    const fellBack = await rawStream(c, {
      model: 'acme/m',
      messages: userMsg('fail'),
      provider: { sort: 'price' },
      usage: { include: true },
    });
    expect(fellBack.chunks[0].provider).toBe('dear');
    expect(fellBack.chunks.at(-1).usage.cost).toBe(COST.dear);
    expect(await lastLog()).toMatchObject({ provider: 'dear', cost: COST.dear, stream: true });
  });

  it("a key's spend is the serving channel's price", async () => {
    const k = await c.gw.call('POST', '/api/key', {
      cookie: c.cookie,
      body: { name: 'spend', quota_limit: 1 },
    });
    const token = k.body.data.key;
    await chat({ provider: { only: ['cheap'] } }, token);
    await chat({}, token);
    await requestLogs(c); // flushes the settlements too
    const keys = (await c.gw.call('GET', '/api/key', { cookie: c.cookie })).body.data as any[];
    expect(keys.find((x) => x.name === 'spend').quota_used).toBeCloseTo(COST.cheap + COST.dear, 9);
  });

  it('the quota reservation prices the dearest channel that may serve', async () => {
    // max_tokens 1000: the completion alone is 0.001 USD at cheap's price, 0.02 at dear's
    // (0.004 at the model's). A quota of 0.01 covers cheap, not dear.
    const k = await c.gw.call('POST', '/api/key', {
      cookie: c.cookie,
      body: { name: 'tight', quota_limit: 0.01 },
    });
    const token = k.body.data.key;
    const either = await chat({ max_tokens: 1000 }, token);
    expect(either.status).toBe(402);
    const cheapOnly = await chat({ max_tokens: 1000, provider: { only: ['cheap'] } }, token);
    expect([cheapOnly.status, cheapOnly.body.provider]).toEqual([200, 'cheap']);
  });

  it('embeddings are billed at the serving channel price', async () => {
    // dear has the higher priority; 1000 tokens at its 0.00003 (0.001 at the model's price).
    const r = await c.gw.call('POST', '/v1/embeddings', {
      token: c.key,
      body: { model: 'acme/e', input: 'hello' },
    });
    expect(r.status).toBe(200);
    expect(await lastLog()).toMatchObject({
      endpoint: 'embeddings',
      provider: 'dear',
      cost: 0.03,
      status: 200,
    });
  });
});

describe('prices per upstream: the admin API', () => {
  const create = (settings: unknown) =>
    c.gw.call('POST', '/api/channel', {
      cookie: c.cookie,
      body: {
        name: 'priced',
        kind: 'openai-compatible',
        base_url: 'http://127.0.0.1:9/v1',
        models: ['acme/m'],
        settings,
      },
    });

  it('refuses a zdr that is not a boolean (a string would silently exclude the channel)', async () => {
    for (const zdr of ['true', 1, null]) {
      const r = await create({ zdr });
      expect(r.status, JSON.stringify(zdr)).toBe(400);
      expect(r.body.message).toBe('settings.zdr: must be true or false');
    }
  });

  it('refuses bad prices with a 400 naming the field, on create and update; nothing is stored', async () => {
    const cases: Array<[unknown, string]> = [
      [
        'cheap',
        'settings.pricing: must map model ids to prices ({"<model id>": {"prompt": "0.000001", ...}})',
      ],
      [[], 'settings.pricing: must map model ids to prices ({"<model id>": {"prompt": "0.000001", ...}})'],
      [
        { 'acme/m': 1 },
        'settings.pricing["acme/m"]: must be an object of prices (USD per token, request or image)',
      ],
      [
        { 'acme/m': { prompt: -1 } },
        'settings.pricing["acme/m"].prompt: must be a non-negative number or numeric string',
      ],
      [
        { 'acme/m': { completion: 'abc' } },
        'settings.pricing["acme/m"].completion: must be a non-negative number or numeric string',
      ],
      [
        { 'acme/m': { request: true } },
        'settings.pricing["acme/m"].request: must be a non-negative number or numeric string',
      ],
      [
        { 'acme/m': { image: '' } },
        'settings.pricing["acme/m"].image: must be a non-negative number or numeric string',
      ],
      [
        { 'acme/m': { prompt: '1e300' } },
        'settings.pricing["acme/m"].prompt: must be a number from 0 to 9007199254 (USD per unit)',
      ],
      [
        { 'acme/m': { 'Prompt-Price': '1' } },
        'settings.pricing["acme/m"].Prompt-Price: is not a price key (lowercase letters, digits and _, as in prompt or input_cache_read)',
      ],
      [
        { ' ': { prompt: '1' } },
        'settings.pricing[" "]: must be a model id (1 to 255 characters, no surrounding spaces)',
      ],
    ];
    for (const [pricing, message] of cases) {
      const r = await create({ pricing });
      expect([r.status, r.body]).toEqual([400, { success: false, message }]);
      const u = await c.gw.call('PUT', '/api/channel', {
        cookie: c.cookie,
        body: { id: ids.cheap, settings: { pricing } },
      });
      expect([u.status, u.body]).toEqual([400, { success: false, message }]);
    }
    const list = await c.gw.call('GET', '/api/channel?page_size=100', { cookie: c.cookie });
    expect(list.body.data.map((ch: { name: string }) => ch.name).sort()).toEqual(['cheap', 'dear']);
    const cheap = await c.gw.call('GET', `/api/channel/${ids.cheap}`, { cookie: c.cookie });
    expect(cheap.body.data.settings.pricing['acme/m']).toEqual({
      prompt: '0.0000005',
      completion: '0.000001',
    });
  });

  it('stores prices as plain decimal strings, takes null for none, and a change applies to routing', async () => {
    const made = await create({ pricing: { 'acme/m': { prompt: 1.5e-7, completion: ' 2.5e-6 ' } }, rpm: 60 });
    expect(made.status).toBe(200);
    expect(made.body.data.settings).toEqual({
      pricing: { 'acme/m': { prompt: '0.00000015', completion: '0.0000025' } },
      rpm: 60,
    });
    const cleared = await c.gw.call('PUT', '/api/channel', {
      cookie: c.cookie,
      body: { id: made.body.data.id, settings: { pricing: null, rpm: 60 } },
    });
    expect(cleared.body.data.settings).toEqual({ rpm: 60 });
    expect(
      (await c.gw.call('DELETE', `/api/channel/${made.body.data.id}`, { cookie: c.cookie })).status,
    ).toBe(200);

    // cheap made dearer than dear: the price sort follows at once.
    const dearer = await c.gw.call('PUT', '/api/channel', {
      cookie: c.cookie,
      body: { id: ids.cheap, settings: { pricing: { 'acme/m': { prompt: '0.001' } } } },
    });
    expect(dearer.status).toBe(200);
    try {
      expect((await chat({ provider: { sort: 'price' } })).body.provider).toBe('dear');
    } finally {
      await c.gw.call('PUT', '/api/channel', {
        cookie: c.cookie,
        body: {
          id: ids.cheap,
          settings: {
            pricing: {
              'acme/m': { prompt: 5e-7, completion: '0.000001' },
              'acme/f': { prompt: '0', completion: 0 },
            },
          },
        },
      });
    }
    expect((await chat({ provider: { sort: 'price' } })).body.provider).toBe('cheap');
  });
});
