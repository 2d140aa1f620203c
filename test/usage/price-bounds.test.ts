import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizePrice } from '../../src/gateway/registry/model-info.js';
import { MAX_EXACT } from '../../src/store/column-bounds.js';
import {
  type ChatGateway,
  model,
  oaCompletion,
  requestLogs,
  startChatGateway,
  userMsg,
} from '../chat/chat-helpers.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { storeModelRow } from '../helpers/model-rows.js';

/**
 * Prices are USD per token / request / image, bounded at admin input by what the quota columns
 * hold (9,007,199,254 USD, 2^53 - 1 micro-USD). A price of 1e300 used to make every request of a
 * key with a quota a 500 (an infinite reservation). Runs on SQLite, and on PostgreSQL when
 * TEST_DATABASE_URL is set.
 */
let up: FakeUpstream;
let c: ChatGateway;
let unlimitedKey: string;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': {
      json: oaCompletion('ok', { prompt_tokens: 5, completion_tokens: 2 }),
    },
    'POST /v1/embeddings': {
      json: {
        object: 'list',
        data: [{ object: 'embedding', index: 0, embedding: [0.1] }],
        model: 'e',
        usage: { prompt_tokens: 3, total_tokens: 3 },
      },
    },
  });
  c = await startChatGateway(
    {
      channels: [
        {
          name: 'up',
          kind: 'openai-compatible',
          base_url: `${up.url}/v1`,
          keys: ['k'],
          models: ['acme/m', 'acme/e'],
        },
      ],
      models: [model('acme/m'), model('acme/e', { output_modalities: ['embeddings'] })],
      gateway: { retry_base_ms: 1 },
      log: { request_logs_flush_ms: 60_000 },
    },
    { quota_limit: 10 },
  );
  const k = await c.gw.call('POST', '/api/key', { cookie: c.cookie, body: { name: 'unlimited' } });
  unlimitedKey = k.body.data.key;
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

/** Stores an admin entry as it is, past the API's checks (a row written before they existed). */
async function storeRaw(id: string, pricing: Record<string, string>): Promise<void> {
  await storeModelRow(c.gw.services.database, id, { pricing });
  c.gw.services.registry.invalidate();
  for (let i = 0; i < 100; i++) {
    if (Number(c.gw.services.registry.resolve(id)?.pricing.prompt) === Number(pricing.prompt)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the registry did not reload');
}

const chat = (token: string, id = 'acme/m') =>
  c.gw.call('POST', '/v1/chat/completions', { token, body: { model: id, messages: userMsg('hi') } });

describe('absurd prices', () => {
  it('the admin API refuses a price above 9007199254 USD per unit with a 400 naming the field', async () => {
    for (const [method, pricing, field] of [
      ['PUT', { prompt: 1e300 }, 'prompt'],
      ['PUT', { completion: '1e300' }, 'completion'],
      ['PUT', { request: '9007199255' }, 'request'],
      ['POST', { image: 1e21 }, 'image'],
    ] as const) {
      const body = { id: method === 'POST' ? 'acme/new' : 'acme/m', pricing };
      const r = await c.gw.call(method, '/api/model', { cookie: c.cookie, body });
      expect([r.status, r.body]).toEqual([
        400,
        {
          success: false,
          message: `pricing.${field}: must be a number from 0 to 9007199254 (USD per unit)`,
        },
      ]);
    }
    // The bound itself is accepted, and nothing refused was stored.
    const atBound = await c.gw.call('POST', '/api/model', {
      cookie: c.cookie,
      body: { id: 'acme/dear', pricing: { request: 9007199254 } },
    });
    expect(atBound.status).toBe(200);
    expect(atBound.body.data.pricing.request).toBe('9007199254');
    expect((await c.gw.call('GET', '/api/model/acme/new', { cookie: c.cookie })).status).toBe(404);
    expect((await c.gw.call('GET', '/api/model/acme/m', { cookie: c.cookie })).body.data.pricing.prompt).toBe(
      '0.000001',
    );
  });

  it('a price past 1e21 is kept as a plain decimal of the same value (it was cut to "1e+3" for 1e300)', () => {
    expect(Number(normalizePrice(1e300))).toBe(1e300);
    expect(normalizePrice('1e21')).toBe('1000000000000000000000');
  });

  it('a price of 1e305 already stored: a key with a quota gets a 402, an unlimited key is served and billed the maximum', async () => {
    await storeRaw('acme/m', { prompt: '1e305', completion: '1e305' });

    const limited = await chat(c.key);
    expect(limited.status).toBe(402);
    expect(limited.body.error.code).toBe(402);
    expect(limited.body.error.message).toMatch(/^quota exhausted: the quota of API key \d+ cannot cover/);

    const served = await c.gw.call('POST', '/v1/chat/completions', {
      token: unlimitedKey,
      body: { model: 'acme/m', messages: userMsg('hi'), usage: { include: true } },
    });
    expect(served.status).toBe(200);
    expect(served.body.usage.cost).toBe(MAX_EXACT / 1e6);
    const logs = await requestLogs(c); // flushes the settlements too
    const keys = (await c.gw.call('GET', '/api/key', { cookie: c.cookie })).body.data as any[];
    expect(logs[0]).toMatchObject({ status: 200, model: 'acme/m' });
    // Saturated at the largest amount the spend columns hold, not dropped to 0.
    expect(logs[0].cost).toBe(MAX_EXACT / 1e6);
    const unlimited = keys.find((k) => k.name === 'unlimited');
    expect(unlimited.quota_used).toBe(MAX_EXACT / 1e6);
    const limitedKey = keys.find((k) => k.name === 'chat');
    expect(limitedKey.quota_used).toBe(0);
  });

  it('embeddings with such a price: 402 for a key with a quota, 200 for an unlimited key', async () => {
    await storeRaw('acme/e', { prompt: '1e305' });
    const body = { model: 'acme/e', input: 'hello' };
    const limited = await c.gw.call('POST', '/v1/embeddings', { token: c.key, body });
    expect(limited.status).toBe(402);
    const served = await c.gw.call('POST', '/v1/embeddings', { token: unlimitedKey, body });
    expect(served.status).toBe(200);
  });
});
