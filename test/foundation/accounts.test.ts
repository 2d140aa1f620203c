import { randomBytes, scryptSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_PASSWORD, startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let rootCookie: string;

beforeAll(async () => {
  gw = await startTestGateway();
  rootCookie = await gw.login();
});
afterAll(async () => gw?.close());

describe('sign-in and sessions', () => {
  it('root logs in with MODELGATE_ROOT_PASSWORD and gets an HttpOnly SameSite=Strict cookie', async () => {
    const res = await fetch(`${gw.url}/api/user/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'root', password: ROOT_PASSWORD }),
    });
    expect(res.status).toBe(200);
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ success: true, message: '', data: { username: 'root', role: 100 } });
    expect(body.data.password_hash).toBeUndefined();
  });

  it('rejects a wrong password with 401 in the envelope', async () => {
    const r = await gw.call('POST', '/api/user/login', { body: { username: 'root', password: 'nope-nope' } });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ success: false, message: 'invalid username or password' });
  });

  it('answers self for a session and 401 without one', async () => {
    expect((await gw.call('GET', '/api/user/self', { cookie: rootCookie })).body.data.username).toBe('root');
    const anon = await gw.call('GET', '/api/user/self');
    expect(anon.status).toBe(401);
    expect(anon.body.success).toBe(false);
  });

  it('logout ends the session', async () => {
    const c = await gw.login();
    expect((await gw.call('POST', '/api/user/logout', { cookie: c })).status).toBe(200);
    expect((await gw.call('GET', '/api/user/self', { cookie: c })).status).toBe(401);
  });

  it('stores default_model in the user settings and changes the password only with the current one', async () => {
    await gw.call('POST', '/api/user', {
      cookie: rootCookie,
      body: { username: 'settings', password: 'password-1' },
    });
    const c = await gw.login('settings', 'password-1');
    const r = await gw.call('PUT', '/api/user/self', {
      cookie: c,
      body: { default_model: 'openai/gpt-4o-mini' },
    });
    expect(r.body.data.default_model).toBe('openai/gpt-4o-mini');
    const bad = await gw.call('PUT', '/api/user/self', { cookie: c, body: { password: 'password-2' } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('current_password: required to change the password');
    const wrong = await gw.call('PUT', '/api/user/self', {
      cookie: c,
      body: { password: 'password-2', current_password: 'password-x' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toBe('current_password: does not match');
    const good = await gw.call('PUT', '/api/user/self', {
      cookie: c,
      body: { password: 'password-2', current_password: 'password-1' },
    });
    expect(good.status).toBe(200);
    await gw.login('settings', 'password-2');
    const noRole = await gw.call('PUT', '/api/user/self', { cookie: c, body: { role: 100 } });
    expect(noRole.status).toBe(400);
    expect(noRole.body.message).toContain('role');
  });

  it('upgrades a password hash made with the former, cheaper scrypt cost at sign-in', async () => {
    await gw.call('POST', '/api/user', {
      cookie: rootCookie,
      body: { username: 'oldhash', password: 'password-1' },
    });
    const users = gw.services.repos.users;
    const user = (await users.byUsername('oldhash'))!;
    // The same password hashed as before the cost was raised (N = 2^14).
    const salt = randomBytes(16);
    const old = scryptSync('password-1', salt, 32, { N: 16384, r: 8, p: 1 });
    await users.update(user.id, {
      password_hash: `scrypt$16384$8$1$${salt.toString('base64')}$${old.toString('base64')}`,
    });
    const wrong = await gw.call('POST', '/api/user/login', {
      body: { username: 'oldhash', password: 'password-2' },
    });
    expect(wrong.status).toBe(401);
    expect((await users.byUsername('oldhash'))!.password_hash).toMatch(/^scrypt\$16384\$/);
    await gw.login('oldhash', 'password-1');
    expect((await users.byUsername('oldhash'))!.password_hash).toMatch(/^scrypt\$32768\$8\$1\$/);
    await gw.login('oldhash', 'password-1');
  });
});

describe('roles', () => {
  it('root creates an admin; an admin cannot create or promote a root', async () => {
    const a = await gw.call('POST', '/api/user', {
      cookie: rootCookie,
      body: { username: 'alice', password: 'alice-pass', role: 10 },
    });
    expect(a.status).toBe(200);
    expect(a.body.data.role).toBe(10);
    const adminCookie = await gw.login('alice', 'alice-pass');
    const r = await gw.call('POST', '/api/user', {
      cookie: adminCookie,
      body: { username: 'r2', password: 'r2-password', role: 100 },
    });
    expect(r.status).toBe(403);
    const u = await gw.call('POST', '/api/user', {
      cookie: adminCookie,
      body: { username: 'bob', password: 'bob-password' },
    });
    expect(u.status).toBe(200);
    const promote = await gw.call('PUT', '/api/user', {
      cookie: adminCookie,
      body: { id: u.body.data.id, role: 100 },
    });
    expect(promote.status).toBe(403);
    const touchRoot = await gw.call('PUT', '/api/user', { cookie: adminCookie, body: { id: 1, status: 2 } });
    expect(touchRoot.status).toBe(403);
  });

  it('only root makes admins: an admin creates and promotes users only, since admins cannot manage their peers', async () => {
    await gw.call('POST', '/api/user', {
      cookie: rootCookie,
      body: { username: 'peeradmin', password: 'peeradmin-pass', role: 10 },
    });
    const admin = await gw.login('peeradmin', 'peeradmin-pass');
    const peer = await gw.call('POST', '/api/user', {
      cookie: admin,
      body: { username: 'peer2', password: 'peer2-password', role: 10 },
    });
    expect(peer.status).toBe(403);
    expect(peer.body.message).toBe('only root can create or promote an admin');
    const u = await gw.call('POST', '/api/user', {
      cookie: admin,
      body: { username: 'peer3', password: 'peer3-password' },
    });
    expect(u.status).toBe(200);
    const promote = await gw.call('PUT', '/api/user', {
      cookie: admin,
      body: { id: u.body.data.id, role: 10 },
    });
    expect(promote.status).toBe(403);
    // Its role as it is, sent back by a form, is no change.
    const same = await gw.call('PUT', '/api/user', {
      cookie: admin,
      body: { id: u.body.data.id, role: 1, display_name: 'Peer 3' },
    });
    expect(same.status).toBe(200);
    expect((await gw.call('GET', `/api/user/${u.body.data.id}`, { cookie: rootCookie })).body.data.role).toBe(
      1,
    );
  });

  it("an admin's change or delete of a user promoted meanwhile to their rank is refused by the write itself", async () => {
    await gw.call('POST', '/api/user', {
      cookie: rootCookie,
      body: { username: 'raceadmin', password: 'raceadmin-pass', role: 10 },
    });
    const admin = await gw.login('raceadmin', 'raceadmin-pass');
    const target = await gw.call('POST', '/api/user', {
      cookie: rootCookie,
      body: { username: 'racetarget', password: 'racetarget-pass' },
    });
    const id = target.body.data.id as number;
    // Root promotes the target between the admin's read of it and the admin's write.
    const repo = (gw.services.users as unknown as { users: { byId(id: number): Promise<unknown> } }).users;
    const byId = repo.byId;
    const staleThenPromote = (): void => {
      repo.byId = async (n: number) => {
        if (n !== id) return byId.call(repo, n);
        repo.byId = byId;
        const stale = await byId.call(repo, n);
        await gw.call('PUT', '/api/user', { cookie: rootCookie, body: { id, role: 10 } });
        return stale;
      };
    };
    try {
      staleThenPromote();
      const put = await gw.call('PUT', '/api/user', { cookie: admin, body: { id, status: 2 } });
      expect(put.status).toBe(403);
      await gw.call('PUT', '/api/user', { cookie: rootCookie, body: { id, role: 1 } });
      staleThenPromote();
      const del = await gw.call('DELETE', `/api/user/${id}`, { cookie: admin });
      expect(del.status).toBe(403);
    } finally {
      repo.byId = byId;
    }
    const stored = (await gw.call('GET', `/api/user/${id}`, { cookie: rootCookie })).body.data;
    expect(stored).toMatchObject({ role: 10, status: 1 });
  });

  it('a plain user gets 403 on admin routes', async () => {
    await gw.call('POST', '/api/user', {
      cookie: rootCookie,
      body: { username: 'plain', password: 'plain-pass' },
    });
    const c = await gw.login('plain', 'plain-pass');
    for (const [m, p] of [
      ['GET', '/api/user'],
      ['POST', '/api/user'],
      ['PUT', '/api/user'],
      ['DELETE', '/api/user/1'],
    ] as const) {
      const r = await gw.call(m, p, {
        cookie: c,
        body: m === 'GET' || m === 'DELETE' ? undefined : { username: 'x', password: 'xxxxxxxx' },
      });
      expect(r.status, `${m} ${p}`).toBe(403);
    }
  });

  it('nobody can demote or disable the last root', async () => {
    expect(
      (await gw.call('PUT', '/api/user', { cookie: rootCookie, body: { id: 1, role: 10 } })).status,
    ).toBe(409);
    expect(
      (await gw.call('PUT', '/api/user', { cookie: rootCookie, body: { id: 1, status: 2 } })).status,
    ).toBe(409);
  });

  it('nobody deletes their own account: a 403 (not allowed), not a conflict', async () => {
    const r = await gw.call('DELETE', '/api/user/1', { cookie: rootCookie });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ success: false, message: 'you cannot delete your own account' });
    expect((await gw.call('GET', '/api/user/self', { cookie: rootCookie })).status).toBe(200);
  });

  it('a disabled user is locked out at once, sessions and tokens alike', async () => {
    const u = await gw.call('POST', '/api/user', {
      cookie: rootCookie,
      body: { username: 'carol', password: 'carol-pass' },
    });
    const c = await gw.login('carol', 'carol-pass');
    const t = await gw.call('POST', '/api/user/tokens', { cookie: c, body: { name: 'ci' } });
    const token = t.body.data.token as string;
    expect((await gw.call('GET', '/api/user/self', { token })).status).toBe(200);
    await gw.call('PUT', '/api/user', { cookie: rootCookie, body: { id: u.body.data.id, status: 2 } });
    expect((await gw.call('GET', '/api/user/self', { cookie: c })).status).toBe(401);
    // The token is told why: it works again when the user is enabled again, as an API key does.
    const byToken = await gw.call('GET', '/api/user/self', { token });
    expect(byToken.status).toBe(401);
    expect(byToken.body.message).toBe('the owner of this access token is disabled');
    // The right password of a disabled user is a 403 (known, not allowed); a wrong one stays a 401.
    const disabled = await gw.call('POST', '/api/user/login', {
      body: { username: 'carol', password: 'carol-pass' },
    });
    expect(disabled.status).toBe(403);
    expect(disabled.body.message).toBe('user is disabled');
    expect(
      (await gw.call('POST', '/api/user/login', { body: { username: 'carol', password: 'wrong-pass' } }))
        .status,
    ).toBe(401);
  });

  it('a new password ends every other session of the user (the one that changed it stays); tokens stay', async () => {
    const u = await gw.call('POST', '/api/user', {
      cookie: rootCookie,
      body: { username: 'dave', password: 'dave-pass-1' },
    });
    const laptop = await gw.login('dave', 'dave-pass-1');
    const phone = await gw.login('dave', 'dave-pass-1');
    const t = await gw.call('POST', '/api/user/tokens', { cookie: laptop, body: { name: 'ci' } });
    const token = t.body.data.token as string;
    const changed = await gw.call('PUT', '/api/user/self', {
      cookie: laptop,
      body: { password: 'dave-pass-2', current_password: 'dave-pass-1' },
    });
    expect(changed.status).toBe(200);
    expect((await gw.call('GET', '/api/user/self', { cookie: laptop })).status).toBe(200);
    expect((await gw.call('GET', '/api/user/self', { cookie: phone })).status).toBe(401);
    expect((await gw.call('GET', '/api/user/self', { token })).status).toBe(200);
    // A profile change without a new password ends nothing.
    const again = await gw.login('dave', 'dave-pass-2');
    await gw.call('PUT', '/api/user/self', { cookie: laptop, body: { display_name: 'Dave' } });
    expect((await gw.call('GET', '/api/user/self', { cookie: again })).status).toBe(200);
    // An admin's reset ends all of them.
    const reset = await gw.call('PUT', '/api/user', {
      cookie: rootCookie,
      body: { id: u.body.data.id, password: 'dave-pass-3' },
    });
    expect(reset.status).toBe(200);
    expect((await gw.call('GET', '/api/user/self', { cookie: laptop })).status).toBe(401);
    expect((await gw.call('GET', '/api/user/self', { cookie: again })).status).toBe(401);
    expect((await gw.call('GET', '/api/user/self', { cookie: rootCookie })).status).toBe(200);
  });

  it("below root, an admin's own role, status, quota and password are not theirs to change through PUT /api/user", async () => {
    const a = await gw.call('POST', '/api/user', {
      cookie: rootCookie,
      body: { username: 'erin', password: 'erin-pass-1', role: 10, quota_limit: 10 },
    });
    const id = a.body.data.id as number;
    const erin = await gw.login('erin', 'erin-pass-1');
    for (const [body, field] of [
      [{ quota_limit: null }, 'quota_limit'],
      [{ quota_limit: 1000 }, 'quota_limit'],
      [{ status: 2 }, 'status'],
      [{ role: 1 }, 'role'],
      [{ password: 'erin-pass-2' }, 'password'],
    ] as const) {
      const r = await gw.call('PUT', '/api/user', { cookie: erin, body: { id, ...body } });
      expect(r.status, JSON.stringify(body)).toBe(403);
      expect(r.body.message).toContain(field);
    }
    // The same values, as the console's form sends them, and her own profile fields are fine.
    const same = await gw.call('PUT', '/api/user', {
      cookie: erin,
      body: { id, role: 10, status: 1, quota_limit: 10, display_name: 'Erin' },
    });
    expect(same.status).toBe(200);
    expect(same.body.data).toMatchObject({ display_name: 'Erin', quota_limit: 10 });
    // Root may change all of it.
    const root = await gw.call('PUT', '/api/user', { cookie: rootCookie, body: { id, quota_limit: null } });
    expect(root.status).toBe(200);
  });

  it('lists users with paging', async () => {
    const r = await gw.call('GET', '/api/user?p=0&page_size=2', { cookie: rootCookie });
    expect(r.body.data).toHaveLength(2);
    expect(r.body.total).toBeGreaterThan(2);
    expect((await gw.call('GET', '/api/user?page_size=0', { cookie: rootCookie })).status).toBe(400);
    expect((await gw.call('GET', '/api/user?p=-1', { cookie: rootCookie })).status).toBe(400);
  });

  it('finds users by a literal part of the username, whatever its case, on every database', async () => {
    for (const username of ['john_doe', 'JohnXdoe', 'jo.hn@x'])
      await gw.call('POST', '/api/user', { cookie: rootCookie, body: { username, password: 'pass-word' } });
    const names = async (keyword: string) =>
      (
        await gw.call('GET', `/api/user?keyword=${encodeURIComponent(keyword)}&page_size=100`, {
          cookie: rootCookie,
        })
      ).body.data.map((u: { username: string }) => u.username);
    // `_` is a username character, not LIKE's any-character wildcard.
    expect(await names('john_doe')).toEqual(['john_doe']);
    expect(await names('n_d')).toEqual(['john_doe']);
    expect((await names('JOHN')).sort()).toEqual(['JohnXdoe', 'john_doe']);
    expect(await names('xdoe')).toEqual(['JohnXdoe']);
    expect(await names('o.h')).toEqual(['jo.hn@x']);
    // `%` and `\` match themselves, so nothing here.
    expect(await names('%')).toEqual([]);
    expect(await names('\\')).toEqual([]);
    const all = await gw.call('GET', '/api/user?keyword=&page_size=100', { cookie: rootCookie });
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(all.body.data.length);
  });

  it('deletes users; a missing id is 404', async () => {
    const u = await gw.call('POST', '/api/user', {
      cookie: rootCookie,
      body: { username: 'temp', password: 'temp-pass' },
    });
    expect((await gw.call('DELETE', `/api/user/${u.body.data.id}`, { cookie: rootCookie })).status).toBe(200);
    expect((await gw.call('DELETE', `/api/user/${u.body.data.id}`, { cookie: rootCookie })).status).toBe(404);
  });

  it('updating an unknown user id is a 404', async () => {
    const r = await gw.call('PUT', '/api/user', {
      cookie: rootCookie,
      body: { id: 999_999, display_name: 'nobody' },
    });
    expect(r.status).toBe(404);
    expect(r.body.success).toBe(false);
  });
});

describe('access tokens', () => {
  it('are shown once, listed without the secret, and revocable', async () => {
    const t = await gw.call('POST', '/api/user/tokens', { cookie: rootCookie, body: { name: 'script' } });
    expect(t.body.data.token).toMatch(/^mgt-/);
    const list = await gw.call('GET', '/api/user/tokens', { cookie: rootCookie });
    expect(JSON.stringify(list.body)).not.toContain(t.body.data.token);
    expect((await gw.call('GET', '/api/user', { token: t.body.data.token })).status).toBe(200);
    await gw.call('DELETE', `/api/user/tokens/${t.body.data.id}`, { cookie: rootCookie });
    expect((await gw.call('GET', '/api/user', { token: t.body.data.token })).status).toBe(401);
  });

  it('keys and tokens say when they last authenticated a request (to the minute)', async () => {
    const k = await gw.call('POST', '/api/key', { cookie: rootCookie, body: { name: 'used' } });
    const t = await gw.call('POST', '/api/user/tokens', { cookie: rootCookie, body: { name: 'used' } });
    const keyRow = async () =>
      (await gw.call('GET', '/api/key?page_size=100', { cookie: rootCookie })).body.data.find(
        (x: any) => x.id === k.body.data.id,
      );
    const tokenRow = async () =>
      (await gw.call('GET', '/api/user/tokens', { cookie: rootCookie })).body.data.find(
        (x: any) => x.id === t.body.data.id,
      );
    expect((await keyRow()).last_used_time).toBeNull();
    expect((await tokenRow()).last_used_time).toBeNull();
    const before = Math.floor(Date.now() / 1000);
    expect((await gw.call('GET', '/v1/models', { token: k.body.data.key })).status).toBe(200);
    expect((await gw.call('GET', '/api/user/self', { token: t.body.data.token })).status).toBe(200);
    let key: any;
    let token: any;
    for (let i = 0; i < 50; i++) {
      [key, token] = [await keyRow(), await tokenRow()];
      if (key.last_used_time && token.last_used_time) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(key.last_used_time).toBeGreaterThanOrEqual(before);
    expect(token.last_used_time).toBeGreaterThanOrEqual(before);
    // A use is not a change.
    expect(key.updated_time).toBe(k.body.data.updated_time);
  });

  it('an API key is never a management credential', async () => {
    const k = await gw.call('POST', '/api/key', { cookie: rootCookie, body: { name: 'k' } });
    const r = await gw.call('GET', '/api/user/self', { token: k.body.data.key });
    expect(r.status).toBe(401);
  });

  it("deleting an unknown token id, or another user's token, is a 404", async () => {
    const unknown = await gw.call('DELETE', '/api/user/tokens/999999', { cookie: rootCookie });
    expect(unknown.status).toBe(404);
    expect(unknown.body.success).toBe(false);
    await gw.call('POST', '/api/user', {
      cookie: rootCookie,
      body: { username: 'tokenowner', password: 'tokenowner-pass' },
    });
    const other = await gw.login('tokenowner', 'tokenowner-pass');
    const t = await gw.call('POST', '/api/user/tokens', { cookie: rootCookie, body: { name: 'not-theirs' } });
    expect((await gw.call('DELETE', `/api/user/tokens/${t.body.data.id}`, { cookie: other })).status).toBe(
      404,
    );
    expect((await gw.call('GET', '/api/user/self', { token: t.body.data.token })).status).toBe(200);
  });

  it('an access token sent to /v1 is told that /v1 needs an API key', async () => {
    const t = await gw.call('POST', '/api/user/tokens', { cookie: rootCookie, body: { name: 'mixup' } });
    const r = await gw.call('GET', '/v1/models', { token: t.body.data.token });
    expect(r.status).toBe(401);
    expect(r.body.error).toMatchObject({
      code: 401,
      type: 'authentication_error',
      message:
        'access tokens (mgt-...) are for /api calls; /v1 needs an API key: Authorization: Bearer sk-...',
    });
    // Any other unknown secret keeps the plain answer.
    const other = await gw.call('GET', '/v1/models', { token: 'sk-not-a-key' });
    expect(other.body.error.message).toBe('invalid API key');
  });
});

describe('API keys on /v1', () => {
  it('a key authenticates /v1 and is refused at once after being disabled, expired or deleted', async () => {
    const k = await gw.call('POST', '/api/key', { cookie: rootCookie, body: { name: 'v1' } });
    expect(k.body.data.key).toMatch(/^sk-[A-Za-z0-9]{48}$/);
    const key = k.body.data.key as string;
    const list = await gw.call('GET', '/api/key', { cookie: rootCookie });
    expect(JSON.stringify(list.body)).not.toContain(key);
    expect((await gw.call('GET', '/v1/models', { token: key })).status).toBe(200);
    // Any case and spacing the scheme allows (the usual "Bearer <key>" takes a shortcut).
    for (const authorization of [`bearer ${key}`, `Bearer   ${key}  `, `BEARER\t${key}`])
      expect((await gw.call('GET', '/v1/models', { headers: { authorization } })).status).toBe(200);
    for (const authorization of [`Bearer ${key}x`, `Bearer`, `Basic ${key}`])
      expect((await gw.call('GET', '/v1/models', { headers: { authorization } })).status).toBe(401);
    await gw.call('PUT', '/api/key', { cookie: rootCookie, body: { id: k.body.data.id, status: 2 } });
    const refused = await gw.call('GET', '/v1/models', { token: key });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe(401);
    await gw.call('PUT', '/api/key', { cookie: rootCookie, body: { id: k.body.data.id, status: 1 } });
    expect((await gw.call('GET', '/v1/models', { token: key })).status).toBe(200);
    await gw.call('PUT', '/api/key', { cookie: rootCookie, body: { id: k.body.data.id, expires_time: 1 } });
    expect((await gw.call('GET', '/v1/models', { token: key })).status).toBe(401);
    const listed = await gw.call('GET', `/api/key/${k.body.data.id}`, { cookie: rootCookie });
    expect(listed.body.data.status).toBe(3);
    await gw.call('DELETE', `/api/key/${k.body.data.id}`, { cookie: rootCookie });
    expect((await gw.call('GET', '/v1/models', { token: key })).status).toBe(401);
  });

  it("a user manages only their own keys; an admin sees everyone's", async () => {
    await gw.call('POST', '/api/user', {
      cookie: rootCookie,
      body: { username: 'keyowner', password: 'keyowner-pass' },
    });
    const c = await gw.login('keyowner', 'keyowner-pass');
    const mine = await gw.call('POST', '/api/key', { cookie: c, body: { name: 'mine', quota_limit: 1.5 } });
    expect(mine.body.data).toMatchObject({ quota_limit: 1.5, quota_used: 0, status: 1 });
    const rootKey = await gw.call('POST', '/api/key', { cookie: rootCookie, body: { name: 'roots' } });
    expect((await gw.call('GET', `/api/key/${rootKey.body.data.id}`, { cookie: c })).status).toBe(404);
    expect((await gw.call('DELETE', `/api/key/${rootKey.body.data.id}`, { cookie: c })).status).toBe(404);
    const own = await gw.call('GET', '/api/key', { cookie: c });
    expect(own.body.data.map((k: { name: string }) => k.name)).toEqual(['mine']);
    const all = await gw.call('GET', '/api/key', { cookie: rootCookie });
    expect(all.body.total).toBeGreaterThan(own.body.total);
    // Another user's keys: a plain user is told no, as for logs, rather than shown their own.
    const others = await gw.call('GET', '/api/key?user_id=1', { cookie: c });
    expect(others.status).toBe(403);
    expect((await gw.call('GET', `/api/key?user_id=${mine.body.data.user_id}`, { cookie: c })).status).toBe(
      200,
    );
  });

  it('an admin manages the keys of users below them, not of root or other admins', async () => {
    await gw.call('POST', '/api/user', {
      cookie: rootCookie,
      body: { username: 'keyadmin', password: 'keyadmin-pass', role: 10 },
    });
    const u = await gw.call('POST', '/api/user', {
      cookie: rootCookie,
      body: { username: 'keyuser', password: 'keyuser-pass' },
    });
    const admin = await gw.login('keyadmin', 'keyadmin-pass');
    const rootKey = await gw.call('POST', '/api/key', { cookie: rootCookie, body: { name: 'root-only' } });
    const id = rootKey.body.data.id;
    // Seen, not changed: the rule user management applies to root itself.
    expect((await gw.call('GET', `/api/key/${id}`, { cookie: admin })).status).toBe(200);
    expect((await gw.call('PUT', '/api/key', { cookie: admin, body: { id, status: 2 } })).status).toBe(403);
    expect((await gw.call('DELETE', `/api/key/${id}`, { cookie: admin })).status).toBe(403);
    const forRoot = await gw.call('POST', '/api/key', { cookie: admin, body: { name: 'x', user_id: 1 } });
    expect(forRoot.status).toBe(403);
    expect((await gw.call('GET', `/api/key/${id}`, { cookie: rootCookie })).body.data.status).toBe(1);
    // A user below the admin: created, changed and deleted.
    const k = await gw.call('POST', '/api/key', {
      cookie: admin,
      body: { name: 'for-user', user_id: u.body.data.id },
    });
    expect(k.status).toBe(200);
    const kid = k.body.data.id;
    expect((await gw.call('PUT', '/api/key', { cookie: admin, body: { id: kid, status: 2 } })).status).toBe(
      200,
    );
    expect((await gw.call('DELETE', `/api/key/${kid}`, { cookie: admin })).status).toBe(200);
  });

  it('a key or token cannot be created already expired; an update may expire a key at once', async () => {
    const past = Math.floor(Date.now() / 1000) - 10;
    const k = await gw.call('POST', '/api/key', {
      cookie: rootCookie,
      body: { name: 'old', expires_time: past },
    });
    expect(k.status).toBe(400);
    expect(k.body.message).toContain('expires_time');
    const t = await gw.call('POST', '/api/user/tokens', {
      cookie: rootCookie,
      body: { name: 'old', expires_time: past },
    });
    expect(t.status).toBe(400);
    expect(t.body.message).toContain('expires_time');
    const future = past + 3600;
    const ok = await gw.call('POST', '/api/key', {
      cookie: rootCookie,
      body: { name: 'new', expires_time: future },
    });
    expect(ok.status).toBe(200);
    const expire = await gw.call('PUT', '/api/key', {
      cookie: rootCookie,
      body: { id: ok.body.data.id, expires_time: past },
    });
    expect(expire.status).toBe(200);
    expect(expire.body.data.status).toBe(3);
  });

  it('PUT and DELETE of an unknown key id are a 404', async () => {
    const put = await gw.call('PUT', '/api/key', { cookie: rootCookie, body: { id: 999_999, status: 2 } });
    expect(put.status).toBe(404);
    expect(put.body.success).toBe(false);
    const del = await gw.call('DELETE', '/api/key/999999', { cookie: rootCookie });
    expect(del.status).toBe(404);
    expect(del.body.success).toBe(false);
  });
});

describe('bad input', () => {
  it('malformed JSON is a 400 in the envelope', async () => {
    const r = await gw.call('POST', '/api/user/login', { rawBody: '{"username": ' });
    expect(r.status).toBe(400);
    expect(r.body.success).toBe(false);
    expect(r.body.message).toMatch(/JSON/);
  });

  it('wrong types name the field', async () => {
    const r = await gw.call('POST', '/api/user', {
      cookie: rootCookie,
      body: { username: 'x', password: 12345678 },
    });
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('password');
  });

  it('a key allow-list names a model: an empty list or a blank entry is a 400 (null allows every model)', async () => {
    for (const [allowed, field] of [
      [[], 'allowed_models'],
      [[' '], 'allowed_models.0'],
      [['acme/a', '  '], 'allowed_models.1'],
    ] as const) {
      const r = await gw.call('POST', '/api/key', {
        cookie: rootCookie,
        body: { name: 'k', allowed_models: allowed },
      });
      expect(r.status, JSON.stringify(allowed)).toBe(400);
      expect(r.body.message).toContain(field);
    }
    const k = await gw.call('POST', '/api/key', {
      cookie: rootCookie,
      body: { name: 'k', allowed_models: [' acme/a ', 'acme/a'] },
    });
    expect(k.body.data.allowed_models).toEqual(['acme/a']);
    const emptied = await gw.call('PUT', '/api/key', {
      cookie: rootCookie,
      body: { id: k.body.data.id, allowed_models: [] },
    });
    expect(emptied.status).toBe(400);
    const all = await gw.call('PUT', '/api/key', {
      cookie: rootCookie,
      body: { id: k.body.data.id, allowed_models: null },
    });
    expect(all.body.data.allowed_models).toBeNull();
  });

  it('unknown fields are a 400', async () => {
    const r = await gw.call('POST', '/api/user', {
      cookie: rootCookie,
      body: { username: 'xx', password: '12345678', admin: true },
    });
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('admin');
  });

  it('a body over the limit is a 413', async () => {
    const big = 'x'.repeat(11 * 1024 * 1024);
    const r = await gw.call('POST', '/api/user/login', {
      rawBody: JSON.stringify({ username: big, password: 'x' }),
    });
    expect(r.status).toBe(413);
    expect(r.body.success).toBe(false);
  });

  it('unknown routes are a 404 with a request id header', async () => {
    const r = await gw.call('GET', '/api/nope');
    expect(r.status).toBe(404);
    expect(r.headers.get('x-request-id')).toBeTruthy();
  });
});

describe('operations', () => {
  it('serves health, readiness and the OpenAPI document', async () => {
    expect((await gw.call('GET', '/healthz')).status).toBe(200);
    const ready = await gw.call('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.checks.database).toBe('ok');
    const doc = await gw.call('GET', '/openapi.json');
    expect(doc.body.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.body.paths)).toContain('/api/user/login');
    // Each authenticated operation names its credential; public ones name none.
    const user = [{ session: [] }, { accessToken: [] }];
    const paths = doc.body.paths;
    expect(paths['/api/channel'].post.security).toEqual(user);
    // Answers carry `source`, which decides whether an edit lasts; the document says so.
    expect(paths['/api/channel'].get.description).toMatch(/source: "api" .*"config" .*"env"/);
    expect(paths['/api/key'].get.security).toEqual(user);
    expect(paths['/api/log/stats'].get.security).toEqual(user);
    expect(paths['/api/app'].post.security).toEqual(user);
    expect(paths['/v1/models'].get.security).toEqual([{ apiKey: [] }]);
    expect(paths['/v1/chat/completions'].post.security).toEqual([{ apiKey: [] }]);
    expect(paths['/api/app'].get.security).toBeUndefined();
    expect(paths['/api/user/login'].post.security).toBeUndefined();
    expect((await fetch(`${gw.url}/docs`)).status).toBe(200);
  });

  it('echoes a valid x-request-id', async () => {
    const r = await gw.call('GET', '/healthz', { headers: { 'x-request-id': 'abc-123' } });
    expect(r.headers.get('x-request-id')).toBe('abc-123');
  });
});
