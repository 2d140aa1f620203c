import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role, Status } from '../../src/access/roles.js';
import { UserService } from '../../src/access/users.js';
import { CredentialsRepo } from '../../src/store/credentials-repo.js';
import { openDatabase } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { UsersRepo } from '../../src/store/users-repo.js';
import { createTestDatabase } from '../helpers/databases.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Disabling a user ends their sessions: before, a disabled user's requests were refused, but the
 * session cookies they had worked again once they were enabled again. Access tokens and API keys
 * are credentials of their own (as with a new password) and resume. Two instances on one database
 * (and one Redis under test:pg), the disable made through one of them.
 */
let a: TestGateway;
let b: TestGateway;
let root: string;
beforeAll(async () => {
  a = await startTestGateway();
  b = await startTestGateway({}, { databaseUrl: a.databaseUrl });
  root = await a.login();
}, 60_000);
afterAll(async () => {
  await b?.stop();
  await a?.close();
});

/** Polls `check` until it holds, for at most 3 s (another instance's cache lives at most 1 s). */
async function eventually(check: () => Promise<boolean>): Promise<boolean> {
  const until = Date.now() + 3000;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('disabling a user', () => {
  it('ends their sessions on every instance; access tokens and API keys resume when enabled again', async () => {
    const u = await a.call('POST', '/api/user', {
      cookie: root,
      body: { username: 'carol', password: 'carol-pass' },
    });
    const id = u.body.data.id as number;
    const onA = await a.login('carol', 'carol-pass');
    const onB = await b.login('carol', 'carol-pass');
    const token = (await a.call('POST', '/api/user/tokens', { cookie: onA, body: { name: 'ci' } })).body.data
      .token as string;
    const key = (await a.call('POST', '/api/key', { cookie: onA, body: { name: 'k' } })).body.data
      .key as string;
    const self = (gw: TestGateway, cred: { cookie?: string; token?: string }) =>
      gw.call('GET', '/api/user/self', cred).then((r) => r.status);
    // Every credential works, on both instances (and is in both instances' caches).
    for (const gw of [a, b]) {
      for (const cookie of [onA, onB]) expect(await self(gw, { cookie })).toBe(200);
      expect(await self(gw, { token })).toBe(200);
      expect((await gw.call('GET', '/v1/models', { token: key })).status).toBe(200);
    }

    expect((await a.call('PUT', '/api/user', { cookie: root, body: { id, status: 2 } })).status).toBe(200);
    const sessions = await a.services.database.db
      .selectFrom('sessions')
      .select('id')
      .where('user_id', '=', id)
      .execute();
    expect(sessions).toEqual([]);
    // Another instance may answer from its cache for up to auth.credential_cache_ms (1 s) without
    // Redis, which tells it at once.
    const soon = async (status: () => Promise<number>, want: number) =>
      expect(await eventually(async () => (await status()) === want)).toBe(true);
    const v1 = (gw: TestGateway) => gw.call('GET', '/v1/models', { token: key }).then((r) => r.status);
    for (const gw of [a, b]) {
      for (const cookie of [onA, onB]) await soon(() => self(gw, { cookie }), 401);
      await soon(() => self(gw, { token }), 401);
      await soon(() => v1(gw), 401);
    }

    expect((await a.call('PUT', '/api/user', { cookie: root, body: { id, status: 1 } })).status).toBe(200);
    for (const gw of [a, b]) {
      await soon(() => self(gw, { token }), 200);
      await soon(() => v1(gw), 200);
      for (const cookie of [onA, onB]) expect(await self(gw, { cookie })).toBe(401);
    }
    // Signing in again works.
    expect(await self(b, { cookie: await b.login('carol', 'carol-pass') })).toBe(200);
  });

  it('a change that leaves the user enabled ends no session', async () => {
    const u = await a.call('POST', '/api/user', {
      cookie: root,
      body: { username: 'dan', password: 'dan-pass-1' },
    });
    const cookie = await a.login('dan', 'dan-pass-1');
    const put = await a.call('PUT', '/api/user', {
      cookie: root,
      body: { id: u.body.data.id, status: 1, display_name: 'Dan' },
    });
    expect(put.status).toBe(200);
    expect((await b.call('GET', '/api/user/self', { cookie })).status).toBe(200);
  });
});

describe('a sign-in under way while the user is disabled', () => {
  it('makes no session that outlives the disable', async () => {
    const t = await createTestDatabase();
    const db = openDatabase(t.url);
    try {
      await migrateToLatest(db);
      const users = new UsersRepo(db);
      let service: UserService | undefined;
      let admin: Awaited<ReturnType<UsersRepo['insert']>> | undefined;
      // The disable lands after the password was checked and before the session is written: the
      // ~90 ms of scrypt a sign-in spends between reading the user and writing the session.
      class DisableFirst extends CredentialsRepo {
        override async createSession(hash: string, userId: number, now: number, expires: number) {
          await service!.update(admin!, userId, { status: Status.disabled });
          await super.createSession(hash, userId, now, expires);
        }
      }
      service = new UserService(users, new DisableFirst(db), { sessionTtlHours: 1, cacheMs: 0 });
      await service.bootstrapRoot('root-password-x');
      admin = await users.byUsername('root');
      const eve = await service.create(admin!, { username: 'eve', password: 'eve-pass-1', role: Role.user });
      await expect(service.login('eve', 'eve-pass-1')).rejects.toMatchObject({ status: 403 });
      const left = await db.db.selectFrom('sessions').select('id').where('user_id', '=', eve.id).execute();
      expect(left).toEqual([]);
    } finally {
      await db.close();
      await t.drop();
    }
  });
});
