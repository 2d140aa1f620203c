import { OpenRouter } from '@openrouter/sdk';
import { NotFoundResponseError } from '@openrouter/sdk/models/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';
import { listChannel, startModelListGateway } from './model-list-gateway.js';

/**
 * A model variant id (`acme/chat-1:nitro`, docs/routing.md "Model variants") on the one-model
 * routes: chat serves it as a way of serving its base model, and the list shows only the base,
 * so `/v1/models/<id>`, `/api/v1/model/<author>/<slug>` and the endpoints list answer a 404 that
 * says so, unless a model is registered under that very id.
 */
let gw: TestGateway;
let key: string; // every model
let onlyChat: string; // allowed_models: acme/chat-1 and acme/chat-1:free

const CHAT = 'acme/chat-1';
const PAINTER = 'acme/painter';
const REAL_FREE = 'acme/painter:free'; // registered under the variant id: a model of its own

beforeAll(async () => {
  const s = await startModelListGateway({
    channels: [listChannel('up', [CHAT, PAINTER, REAL_FREE])],
    models: [
      { id: CHAT, name: 'Acme: Chat One' },
      { id: PAINTER },
      { id: REAL_FREE, name: 'Painter (free)' },
    ],
  });
  gw = s.gw;
  key = await s.newKey();
  onlyChat = await s.newKey({ allowed_models: [CHAT] });
});
afterAll(async () => gw?.close());

const VARIANT_404 = (asked: string, base: string) =>
  `model ${asked} not found: :${asked.split(':').pop()} is a model variant (a way of asking chat for ${base}), not a model of its own; the models list and this route know ${base}`;

describe('a variant id on the one-model routes', () => {
  it('is not listed: the list shows its base model', async () => {
    const ids = (await gw.call('GET', '/v1/models', { token: key })).body.data.map(
      (m: { id: string }) => m.id,
    );
    expect(ids).toEqual([CHAT, PAINTER, REAL_FREE]);
  });

  it.each([
    ['/v1/models/acme/chat-1:nitro', 'acme/chat-1:nitro'],
    ['/v1/models/chat-1:thinking', 'chat-1:thinking'], // a plain name resolves as chat resolves it
    ['/api/v1/model/acme/chat-1:free', 'acme/chat-1:free'],
    ['/v1/model/acme/chat-1:floor', 'acme/chat-1:floor'],
    ['/v1/models/acme/chat-1:exacto/endpoints', 'acme/chat-1:exacto'],
    ['/api/v1/models/acme/chat-1:online/endpoints', 'acme/chat-1:online'],
  ])('%s is a 404 saying variants are not models', async (path, asked) => {
    const r = await gw.call('GET', path, { token: onlyChat });
    expect(r.status).toBe(404);
    expect(r.body.error).toMatchObject({ code: 404, message: VARIANT_404(asked, CHAT) });
  });

  it('is the plain 404 when the key may not use the base, or the base or suffix is unknown', async () => {
    for (const [token, id] of [
      [onlyChat, 'acme/painter:nitro'], // the key may not use acme/painter: nothing said of it
      [key, 'acme/nothing:nitro'],
      [key, 'acme/chat-1:8b'], // not a variant: part of a name nobody has
    ] as const) {
      const r = await gw.call('GET', `/v1/models/${id}`, { token });
      expect(r.status, id).toBe(404);
      expect(r.body.error.message).toBe(`model ${id} not found`);
    }
  });

  it('is the model registered under that id, when there is one', async () => {
    const r = await gw.call('GET', '/api/v1/model/acme/painter:free', { token: key });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ id: REAL_FREE, name: 'Painter (free)' });
  });

  it('answers @openrouter/sdk models.get() with a NotFoundResponseError saying so', async () => {
    const sdk = new OpenRouter({
      apiKey: onlyChat,
      serverURL: `${gw.url}/api/v1`,
      retryConfig: { strategy: 'none' },
    });
    const err = await sdk.models.get({ author: 'acme', slug: 'chat-1:nitro' }).catch((e) => e);
    expect(err).toBeInstanceOf(NotFoundResponseError);
    expect(err.message).toContain('is a model variant');
  });
});
