import { OpenRouter } from '@openrouter/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';
import { listChannel, startModelListGateway } from './model-list-gateway.js';

/**
 * OpenRouter's `GET /api/v1/models/user` (reference openrouter.md §11; @openrouter/sdk
 * `models.listForUser`): the models list as this key sees it, with the list's filters and pages.
 */
let gw: TestGateway;
let key: string; // every model
let onlyAcme: string; // allowed_models: acme/*

const CHAT = 'acme/chat-1';
const PAINTER = 'acme/painter'; // text -> image
const OTHER = 'beta/other';
const EMBED = 'openai/text-embedding-3-small'; // default registry entry
const ALL = [CHAT, PAINTER, OTHER, EMBED].sort();

beforeAll(async () => {
  const s = await startModelListGateway({
    channels: [listChannel('up', [CHAT, PAINTER, OTHER, EMBED])],
    models: [{ id: CHAT }, { id: PAINTER, output_modalities: ['image'] }, { id: OTHER }],
  });
  gw = s.gw;
  key = await s.newKey();
  onlyAcme = await s.newKey({ allowed_models: ['acme/*'] });
});
afterAll(async () => gw?.close());

const ids = (body: { data: { id: string }[] }) => body.data.map((m) => m.id);

describe('GET /api/v1/models/user', () => {
  it("is the list as the key's allow-list admits it", async () => {
    for (const [token, want] of [
      [key, ALL],
      [onlyAcme, [CHAT, PAINTER]],
    ] as const) {
      const mine = await gw.call('GET', '/api/v1/models/user', { token });
      expect(mine.status).toBe(200);
      const list = await gw.call('GET', '/api/v1/models', { token });
      expect(mine.body).toEqual(list.body);
      expect(ids(mine.body)).toEqual(want);
    }
  });

  it("takes the list's filters, sort and pages, links.next staying on its own path", async () => {
    const r = await gw.call('GET', '/api/v1/models/user?output_modalities=text&limit=1', { token: onlyAcme });
    expect(r.status).toBe(200);
    expect(ids(r.body)).toEqual([CHAT]);
    expect(r.body).toMatchObject({ total_count: 1, links: { next: null } });
    const first = await gw.call('GET', '/api/v1/models/user?limit=2', { token: key });
    expect(first.body.links.next).toBe('/api/v1/models/user?limit=2&offset=2');
    const second = await gw.call('GET', first.body.links.next, { token: key });
    expect(ids(second.body)).toEqual(ALL.slice(2));
    for (const [qs, param] of [
      ['category=programming', 'category'],
      ['output_modalities=pictures', 'output_modalities'],
      ['limit=0', 'limit'],
    ]) {
      const bad = await gw.call('GET', `/api/v1/models/user?${qs}`, { token: key });
      expect(bad.status, qs).toBe(400);
      expect(bad.body.error).toMatchObject({ code: 400, param });
    }
  });

  it('needs an API key', async () => {
    expect((await gw.call('GET', '/api/v1/models/user')).status).toBe(401);
  });

  it('answers @openrouter/sdk models.listForUser()', async () => {
    const sdk = new OpenRouter({ serverURL: `${gw.url}/api/v1`, retryConfig: { strategy: 'none' } });
    const all = await sdk.models.listForUser({ bearer: onlyAcme });
    expect(all.result.data.map((m) => m.id)).toEqual([CHAT, PAINTER]);
    const images = await sdk.models.listForUser({ bearer: onlyAcme }, { outputModalities: 'image' });
    expect(images.result.data.map((m) => m.id)).toEqual([PAINTER]);
    const pages: string[][] = [];
    for await (const page of await sdk.models.listForUser({ bearer: key }, { limit: 3 }))
      pages.push(page.result.data.map((m) => m.id));
    expect(pages).toEqual([ALL.slice(0, 3), ALL.slice(3)]);
  });

  it('is not served under /v1/models/, where user would be a model', async () => {
    const r = await gw.call('GET', '/v1/models/user', { token: key });
    expect(r.status).toBe(404);
    expect(r.body.error.message).toBe('model user not found');
  });
});
