import { OpenRouter } from '@openrouter/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';
import { listChannel, startModelListGateway } from './model-list-gateway.js';

/**
 * GET /v1/models (and /api/v1/models) with the rest of OpenRouter's list parameters (reference
 * openrouter.md §11; @openrouter/sdk's `models.list` request): `input_modalities`, `q`,
 * `context`, `sort`, `category`, and opt-in paging with `offset`/`limit`, `total_count` and
 * `links.next`.
 */
let gw: TestGateway;
let key: string; // every model
let acme: string; // allowed_models: acme/* and beta/*

const CHAT = 'acme/chat-1'; // text -> text, 8k, created 1000, 1 + 2 per token (µUSD)
const PAINTER = 'acme/painter'; // text+image -> image+text, 32k, created 3000, 5 + 10
const LISTENER = 'acme/listener'; // text+audio -> text, 128k, created 2000, free
const VISION = 'beta/vision-pro'; // text+image+file -> text, 200k, created 4000, 3 + 3
const EMBED = 'openai/text-embedding-3-small'; // default registry entry: text -> embeddings
const MINE = [CHAT, LISTENER, PAINTER, VISION]; // in id order, the list's default

beforeAll(async () => {
  const s = await startModelListGateway({
    channels: [listChannel('up', [CHAT, PAINTER, LISTENER, VISION, EMBED])],
    models: [
      {
        id: CHAT,
        name: 'Acme: Chat One',
        created: 1000,
        context_length: 8192,
        pricing: { prompt: '0.000001', completion: '0.000002' },
      },
      {
        id: PAINTER,
        name: 'Acme: Painter',
        created: 3000,
        context_length: 32000,
        input_modalities: ['text', 'image'],
        output_modalities: ['image', 'text'],
        pricing: { prompt: '0.000005', completion: '0.00001' },
      },
      {
        id: LISTENER,
        name: 'Acme: Listener',
        created: 2000,
        context_length: 128000,
        input_modalities: ['text', 'audio'],
        pricing: { prompt: '0', completion: '0' },
      },
      {
        id: VISION,
        name: 'Beta: Vision Pro',
        created: 4000,
        context_length: 200000,
        input_modalities: ['text', 'image', 'file'],
        pricing: { prompt: '0.000003', completion: '0.000003' },
      },
    ],
  });
  gw = s.gw;
  key = await s.newKey();
  acme = await s.newKey({ allowed_models: ['acme/*', 'beta/*'] });
});
afterAll(async () => gw?.close());

const list = (qs: string, token = acme, path = '/v1/models') => gw.call('GET', `${path}${qs}`, { token });
/** The ids listed, in the order listed. */
const ids = async (qs: string, token = acme, path = '/v1/models') => {
  const r = await list(qs, token, path);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body.data as { id: string }[]).map((m) => m.id);
};
const refused = async (qs: string, param: string) => {
  const r = await list(qs);
  expect(r.status, qs).toBe(400);
  expect(r.body.error).toMatchObject({ code: 400, param });
  expect(r.body.error.message).toContain(param);
  return r.body.error.message as string;
};

describe('input_modalities', () => {
  it('keeps the models that take every listed input modality', async () => {
    expect(await ids('?input_modalities=image')).toEqual([PAINTER, VISION]);
    expect(await ids('?input_modalities=text,image')).toEqual([PAINTER, VISION]);
    expect(await ids('?input_modalities=file,%20image')).toEqual([VISION]);
    // All of them, not any: no model here takes both images and audio.
    expect(await ids('?input_modalities=image,audio')).toEqual([]);
    expect(await ids('?input_modalities=text')).toEqual(MINE);
    // A modality OpenRouter knows and no model here takes: an empty list, not an error.
    expect(await ids('?input_modalities=video')).toEqual([]);
    expect(await ids('?input_modalities=audio', acme, '/api/v1/models')).toEqual([LISTENER]);
  });

  it.each([
    'input_modalities=',
    'input_modalities=text,,image',
    'input_modalities=pictures',
    'input_modalities=IMAGE',
  ])('answers 400 naming the parameter for %s', async (qs) => {
    await refused(`?${qs}`, 'input_modalities');
  });
});

describe('q', () => {
  it('keeps the models whose id or name contains it, whatever the case', async () => {
    expect(await ids('?q=PAINT')).toEqual([PAINTER]);
    expect(await ids('?q=chat%20one')).toEqual([CHAT]); // the name, with a space
    expect(await ids('?q=vision+pro')).toEqual([VISION]); // + is a space in a query
    expect(await ids('?q=acme/')).toEqual([CHAT, LISTENER, PAINTER]);
    expect(await ids('?q=embedding', key)).toEqual([EMBED]);
    expect(await ids('?q=nothing-like-it')).toEqual([]);
    // Empty (a search box left blank) searches for nothing in particular.
    expect(await ids('?q=')).toEqual(MINE);
  });
});

describe('context', () => {
  it('keeps the models with at least that context length', async () => {
    expect(await ids('?context=32000')).toEqual([LISTENER, PAINTER, VISION]);
    expect(await ids('?context=128001')).toEqual([VISION]);
    expect(await ids('?context=0')).toEqual(MINE);
    expect(await ids('?context=32000&input_modalities=image&q=acme')).toEqual([PAINTER]);
  });

  it.each(['context=abc', 'context=-1', 'context=1.5'])('answers 400 for %s', async (qs) => {
    await refused(`?${qs}`, 'context');
  });
});

describe('category', () => {
  it('is a 400 saying the gateway has no model categories, not an unfiltered list', async () => {
    const message = await refused('?category=programming', 'category');
    expect(message).toMatch(/categor/);
  });
});

describe('sort', () => {
  it('orders by creation, price and context', async () => {
    expect(await ids('?sort=newest')).toEqual([VISION, PAINTER, LISTENER, CHAT]);
    // The average of the prompt and completion prices; ties by id.
    expect(await ids('?sort=pricing-low-to-high')).toEqual([LISTENER, CHAT, VISION, PAINTER]);
    expect(await ids('?sort=pricing-high-to-low')).toEqual([PAINTER, VISION, CHAT, LISTENER]);
    expect(await ids('?sort=context-high-to-low')).toEqual([VISION, LISTENER, PAINTER, CHAT]);
    expect(await ids('?sort=newest&input_modalities=image', acme, '/api/v1/models')).toEqual([
      VISION,
      PAINTER,
    ]);
  });

  it("orders by the upstreams' measured throughput and latency, unmeasured models last", async () => {
    const channel = gw.services.registry.targetsFor(CHAT, { endpoint: 'chat' })[0]!.channelId;
    const health = gw.services.chat.health;
    // What served requests record (src/gateway/routing/health.ts): latency, tokens over time.
    health.success(`${channel}:${PAINTER}`, { latencyMs: 900, completionTokens: 100, durationMs: 1000 });
    health.success(`${channel}:${VISION}`, { latencyMs: 300, completionTokens: 100, durationMs: 500 });
    health.success(`${channel}:${CHAT}`, { latencyMs: 600 });
    expect(await ids('?sort=throughput-high-to-low')).toEqual([VISION, PAINTER, CHAT, LISTENER]);
    expect(await ids('?sort=latency-low-to-high')).toEqual([VISION, CHAT, PAINTER, LISTENER]);
  });

  it.each([
    'most-popular',
    'top-weekly',
    'intelligence-high-to-low',
    'coding-high-to-low',
    'agentic-high-to-low',
    'design-arena-elo-high-to-low',
  ])('answers 400 for OpenRouter sort %s, which needs figures the gateway does not keep', async (sort) => {
    expect(await refused(`?sort=${sort}`, 'sort')).toContain('not available');
  });

  it.each(['sort=cheapest', 'sort=', 'sort=NEWEST'])('answers 400 for an unknown value: %s', async (qs) => {
    expect(await refused(`?${qs}`, 'sort')).toContain('newest');
  });
});

describe('offset and limit', () => {
  it('leave the list as it was without them: every model, one page', async () => {
    const r = await list('', key);
    expect(r.body).toMatchObject({ object: 'list', links: { next: null }, total_count: 5 });
    expect(r.body.data.map((m: { id: string }) => m.id)).toEqual([...MINE, EMBED].sort());
    // What the openai SDK's models.list() reads.
    const sdk = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const seen: string[] = [];
    for await (const m of sdk.models.list()) seen.push(m.id);
    expect(seen).toEqual([...MINE, EMBED].sort());
  });

  it('page the filtered, sorted list, counting it before paging', async () => {
    const first = await list('?limit=3');
    expect(first.status).toBe(200);
    expect(first.body.data.map((m: { id: string }) => m.id)).toEqual(MINE.slice(0, 3));
    expect(first.body.total_count).toBe(4);
    expect(first.body.links.next).toBe('/v1/models?limit=3&offset=3');
    const second = await gw.call('GET', first.body.links.next, { token: acme });
    expect(second.body.data.map((m: { id: string }) => m.id)).toEqual([VISION]);
    expect(second.body).toMatchObject({ total_count: 4, links: { next: null } });
    // offset alone: the default limit, 500.
    expect(await ids('?offset=1')).toEqual(MINE.slice(1));
    expect((await list('?offset=9')).body).toMatchObject({ data: [], total_count: 4, links: { next: null } });
    expect((await list('?offset=0&limit=4')).body.links.next).toBeNull();
  });

  it('keep every other parameter in links.next, under the path asked', async () => {
    const first = await list('?q=acme%20&sort=newest&limit=1', acme, '/api/v1/models');
    expect(first.body.data.map((m: { id: string }) => m.id)).toEqual([PAINTER]);
    expect(first.body.total_count).toBe(3);
    const seen = [PAINTER];
    let next: string | null = first.body.links.next;
    expect(next).toMatch(/^\/api\/v1\/models\?/);
    while (next) {
      const page = await gw.call('GET', next, { token: acme });
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((m: { id: string }) => m.id));
      next = page.body.links.next;
    }
    expect(seen).toEqual([PAINTER, LISTENER, CHAT]);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=ten', 'limit'],
    ['offset=-1', 'offset'],
    ['offset=1.5', 'offset'],
  ])('answer 400 for %s', async (qs, param) => {
    await refused(`?${qs}`, param);
  });

  it('@openrouter/sdk pages through the list with them', async () => {
    const or = new OpenRouter({
      apiKey: acme,
      serverURL: `${gw.url}/api/v1`,
      retryConfig: { strategy: 'none' },
    });
    const pages: string[][] = [];
    const res = await or.models.list({ limit: 3, sort: 'newest' });
    for await (const page of res) {
      expect(page.result.totalCount).toBe(4);
      pages.push(page.result.data.map((m) => m.id));
    }
    expect(pages).toEqual([[VISION, PAINTER, LISTENER], [CHAT]]);
    const few = await or.models.list({ inputModalities: 'image', q: 'acme', context: 1000 });
    expect(few.result.data.map((m) => m.id)).toEqual([PAINTER]);
    expect(few.result.links.next).toBeNull();
  });
});
