import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_LISTING_PAGES } from '../../src/gateway/registry/model-discovery.js';
import { type FakeUpstream, type ReceivedRequest, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { anthropicPages, geminiPages, names } from './paged-listings.js';

/**
 * Gemini's and Anthropic's model listings come in pages (at most 1000 models each): discovery
 * follows `nextPageToken` and `has_more`/`last_id` to the last page. Before, a channel listed only
 * its first page, and its other models were unknown to the gateway (404 on chat). An upstream that
 * pages on and on is stopped (a cursor seen before, or MAX_LISTING_PAGES pages), and a page that
 * fails fails the listing, so the stored one stays.
 */
const GEMINI = names('gm', 2100);
const CLAUDE = names('cl', 2100);

let up: FakeUpstream;
let gw: TestGateway;
let root: string;
let key: string;
let geminiFailsAfterFirstPage = false;

const channelId = async (name: string): Promise<number> =>
  (await gw.call('GET', '/api/channel', { cookie: root })).body.data.find((c: any) => c.name === name).id;
/** Refreshes a channel's listing; answers the status, the names found and the requests it made. */
const refresh = async (name: string, path: string) => {
  const id = await channelId(name);
  const before = up.requests.length;
  const r = await gw.call('POST', `/api/channel/${id}/models/refresh`, { cookie: root });
  const asked = up.requests.slice(before).filter((q: ReceivedRequest) => q.path.split('?')[0] === path);
  return {
    status: r.status,
    body: r.body,
    asked: asked.map((q) => new URL(q.path, 'http://x').searchParams),
  };
};
const served = async (name: string, prefix: string): Promise<string[]> => {
  const ch = (await gw.call('GET', `/api/channel/${await channelId(name)}`, { cookie: root })).body.data;
  return (ch.served_models as string[]).filter((m) => m.startsWith(prefix)).sort();
};

beforeAll(async () => {
  const gemini = geminiPages(() => GEMINI);
  let endless = 0;
  up = await startFakeUpstream({
    'GET /v1beta/models': (req) =>
      geminiFailsAfterFirstPage && req.path.includes('pageToken=')
        ? {
            status: 500,
            json: { error: { code: 500, message: 'Internal error encountered.', status: 'INTERNAL' } },
          }
        : gemini(req),
    'GET /v1/models': anthropicPages(() => CLAUDE),
    // Misbehaving upstreams: a page token that comes back again, one that never ends, an
    // Anthropic page that says it has more and names the id it started after.
    'GET /same-token/v1beta/models': () => ({
      json: {
        models: [{ name: 'models/loop-a', supportedGenerationMethods: ['generateContent'] }],
        nextPageToken: 'again',
      },
    }),
    'GET /endless/v1beta/models': () => {
      endless++;
      return {
        json: {
          models: [{ name: `models/endless-${endless}`, supportedGenerationMethods: ['generateContent'] }],
          nextPageToken: `token-${endless}`,
        },
      };
    },
    'GET /stuck/v1/models': (req) => {
      const after = new URL(req.path, 'http://x').searchParams.get('after_id');
      const data = after
        ? []
        : [{ type: 'model', id: 'stuck-a', display_name: 'A', created_at: '2025-01-01T00:00:00Z' }];
      return { json: { data, has_more: true, first_id: data[0]?.id ?? null, last_id: after ?? 'stuck-a' } };
    },
  });
  gw = await startTestGateway({
    channels: [
      { name: 'gemini', kind: 'gemini', base_url: up.url, keys: ['g-key'] },
      { name: 'claude', kind: 'anthropic', base_url: up.url, keys: ['a-key'] },
      { name: 'same-token', kind: 'gemini', base_url: `${up.url}/same-token`, keys: ['g'] },
      { name: 'endless', kind: 'gemini', base_url: `${up.url}/endless`, keys: ['g'] },
      { name: 'stuck', kind: 'anthropic', base_url: `${up.url}/stuck`, keys: ['a'] },
    ],
  });
  root = await gw.login();
  key = (await gw.call('POST', '/api/key', { cookie: root, body: { name: 'k' } })).body.data.key;
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

describe('a Gemini channel with more models than one page', () => {
  it('lists every page, following nextPageToken with the same pageSize', async () => {
    const r = await refresh('gemini', '/v1beta/models');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data.filter((n: string) => n.startsWith('gm-'))).toEqual(GEMINI);
    expect(r.asked.map((q) => q.get('pageSize'))).toEqual(['1000', '1000', '1000']);
    expect(r.asked[0]!.has('pageToken')).toBe(false);
    expect(r.asked.slice(1).every((q) => q.get('pageToken'))).toBe(true);
    expect(await served('gemini', 'gm-')).toEqual(GEMINI);
    // A model of the last page is a model of the gateway.
    const last = await gw.call('GET', '/v1/models/gm-2099', { token: key });
    expect(last.status).toBe(200);
    expect(last.body).toMatchObject({ id: 'gm-2099', name: 'Model gm-2099', context_length: 1048576 });
  });

  it('a page that fails fails the refresh and keeps the last listing whole', async () => {
    geminiFailsAfterFirstPage = true;
    try {
      const r = await refresh('gemini', '/v1beta/models');
      expect(r.status).toBe(502);
      expect(r.asked).toHaveLength(2);
    } finally {
      geminiFailsAfterFirstPage = false;
    }
    expect(await served('gemini', 'gm-')).toEqual(GEMINI);
  });
});

describe('an Anthropic channel with more models than one page', () => {
  it('lists every page, following has_more with after_id = last_id', async () => {
    const r = await refresh('claude', '/v1/models');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data.filter((n: string) => n.startsWith('cl-'))).toEqual(CLAUDE);
    expect(r.asked.map((q) => [q.get('limit'), q.get('after_id')])).toEqual([
      ['1000', null],
      ['1000', 'cl-0999'],
      ['1000', 'cl-1999'],
    ]);
    expect(await served('claude', 'cl-')).toEqual(CLAUDE);
    expect((await gw.call('GET', '/v1/models/cl-2099', { token: key })).status).toBe(200);
  });
});

describe('an upstream that pages on and on', () => {
  it('a page token seen before ends the listing', async () => {
    const r = await refresh('same-token', '/same-token/v1beta/models');
    expect(r.status).toBe(200);
    expect(r.asked.map((q) => q.get('pageToken'))).toEqual([null, 'again']);
    expect(await served('same-token', 'loop-')).toEqual(['loop-a']);
  });

  it(`stops after ${MAX_LISTING_PAGES} pages, keeping what they listed`, async () => {
    const r = await refresh('endless', '/endless/v1beta/models');
    expect(r.status).toBe(200);
    expect(r.asked).toHaveLength(MAX_LISTING_PAGES);
    expect((await served('endless', 'endless-')).length).toBe(MAX_LISTING_PAGES);
  });

  it('an Anthropic page that has more but names no new last id ends the listing', async () => {
    const r = await refresh('stuck', '/stuck/v1/models');
    expect(r.status).toBe(200);
    expect(r.asked.map((q) => q.get('after_id'))).toEqual([null, 'stuck-a']);
    expect(await served('stuck', 'stuck-')).toEqual(['stuck-a']);
  });
});
