import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/databases.js';
import type { TestGateway } from '../helpers/gateway.js';
import { type KeyOwnersGateway, startKeyOwnersGateway } from '../helpers/key-owners.js';

/**
 * The mark on a user whose keys an admin manages (`users.keys_admin_managed`) is written in the
 * same transaction as the key write that sets it: all or none. Before, the key was inserted (or
 * held) first and the user marked by a second statement, so a failure between them (a crash, a
 * lost connection; injected here by a trigger that refuses the mark) left bob a held key and no
 * mark: his own POST /api/key then made a key carrying none of the admin's limits.
 * SQLite here, PostgreSQL under `npm run test:pg`.
 */
let env: KeyOwnersGateway;
let gw: TestGateway;

beforeAll(async () => {
  env = await startKeyOwnersGateway(['fake-model']);
  gw = env.gw;
});
afterAll(() => env?.close());
afterEach(() => refuseMarkChanges(false));

const db = () => gw.services.database.db;

/** A trigger that fails any change of `users.keys_admin_managed` (on: installed; off: removed). */
async function refuseMarkChanges(on: boolean): Promise<void> {
  if (onPostgres) {
    await sql`drop trigger if exists refuse_mark on users`.execute(db());
    if (!on) return;
    await sql`create or replace function refuse_mark() returns trigger language plpgsql as $$
      begin
        if new.keys_admin_managed <> old.keys_admin_managed then raise exception 'injected failure'; end if;
        return new;
      end $$`.execute(db());
    await sql`create trigger refuse_mark before update on users for each row execute function refuse_mark()`.execute(
      db(),
    );
    return;
  }
  await sql`drop trigger if exists refuse_mark`.execute(db());
  if (on)
    await sql`create trigger refuse_mark before update of keys_admin_managed on users
      when new.keys_admin_managed <> old.keys_admin_managed
      begin select raise(abort, 'injected failure'); end`.execute(db());
}

const bobKeys = async () =>
  db().selectFrom('api_keys').selectAll().where('user_id', '=', env.bobId).orderBy('id').execute();
const bobMark = async () =>
  (
    await db()
      .selectFrom('users')
      .select('keys_admin_managed')
      .where('id', '=', env.bobId)
      .executeTakeFirstOrThrow()
  ).keys_admin_managed;

describe('the mark on a user whose keys an admin manages, and the key write that sets it', () => {
  it("an admin's key for a member is not made when the member cannot be marked", async () => {
    await refuseMarkChanges(true);
    const made = await gw.call('POST', '/api/key', {
      cookie: env.admin,
      body: { name: 'narrow', user_id: env.bobId, rpm_limit: 1 },
    });
    expect(made.status).toBe(500);
    expect(await bobKeys()).toEqual([]);
    expect(await bobMark()).toBe(0);
  });

  it("an admin's hold on a member's own key is not written when the member cannot be marked", async () => {
    const own = await gw.call('POST', '/api/key', { cookie: env.bob, body: { name: 'own' } });
    expect(own.status).toBe(200);
    await refuseMarkChanges(true);
    const held = await env.put(env.admin, own.body.data.id, { rpm_limit: 1 });
    expect(held.status).toBe(500);
    const row = (await bobKeys()).find((k) => k.id === own.body.data.id);
    expect(row).toMatchObject({ id: own.body.data.id, admin_hold: 0, rpm_limit: null });
    expect(await bobMark()).toBe(0);
    await refuseMarkChanges(false);
    expect((await env.put(env.admin, own.body.data.id, { rpm_limit: 1 })).status).toBe(200);
    expect(await bobMark()).toBe(1);
  });
});

describe('a hand-back racing a hold of another key of the same user', () => {
  it('never leaves a held key on an unmarked user', async () => {
    for (let i = 0; i < 12; i++) {
      const u = await gw.call('POST', '/api/user', {
        cookie: env.root,
        body: { username: `race${i}`, password: 'race-pass-1' },
      });
      const userId = u.body.data.id as number;
      const held = await gw.call('POST', '/api/key', {
        cookie: env.admin,
        body: { name: 'held', user_id: userId, rpm_limit: 3 },
      });
      const free = await gw.call('POST', '/api/key', {
        cookie: env.admin,
        body: { name: 'free', user_id: userId, admin_managed: false },
      });
      const [back, hold] = await Promise.all([
        env.put(env.admin, held.body.data.id, { admin_managed: false }),
        env.put(env.root, free.body.data.id, { rpm_limit: 5 }),
      ]);
      expect([back.status, hold.status]).toEqual([200, 200]);
      const user = await db()
        .selectFrom('users')
        .select('keys_admin_managed')
        .where('id', '=', userId)
        .executeTakeFirstOrThrow();
      expect(user.keys_admin_managed, `round ${i}`).toBe(1);
    }
  });
});
