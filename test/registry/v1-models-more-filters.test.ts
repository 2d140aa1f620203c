import { OpenRouter } from '@openrouter/sdk';
import { BadRequestResponseError } from '@openrouter/sdk/models/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';
import { listChannel, startModelListGateway } from './model-list-gateway.js';

/**
 * The rest of @openrouter/sdk 1.3's `models.list` filters (its `GetModelsRequest`): those the
 * registry and the channels can answer (`model_authors`, `providers`, `zdr`, the price and age
 * ranges) and those they cannot, each a 400 naming it rather than a list that claims to be
 * filtered and is not.
 */
let gw: TestGateway;
let key: string; // every model
let mine: string; // allowed_models: acme/*, beta/*, gamma/*

const DAY = 86_400;
const now = Math.floor(Date.now() / 1000);
const CHAT = 'acme/chat-1'; // 5 days old; 0.5 $/M in, 1.5 $/M out; primary (DeepInfra/turbo, zdr)
const OLD = 'acme/old'; // 400 days old; 3 in, 15 out; primary and second (anthropic)
const VISION = 'beta/vision'; // 40 days old; 0.1 in, 0.4 out; second (and a disabled channel)
const UNDATED = 'gamma/undated'; // no created date; free; local
const EMBED = 'voyageai/voyage-4-large'; // default registry entry; voyage (zdr), embeddings only
const MINE = [CHAT, OLD, VISION, UNDATED];

beforeAll(async () => {
  const s = await startModelListGateway({
    channels: [
      listChannel('primary', [CHAT, OLD], { settings: { provider: 'DeepInfra/turbo', zdr: true } }),
      listChannel('second', [OLD, VISION], { kind: 'anthropic', settings: { zdr: false } }),
      listChannel('local', [UNDATED]),
      listChannel('voyage', [EMBED], { kind: 'voyage', settings: { zdr: true } }),
      listChannel('off', [VISION], { settings: { provider: 'Hidden', zdr: true }, status: 2 }),
    ],
    models: [
      {
        id: CHAT,
        created: now - 5 * DAY,
        pricing: { prompt: '0.0000005', completion: '0.0000015' },
      },
      { id: OLD, created: now - 400 * DAY, pricing: { prompt: '0.000003', completion: '0.000015' } },
      // 0.0000001 * 1e6 is 0.09999999999999999 in binary: still 0.1 $/M.
      { id: VISION, created: now - 40 * DAY, pricing: { prompt: '0.0000001', completion: '0.0000004' } },
      { id: UNDATED },
    ],
  });
  gw = s.gw;
  key = await s.newKey();
  mine = await s.newKey({ allowed_models: ['acme/*', 'beta/*', 'gamma/*'] });
});
afterAll(async () => gw?.close());

const list = (qs: string, token = mine, path = '/v1/models') => gw.call('GET', `${path}${qs}`, { token });
/** The ids listed, in id order (the list's default). */
const ids = async (qs: string, token = mine, path = '/v1/models') => {
  const r = await list(qs, token, path);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.total_count).toBe(r.body.data.length);
  return (r.body.data as { id: string }[]).map((m) => m.id);
};
const refused = async (qs: string, param: string, path = '/v1/models') => {
  const r = await list(qs, mine, path);
  expect(r.status, qs).toBe(400);
  expect(r.body.error).toMatchObject({ code: 400, param });
  expect(r.body.error.message).toContain(param);
  return r.body.error.message as string;
};

describe('model_authors', () => {
  it("keeps the models whose id's author is any of them, whatever the case", async () => {
    expect(await ids('?model_authors=acme')).toEqual([CHAT, OLD]);
    expect(await ids('?model_authors=ACME,%20beta')).toEqual([CHAT, OLD, VISION]);
    expect(await ids('?model_authors=voyageai', key)).toEqual([EMBED]);
    expect(await ids('?model_authors=nobody')).toEqual([]);
    // The author is the id's, not a substring of it.
    expect(await ids('?model_authors=acm')).toEqual([]);
  });

  it.each(['model_authors=', 'model_authors=acme,'])('answers 400 naming it for %s', async (qs) => {
    await refused(`?${qs}`, 'model_authors');
  });
});

describe('price ranges', () => {
  it('keep the models whose own prompt price, in USD per million tokens, is within them', async () => {
    expect(await ids('?max_price=0.1')).toEqual([VISION, UNDATED]);
    expect(await ids('?min_price=0.1&max_price=0.5')).toEqual([CHAT, VISION]);
    expect(await ids('?min_price=1')).toEqual([OLD]);
    expect(await ids('?min_price=0')).toEqual(MINE);
    expect(await ids('?min_price=2&max_price=1')).toEqual([]);
  });

  it('keep the models whose completion price is within the output ranges', async () => {
    expect(await ids('?min_output_price=1&max_output_price=2')).toEqual([CHAT]);
    expect(await ids('?max_output_price=0.4')).toEqual([VISION, UNDATED]);
    expect(await ids('?min_output_price=0.4&max_price=0.1')).toEqual([VISION]);
  });

  it.each([
    ['min_price=-1', 'min_price'],
    ['max_price=abc', 'max_price'],
    ['min_output_price=-0.5', 'min_output_price'],
    ['max_output_price=', 'max_output_price'],
  ])('answer 400 for %s', async (qs, param) => {
    await refused(`?${qs}`, param);
  });

  it.each(['max_price=1e-7', 'min_output_price=0x10', 'max_price=abc'])(
    'say what a price is written as for %s: a plain decimal, as docs/models.md has it',
    async (qs) => {
      const param = qs.split('=')[0]!;
      expect(await refused(`?${qs}`, param)).toBe(
        `${param}: must be a plain decimal number, such as 0.15 (no exponent)`,
      );
    },
  );
});

describe('age ranges', () => {
  it('keep the models created that many days ago or more (min) or at most (max)', async () => {
    expect(await ids('?min_age_days=30')).toEqual([OLD, VISION]);
    expect(await ids('?max_age_days=30')).toEqual([CHAT]);
    expect(await ids('?min_age_days=30&max_age_days=100')).toEqual([VISION]);
    // A model without a date has no known age: it meets no bound.
    expect(await ids('?min_age_days=0')).toEqual([CHAT, OLD, VISION]);
  });

  it.each(['min_age_days=1.5', 'max_age_days=-1', 'max_age_days=week'])('answer 400 for %s', async (qs) => {
    await refused(`?${qs}`, qs.split('=')[0]!);
  });
});

describe('providers', () => {
  it('keeps the models some enabled upstream serves whose name, kind or settings.provider is listed', async () => {
    // settings.provider, a base slug matching its variant, as provider.only matches.
    expect(await ids('?providers=deepinfra')).toEqual([CHAT, OLD]);
    expect(await ids('?providers=DeepInfra/turbo')).toEqual([CHAT, OLD]);
    expect(await ids('?providers=deepinfra/other')).toEqual([]);
    expect(await ids('?providers=anthropic')).toEqual([OLD, VISION]); // the kind
    expect(await ids('?providers=second')).toEqual([OLD, VISION]); // the channel's name
    expect(await ids('?providers=local,%20Second')).toEqual([OLD, VISION, UNDATED]);
    // A disabled channel serves nothing.
    expect(await ids('?providers=hidden')).toEqual([]);
    expect(await ids('?providers=off')).toEqual([]);
  });

  it('counts only the upstreams on `endpoint` when it is given', async () => {
    expect(await ids('?providers=voyage', key)).toEqual([EMBED]);
    expect(await ids('?providers=voyage&endpoint=chat', key)).toEqual([]);
    expect(await ids('?providers=voyage&endpoint=embeddings', key)).toEqual([EMBED]);
  });

  it.each(['providers=', 'providers=deepinfra,,second'])('answers 400 naming it for %s', async (qs) => {
    await refused(`?${qs}`, 'providers');
  });
});

describe('zdr', () => {
  it('true keeps the models some enabled upstream declaring zero data retention serves', async () => {
    expect(await ids('?zdr=true')).toEqual([CHAT, OLD]);
    expect(await ids('?zdr=true', key)).toEqual([CHAT, OLD, EMBED]);
    expect(await ids('?zdr=true&endpoint=chat', key)).toEqual([CHAT, OLD]);
    expect(await ids('?zdr=false')).toEqual(MINE);
  });

  it('and providers must be met by one upstream', async () => {
    // OLD is served by `second` and by a zero-retention upstream, but `second` retains.
    expect(await ids('?providers=second&zdr=true')).toEqual([]);
    expect(await ids('?providers=primary&zdr=true')).toEqual([CHAT, OLD]);
  });

  it.each(['zdr=yes', 'zdr=', 'zdr=TRUE'])('answers 400 naming it for %s', async (qs) => {
    expect(await refused(`?${qs}`, 'zdr')).toContain('true');
  });
});

describe('the filters the gateway has no figures for', () => {
  it.each([
    ['arch=GPT', 'arch', 'model family'],
    ['distillable=true', 'distillable', 'distillation'],
    ['distillable=false', 'distillable', 'distillation'],
    ['region=eu', 'region', 'region'],
    ['min_intelligence_index=50', 'min_intelligence_index', 'benchmark'],
    ['max_intelligence_index=50', 'max_intelligence_index', 'benchmark'],
    ['min_coding_index=1', 'min_coding_index', 'benchmark'],
    ['max_coding_index=1', 'max_coding_index', 'benchmark'],
    ['min_agentic_index=1', 'min_agentic_index', 'benchmark'],
    ['max_agentic_index=1', 'max_agentic_index', 'benchmark'],
    ['min_tool_success_rate=0.9', 'min_tool_success_rate', 'tool-calling success'],
    ['max_tool_success_rate=0.9', 'max_tool_success_rate', 'tool-calling success'],
    ['arch=', 'arch', 'model family'],
  ])('answer 400 for %s, saying why', async (qs, param, why) => {
    expect(await refused(`?${qs}`, param)).toContain(why);
    expect(await refused(`?${qs}`, param, '/api/v1/models')).toContain(why);
    expect(await refused(`?${qs}`, param, '/api/v1/models/count')).toContain(why);
  });
});

describe('the count', () => {
  it('counts with the same filters', async () => {
    const count = async (qs: string) =>
      (await gw.call('GET', `/api/v1/models/count${qs}`, { token: mine })).body.data.count;
    expect(await count('?model_authors=acme')).toBe(2);
    expect(await count('?providers=deepinfra&max_price=1')).toBe(1);
    expect(await count('?zdr=true&max_age_days=30')).toBe(1);
  });
});

describe('@openrouter/sdk models.list', () => {
  const sdk = () =>
    new OpenRouter({ apiKey: mine, serverURL: `${gw.url}/api/v1`, retryConfig: { strategy: 'none' } });

  it('sends no filter by default: its defaults (offset, limit) list every model', async () => {
    const res = await sdk().models.list();
    expect(res.result.data.map((m) => m.id)).toEqual(MINE);
    expect(res.result.totalCount).toBe(4);
  });

  it('sends these filters under the names read here', async () => {
    const res = await sdk().models.list({
      modelAuthors: 'acme',
      providers: 'deepinfra',
      zdr: 'true',
      minPrice: 0.1,
      maxPrice: 3,
      maxOutputPrice: 2,
      minAgeDays: 1,
      maxAgeDays: 30,
    });
    expect(res.result.data.map((m) => m.id)).toEqual([CHAT]);
    // null is "no bound": the SDK leaves it out of the query.
    const nulls = await sdk().models.list({ minPrice: null, maxAgeDays: null });
    expect(nulls.result.data.map((m) => m.id)).toEqual(MINE);
  });

  it('rejects a filter the gateway cannot answer with its BadRequestResponseError', async () => {
    await expect(sdk().models.list({ arch: 'GPT' })).rejects.toBeInstanceOf(BadRequestResponseError);
    await expect(sdk().models.list({ minCodingIndex: 40 })).rejects.toThrow(/min_coding_index/);
  });
});
