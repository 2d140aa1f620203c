import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';
import { type KeyOwnersGateway, startKeyOwnersGateway } from '../helpers/key-owners.js';

/**
 * A key whose owner's quota is used up answers every call with a 402 naming the user, while its
 * own status stays 1 (enabled): its read model says so in `user_quota_exhausted` (docs/quotas.md,
 * "A key of a user whose quota is used up"). Before, `GET /api/key` showed it enabled, nothing more.
 */
let env: KeyOwnersGateway;
let gw: TestGateway;

beforeAll(async () => {
  env = await startKeyOwnersGateway(['fake-model']);
  gw = env.gw;
});
afterAll(() => env?.close());

describe('a key of a user whose quota is used up', () => {
  it('is enabled and says the user cannot spend, in every read of it', async () => {
    const made = await gw.call('POST', '/api/key', { cookie: env.bob, body: { name: 'mine' } });
    expect(made.status).toBe(200);
    expect(made.body.data).toMatchObject({ status: 1, user_quota_exhausted: false });
    const id = made.body.data.id as number;

    const capped = await gw.call('PUT', '/api/user', {
      cookie: env.root,
      body: { id: env.bobId, quota_limit: 0 },
    });
    expect(capped.status).toBe(200);

    const chat = await env.chat(made.body.data.key, 'fake-model');
    expect(chat.status).toBe(402);
    expect(chat.body.error.metadata.scope).toBe('user');

    const own = await gw.call('GET', '/api/key', { cookie: env.bob });
    expect(own.body.data).toEqual([expect.objectContaining({ id, status: 1, user_quota_exhausted: true })]);
    const one = await gw.call('GET', `/api/key/${id}`, { cookie: env.bob });
    expect(one.body.data).toMatchObject({ status: 1, user_quota_exhausted: true });
    const renamed = await env.put(env.bob, id, { name: 'renamed' });
    expect(renamed.body.data).toMatchObject({ status: 1, user_quota_exhausted: true });
    // An admin's list of every user's keys tells it per owner.
    const all = await gw.call('GET', '/api/key', { cookie: env.root });
    const byId = new Map(all.body.data.map((k: { id: number }) => [k.id, k]));
    expect(byId.get(id)).toMatchObject({ user_quota_exhausted: true });
    const second = await gw.call('POST', '/api/key', { cookie: env.bob, body: { name: 'second' } });
    expect(second.body.data).toMatchObject({ status: 1, user_quota_exhausted: true });

    // Raised again: the key can spend, and says so.
    await gw.call('PUT', '/api/user', { cookie: env.root, body: { id: env.bobId, quota_limit: 5 } });
    const after = await gw.call('GET', `/api/key/${id}`, { cookie: env.bob });
    expect(after.body.data).toMatchObject({ status: 1, user_quota_exhausted: false });
    expect((await env.chat(made.body.data.key, 'fake-model')).status).toBe(200);
  });

  it('is false for a root key list whose owners have no quota', async () => {
    const k = await gw.call('POST', '/api/key', { cookie: env.root, body: { name: 'root-key' } });
    expect(k.body.data.user_quota_exhausted).toBe(false);
  });
});
