import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeysRepo } from '../../src/store/api-keys-repo.js';
import type { TestGateway } from '../helpers/gateway.js';
import { type KeyOwnersGateway, startKeyOwnersGateway } from '../helpers/key-owners.js';

/**
 * A `*` before the end of an allow-list entry: only a final `*` is a wildcard, so
 * `acme/*-mini` admitted only a model of that very id, while its writer meant a glob. A key
 * create or change that brings such an entry is a 400 naming it, for owners and admins alike;
 * a key that holds one already (stored before the rule) keeps it, with its old meaning.
 */
let env: KeyOwnersGateway;
let gw: TestGateway;
let root: string;
let admin: string;
let bob: string;
let bobId: number;

beforeAll(async () => {
  env = await startKeyOwnersGateway(['acme/chat-mini', 'acme/odd*mini', 'acme/other']);
  ({ gw, root, admin, bob, bobId } = env);
});
afterAll(() => env?.close());

const post = (cookie: string, body: Record<string, unknown>) =>
  gw.call('POST', '/api/key', { cookie, body: { name: 'k', ...body } });
const refusal = (entry: string, prefix: string) =>
  `allowed_models: ${JSON.stringify(entry)} has a * before its end, and only a final * is a wildcard: write "${prefix}*" for every model whose id starts with "${prefix}", or name the models one by one`;

describe('an allow-list entry with a * before its end', () => {
  it('is a 400 naming it on create and change, for an owner, an admin and root', async () => {
    for (const [who, cookie, extra] of [
      ['bob', () => bob, {}],
      ['ada for bob', () => admin, { user_id: bobId }],
      ['root', () => root, {}],
    ] as const) {
      const made = await post(cookie(), { ...extra, allowed_models: ['acme/other', ' acme/*-mini '] });
      expect(made.status, who).toBe(400);
      expect(made.body).toEqual({ success: false, message: refusal('acme/*-mini', 'acme/') });

      const k = await post(cookie(), { ...extra, allowed_models: ['acme/*'] });
      expect(k.status, who).toBe(200);
      const changed = await env.put(cookie(), k.body.data.id, { allowed_models: ['acme/chat-mini', 'a*c*'] });
      expect(changed.status, who).toBe(400);
      expect(changed.body.message).toBe(refusal('a*c*', 'a'));
      // Nothing of the refused change was kept.
      const listed = await gw.call('GET', `/api/key/${k.body.data.id}`, { cookie: cookie() });
      expect(listed.body.data.allowed_models, who).toEqual(['acme/*']);
    }
    // Bob's own keys are an admin's to manage now (ada made one for him): root's key here.
    const all = await post(root, { allowed_models: ['**'] });
    expect(all.status).toBe(400);
    expect(all.body.message).toBe(
      'allowed_models: "**" has a * before its end, and only a final * is a wildcard: write "*" for every model, or name the models one by one',
    );
  });

  it('held by a key already keeps working as a literal name, and the key can still be changed', async () => {
    const k = await post(admin, { user_id: bobId, allowed_models: ['acme/other'] });
    expect(k.status).toBe(200);
    const id = k.body.data.id as number;
    // Stored before the rule: written as an older gateway took it.
    await new ApiKeysRepo(gw.services.database).update(id, {
      allowed_models: JSON.stringify(['acme/odd*mini', 'acme/other']),
    });
    expect((await env.chat(k.body.data.key, 'acme/odd*mini')).status).toBe(200);
    expect((await env.chat(k.body.data.key, 'acme/chat-mini')).status).toBe(403);

    // Sent back as it is with a new entry (the console sends the whole list), by the admin.
    const widened = await env.put(admin, id, {
      allowed_models: ['acme/odd*mini', 'acme/other', 'acme/chat-mini'],
    });
    expect(widened.status, JSON.stringify(widened.body)).toBe(200);
    // Its owner narrows the key an admin manages, keeping the old entry.
    const narrowed = await env.put(bob, id, { allowed_models: ['acme/odd*mini'] });
    expect(narrowed.status, JSON.stringify(narrowed.body)).toBe(200);
    expect(narrowed.body.data.allowed_models).toEqual(['acme/odd*mini']);
    expect((await env.chat(k.body.data.key, 'acme/odd*mini')).status).toBe(200);
    // A new entry of the same kind beside it is still refused.
    const added = await env.put(admin, id, { allowed_models: ['acme/odd*mini', 'acme/*-mini'] });
    expect(added.status).toBe(400);
    expect(added.body.message).toBe(refusal('acme/*-mini', 'acme/'));
  });
});
