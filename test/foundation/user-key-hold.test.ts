import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';
import { type KeyOwnersGateway, startKeyOwnersGateway } from '../helpers/key-owners.js';

/**
 * A user whose keys an admin manages gets new keys from an admin (docs/architecture.md, "New keys
 * of a user whose keys an admin manages"). Before, bob, whose only key an admin had narrowed to
 * one model at 1 rpm, made a key of his own that served every model at any rate, with a 200.
 */
let env: KeyOwnersGateway;
let gw: TestGateway;

beforeAll(async () => {
  env = await startKeyOwnersGateway(['fake-model', 'other-model']);
  gw = env.gw;
});
afterAll(() => env?.close());

const bobUser = async () => (await gw.call('GET', '/api/user/self', { cookie: env.bob })).body.data;
const bobKey = (body: Record<string, unknown> = {}) =>
  gw.call('POST', '/api/key', { cookie: env.bob, body: { name: 'mine', ...body } });

describe('new keys of a user whose keys an admin manages', () => {
  it('are refused to the user, also after the held key is deleted, until an admin hands them back', async () => {
    expect(await bobUser()).toMatchObject({ keys_admin_managed: false });
    const free = await bobKey();
    expect(free.status).toBe(200); // nothing held yet: self-service as before

    const held = await gw.call('POST', '/api/key', {
      cookie: env.admin,
      body: { name: 'narrow', user_id: env.bobId, rpm_limit: 1, allowed_models: ['fake-model'] },
    });
    expect(held.status).toBe(200);
    expect(await bobUser()).toMatchObject({ keys_admin_managed: true });

    const refused = await bobKey();
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ success: false });
    expect(refused.body.message).toMatch(/an admin manages your API keys/);

    // Deleting the held key does not lift it.
    expect((await gw.call('DELETE', `/api/key/${held.body.data.id}`, { cookie: env.bob })).status).toBe(200);
    expect((await bobKey()).status).toBe(403);
    // The keys bob has stay his: renamed, disabled, deleted as before.
    expect((await env.put(env.bob, free.body.data.id, { name: 'still mine' })).status).toBe(200);

    // bob cannot lift it himself; an admin can.
    const self = await gw.call('PUT', '/api/user/self', {
      cookie: env.bob,
      body: { keys_admin_managed: false },
    });
    expect(self.status).toBe(400);
    const handed = await gw.call('PUT', '/api/user', {
      cookie: env.admin,
      body: { id: env.bobId, keys_admin_managed: false },
    });
    expect(handed.status).toBe(200);
    expect(handed.body.data).toMatchObject({ keys_admin_managed: false });
    expect((await bobKey()).status).toBe(200);
  });

  it("is set by an admin's change that holds an existing key, and not by a key handed over from the start", async () => {
    const u = await gw.call('POST', '/api/user', {
      cookie: env.root,
      body: { username: 'cyd', password: 'cyd-pass-1' },
    });
    const cydId = u.body.data.id as number;
    const cyd = await gw.login('cyd', 'cyd-pass-1');
    const self = (await gw.call('GET', '/api/user/self', { cookie: cyd })).body.data;
    expect(self.keys_admin_managed).toBe(false);

    const given = await gw.call('POST', '/api/key', {
      cookie: env.admin,
      body: { name: 'theirs', user_id: cydId, admin_managed: false },
    });
    expect(given.status).toBe(200);
    expect((await gw.call('GET', '/api/user/self', { cookie: cyd })).body.data.keys_admin_managed).toBe(
      false,
    );
    const own = await gw.call('POST', '/api/key', { cookie: cyd, body: { name: 'own' } });
    expect(own.status).toBe(200);

    expect((await env.put(env.admin, own.body.data.id, { rpm_limit: 5 })).status).toBe(200);
    expect((await gw.call('GET', '/api/user/self', { cookie: cyd })).body.data.keys_admin_managed).toBe(true);
    expect((await gw.call('POST', '/api/key', { cookie: cyd, body: { name: 'more' } })).status).toBe(403);
  });

  it('binds no admin acting on their own keys, and an admin may not lift their own mark', async () => {
    const set = await gw.call('PUT', '/api/user', {
      cookie: env.root,
      body: { id: 2, keys_admin_managed: true },
    });
    expect(set.status).toBe(200); // ada, the admin: root manages her keys now
    expect((await gw.call('POST', '/api/key', { cookie: env.admin, body: { name: 'a' } })).status).toBe(403);
    const lift = await gw.call('PUT', '/api/user', {
      cookie: env.admin,
      body: { id: 2, keys_admin_managed: false },
    });
    expect(lift.status).toBe(403);
    // root is never bound.
    expect((await gw.call('POST', '/api/key', { cookie: env.root, body: { name: 'r' } })).status).toBe(200);
  });
});

describe('handing back the keys of a user whose keys an admin manages', () => {
  it("lifts the mark with the last held key an admin hands back, and not before; an admin's rename does not set it again", async () => {
    const u = await gw.call('POST', '/api/user', {
      cookie: env.root,
      body: { username: 'dee', password: 'dee-pass-1' },
    });
    const deeId = u.body.data.id as number;
    const dee = await gw.login('dee', 'dee-pass-1');
    const mark = async () =>
      (await gw.call('GET', '/api/user/self', { cookie: dee })).body.data.keys_admin_managed as boolean;
    const give = async (name: string) => {
      const r = await gw.call('POST', '/api/key', {
        cookie: env.admin,
        body: { name, user_id: deeId, rpm_limit: 2 },
      });
      expect(r.status).toBe(200);
      return r.body.data.id as number;
    };
    const one = await give('one');
    const two = await give('two');
    expect(await mark()).toBe(true);

    // One of two held keys handed back: the other is still held, so is the mark.
    const back = await env.put(env.admin, one, { admin_managed: false });
    expect(back.status).toBe(200);
    expect(back.body.data).toMatchObject({ admin_managed: false, rpm_limit: 2 });
    expect(await mark()).toBe(true);
    expect((await gw.call('POST', '/api/key', { cookie: dee, body: { name: 'own' } })).status).toBe(403);

    // The last one handed back: dee's keys are all hers, as if made with admin_managed false.
    expect((await env.put(env.admin, two, { admin_managed: false })).status).toBe(200);
    expect(await mark()).toBe(false);
    expect((await gw.call('POST', '/api/key', { cookie: dee, body: { name: 'own' } })).status).toBe(200);

    // Held again, the mark is back; cleared by an admin on the user while the key stays held, a
    // rename of that key by an admin does not bring it back (renaming does not hold a key).
    expect((await env.put(env.admin, two, { admin_managed: true })).status).toBe(200);
    expect(await mark()).toBe(true);
    const cleared = await gw.call('PUT', '/api/user', {
      cookie: env.admin,
      body: { id: deeId, keys_admin_managed: false },
    });
    expect(cleared.status).toBe(200);
    expect((await env.put(env.admin, two, { name: 'renamed' })).status).toBe(200);
    expect(await mark()).toBe(false);
    // A hand-back of a key that was not held is no hand-back: an admin's mark set on the user stays.
    expect((await env.put(env.admin, two, { admin_managed: false })).status).toBe(200);
    const set = await gw.call('PUT', '/api/user', {
      cookie: env.admin,
      body: { id: deeId, keys_admin_managed: true },
    });
    expect(set.status).toBe(200);
    expect((await env.put(env.admin, one, { admin_managed: false })).status).toBe(200);
    expect(await mark()).toBe(true);
  });
});
