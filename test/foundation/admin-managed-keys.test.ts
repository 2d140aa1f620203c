import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyService } from '../../src/access/api-keys.js';
import { Role } from '../../src/access/roles.js';
import { ApiKeysRepo } from '../../src/store/api-keys-repo.js';
import type { TestGateway } from '../helpers/gateway.js';
import { type KeyOwnersGateway, startKeyOwnersGateway } from '../helpers/key-owners.js';

/**
 * Limits an admin sets on another user's key hold (docs/architecture.md, "Keys an admin
 * manages"): its owner may rename, disable and delete it and tighten its limits, not loosen them
 * nor enable it again after an admin disabled it. Before, bob's PUT with everything null and
 * status 1 undid an admin's quota, rpm, allow-list and disable with a 200.
 */
let env: KeyOwnersGateway;
let gw: TestGateway;
let admin: string;
let bob: string;
let bobId: number;

beforeAll(async () => {
  env = await startKeyOwnersGateway(['fake-model', 'other-model']);
  ({ gw, admin, bob, bobId } = env);
});
afterAll(() => env?.close());

async function keyFor(cookie: string, body: Record<string, unknown>) {
  const r = await gw.call('POST', '/api/key', { cookie, body: { name: 'k', ...body } });
  if (r.status !== 200) throw new Error(`key: ${r.status} ${JSON.stringify(r.body)}`);
  return { id: r.body.data.id as number, secret: r.body.data.key as string, data: r.body.data };
}

describe('a key an admin set limits on for another user', () => {
  it("cannot be loosened or enabled again by its owner (the reviewer's case)", async () => {
    const k = await keyFor(admin, {
      user_id: bobId,
      quota_limit: 10,
      rpm_limit: 1,
      allowed_models: ['fake-model'],
    });
    expect(k.data).toMatchObject({ admin_managed: true, admin_disabled: false });
    expect((await env.put(admin, k.id, { status: 2 })).body.data).toMatchObject({
      admin_managed: true,
      admin_disabled: true,
    });

    const undo = await env.put(bob, k.id, {
      status: 1,
      quota_limit: null,
      rpm_limit: null,
      allowed_models: null,
    });
    expect(undo.status).toBe(403);
    expect(undo.body.success).toBe(false);
    for (const [body, field] of [
      [{ status: 1 }, 'status'],
      [{ quota_limit: null }, 'quota_limit'],
      [{ quota_limit: 20 }, 'quota_limit'],
      [{ rpm_limit: null }, 'rpm_limit'],
      [{ rpm_limit: 2 }, 'rpm_limit'],
      [{ allowed_models: null }, 'allowed_models'],
      [{ allowed_models: ['fake-model', 'other-model'] }, 'allowed_models'],
      [{ allowed_models: ['other-model'] }, 'allowed_models'],
      [{ admin_managed: false }, 'admin_managed'],
    ] as const) {
      const r = await env.put(bob, k.id, body);
      expect(r.status, JSON.stringify(body)).toBe(403);
      expect(r.body.message.startsWith(`${field}: `), r.body.message).toBe(true);
    }
    const held = (await gw.call('GET', `/api/key/${k.id}`, { cookie: bob })).body.data;
    expect(held).toMatchObject({
      status: 2,
      quota_limit: 10,
      rpm_limit: 1,
      allowed_models: ['fake-model'],
    });
    expect((await env.chat(k.secret, 'fake-model')).status).toBe(401);

    // Renaming, tightening and sending a value back as it is are the owner's.
    const own = await env.put(bob, k.id, {
      name: 'renamed',
      quota_limit: 5,
      rpm_limit: 1,
      tpm_limit: 1000,
      allowed_models: ['fake-model'],
      status: 2,
    });
    expect(own.status).toBe(200);
    expect(own.body.data).toMatchObject({
      name: 'renamed',
      quota_limit: 5,
      tpm_limit: 1000,
      admin_managed: true,
    });
    expect((await env.put(bob, k.id, { tpm_limit: 2000 })).status).toBe(403);
    // An expiry: sooner yes, later or never no.
    const soon = Math.floor(Date.now() / 1000) + 3600;
    expect((await env.put(bob, k.id, { expires_time: soon })).status).toBe(200);
    expect((await env.put(bob, k.id, { expires_time: soon + 60 })).status).toBe(403);
    expect((await env.put(bob, k.id, { expires_time: null })).body.message).toMatch(/^expires_time: /);
    expect((await env.put(bob, k.id, { expires_time: soon - 60 })).status).toBe(200);

    // Enabled by an admin (who may loosen), it serves what the admin allowed; disabled by its owner,
    // the owner may enable it again.
    expect((await env.put(admin, k.id, { status: 1, rpm_limit: 5 })).body.data).toMatchObject({
      admin_managed: true,
      admin_disabled: false,
    });
    expect((await env.chat(k.secret, 'fake-model')).status).toBe(200);
    expect((await env.chat(k.secret, 'other-model')).status).toBe(403);
    expect((await env.put(bob, k.id, { status: 2 })).status).toBe(200);
    expect((await env.put(bob, k.id, { status: 1 })).status).toBe(200);

    // An admin hands the key back: its owner may then loosen it.
    expect((await env.put(admin, k.id, { admin_managed: false })).body.data.admin_managed).toBe(false);
    const free = await env.put(bob, k.id, {
      quota_limit: null,
      rpm_limit: null,
      allowed_models: null,
      expires_time: null,
    });
    expect(free.status).toBe(200);
    expect(free.body.data).toMatchObject({ quota_limit: null, rpm_limit: null, allowed_models: null });
    // Its owner may delete a held key.
    const gone = await keyFor(admin, { user_id: bobId, quota_limit: 1 });
    expect((await gw.call('DELETE', `/api/key/${gone.id}`, { cookie: bob })).status).toBe(200);
  });

  it('an allow-list narrows only to entries of the list, or wildcards within its wildcards', async () => {
    const k = await keyFor(admin, { user_id: bobId, allowed_models: ['acme/*', 'fake-model'] });
    expect((await env.put(bob, k.id, { allowed_models: ['acme/chat-*', 'fake-model'] })).status).toBe(200);
    for (const allowed_models of [['acme/*'], ['acme/chat-1'], ['other-model'], ['acme/c*', 'fake-model']]) {
      const r = await env.put(bob, k.id, { allowed_models });
      expect(r.status, JSON.stringify(allowed_models)).toBe(403);
    }
    expect((await env.put(bob, k.id, { allowed_models: ['fake-model'] })).status).toBe(200);
  });
});

describe('keys no admin holds', () => {
  it("are their owner's to loosen: a user's own key, and an admin's own", async () => {
    // The keys above made bob's keys an admin's to manage (user-key-hold.test.ts): handed back.
    const back = await gw.call('PUT', '/api/user', {
      cookie: admin,
      body: { id: bobId, keys_admin_managed: false },
    });
    expect(back.status).toBe(200);
    const mine = await keyFor(bob, { quota_limit: 1, rpm_limit: 5, allowed_models: ['fake-model'] });
    expect(mine.data.admin_managed).toBe(false);
    const loose = await env.put(bob, mine.id, { quota_limit: null, rpm_limit: null, allowed_models: null });
    expect(loose.status).toBe(200);
    // A rename by an admin holds nothing; a limit does.
    expect((await env.put(admin, mine.id, { name: 'by-admin' })).body.data.admin_managed).toBe(false);
    expect((await env.put(admin, mine.id, { quota_limit: 2 })).body.data.admin_managed).toBe(true);
    expect((await env.put(bob, mine.id, { quota_limit: 3 })).status).toBe(403);
    // A user cannot mark their own key admin-managed.
    expect(
      (await gw.call('POST', '/api/key', { cookie: bob, body: { name: 'x', admin_managed: true } })).status,
    ).toBe(403);
    // That hold marked bob's keys the admin's again: handed back, he makes another of his own.
    await gw.call('PUT', '/api/user', { cookie: admin, body: { id: bobId, keys_admin_managed: false } });
    const other = await keyFor(bob, {});
    expect((await env.put(bob, other.id, { admin_managed: true })).status).toBe(403);
    expect((await env.put(bob, other.id, { admin_managed: false })).status).toBe(200);

    const adas = await keyFor(admin, { quota_limit: 1, rpm_limit: 1 });
    expect(adas.data.admin_managed).toBe(false);
    const raised = await env.put(admin, adas.id, { quota_limit: null, rpm_limit: null, status: 2 });
    expect(raised.status).toBe(200);
    expect((await env.put(admin, adas.id, { status: 1 })).status).toBe(200);
    // An admin may also create a key for someone that is theirs to manage.
    const handed = await keyFor(admin, { user_id: bobId, quota_limit: 1, admin_managed: false });
    expect(handed.data.admin_managed).toBe(false);
    expect((await env.put(bob, handed.id, { quota_limit: null })).status).toBe(200);
  });
});

describe('an owner raising a limit while an admin lowers it', () => {
  it('is decided against the limit the admin wrote, not the one the owner read', async () => {
    const k = await keyFor(admin, { user_id: bobId, quota_limit: 5 });
    const { repos } = gw.services;
    const bobRow = (await repos.users.byId(bobId))!;
    let raced = false;
    // The admin's write lands between the owner's read of the key and the owner's write.
    class AdminFirst extends ApiKeysRepo {
      override async byId(id: number) {
        const read = await super.byId(id);
        if (!raced) {
          raced = true;
          await repos.apiKeys.update(k.id, { quota_limit_micros: 1_000_000 });
        }
        return read;
      }
    }
    const owners = new ApiKeyService(new AdminFirst(gw.services.database), repos.users, 0);
    // 4 was a tightening of the 5 read; against the 1 the admin wrote, it is a loosening.
    await expect(
      owners.update({ ...bobRow, role: Role.user }, k.id, { quota_limit: 4 }),
    ).rejects.toMatchObject({
      status: 403,
    });
    expect(raced).toBe(true);
    expect((await gw.call('GET', `/api/key/${k.id}`, { cookie: bob })).body.data.quota_limit).toBe(1);
  });
});
