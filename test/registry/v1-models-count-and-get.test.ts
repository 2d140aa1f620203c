import { OpenRouter } from '@openrouter/sdk';
import { NotFoundResponseError } from '@openrouter/sdk/models/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';
import { listChannel, startModelListGateway } from './model-list-gateway.js';

/**
 * OpenRouter's `GET /api/v1/models/count` and `GET /api/v1/model/{author}/{slug}` (reference
 * openrouter.md §11; @openrouter/sdk `models.count`, `models.get`), within the key's allow-list.
 */
let gw: TestGateway;
let key: string; // every model
let onlyChat: string; // allowed_models: acme/chat-1

const CHAT = 'acme/chat-1';
const COUNT = 'acme/count'; // a model whose own name is `count`: GET /v1/models/count is this model
const PAINTER = 'acme/painter'; // text -> image
const EMBED = 'openai/text-embedding-3-small';
const UNSERVED = 'acme/unserved'; // in the registry, on no enabled channel

beforeAll(async () => {
  const s = await startModelListGateway({
    channels: [
      listChannel('up', [CHAT, COUNT, PAINTER, EMBED]),
      listChannel('off', [UNSERVED], { status: 2 }),
    ],
    models: [
      { id: CHAT, name: 'Acme: Chat One', context_length: 64000, supported_parameters: ['tools'] },
      { id: COUNT, name: 'Acme: Count' },
      { id: PAINTER, output_modalities: ['image'] },
      { id: UNSERVED },
    ],
  });
  gw = s.gw;
  key = await s.newKey();
  onlyChat = await s.newKey({ allowed_models: [CHAT] });
});
afterAll(async () => gw?.close());

const sdk = (apiKey: string) =>
  new OpenRouter({ apiKey, serverURL: `${gw.url}/api/v1`, retryConfig: { strategy: 'none' } });

describe('GET /api/v1/models/count', () => {
  it("counts the models the key may use, after the list's filters", async () => {
    const all = await gw.call('GET', '/api/v1/models/count', { token: key });
    expect(all.status).toBe(200);
    expect(all.body).toEqual({ data: { count: 4 } });
    const count = async (qs: string, token = key) =>
      (await gw.call('GET', `/api/v1/models/count${qs}`, { token })).body.data.count;
    expect(await count('?output_modalities=embeddings')).toBe(1);
    expect(await count('?output_modalities=text')).toBe(2);
    expect(await count('?output_modalities=all')).toBe(4);
    expect(await count('?supported_parameters=tools&context=64000')).toBe(1);
    expect(await count('?q=acme')).toBe(3);
    expect(await count('', onlyChat)).toBe(1);
    expect(await count('?output_modalities=image', onlyChat)).toBe(0);
  });

  it('refuses what the list refuses', async () => {
    for (const [qs, param] of [
      ['output_modalities=pictures', 'output_modalities'],
      ['category=programming', 'category'],
      ['context=x', 'context'],
    ]) {
      const r = await gw.call('GET', `/api/v1/models/count?${qs}`, { token: key });
      expect(r.status, qs).toBe(400);
      expect(r.body.error).toMatchObject({ code: 400, param });
    }
    expect((await gw.call('GET', '/api/v1/models/count')).status).toBe(401);
  });

  it('answers @openrouter/sdk models.count()', async () => {
    expect(await sdk(key).models.count()).toEqual({ data: { count: 4 } });
    expect(await sdk(key).models.count({ outputModalities: 'embeddings' })).toEqual({ data: { count: 1 } });
  });

  it('is not served under /v1/models/, where a model named count is that model', async () => {
    const r = await gw.call('GET', '/v1/models/count', { token: key });
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(COUNT);
    expect((await gw.call('GET', '/v1/models/acme/count', { token: key })).body.id).toBe(COUNT);
  });
});

describe('GET /api/v1/model/{author}/{slug}', () => {
  it('wraps the model as the list shows it in {data}', async () => {
    for (const prefix of ['/api/v1', '/v1']) {
      const listed = (await gw.call('GET', `${prefix}/models`, { token: key })).body.data.find(
        (m: { id: string }) => m.id === CHAT,
      );
      const r = await gw.call('GET', `${prefix}/model/acme/chat-1`, { token: key });
      expect(r.status, prefix).toBe(200);
      expect(Object.keys(r.body)).toEqual(['data']);
      expect(r.body.data).toEqual(listed);
    }
  });

  it('answers @openrouter/sdk models.get()', async () => {
    const r = await sdk(key).models.get({ author: 'acme', slug: 'chat-1' });
    expect(r.data).toMatchObject({ id: CHAT, name: 'Acme: Chat One', contextLength: 64000 });
    expect(r.data.supportedParameters).toEqual(['tools']);
  });

  it('is a 404 for a model the key may not use, no channel serves, or nobody knows', async () => {
    for (const [token, path] of [
      [onlyChat, '/api/v1/model/acme/painter'],
      [key, `/api/v1/model/${UNSERVED}`],
      [key, '/api/v1/model/acme/nothing'],
      [onlyChat, '/v1/model/acme/painter'],
    ] as const) {
      const r = await gw.call('GET', path, { token });
      expect(r.status, path).toBe(404);
      expect(r.body.error).toMatchObject({ code: 404 });
    }
    await expect(sdk(onlyChat).models.get({ author: 'acme', slug: 'painter' })).rejects.toBeInstanceOf(
      NotFoundResponseError,
    );
  });
});
