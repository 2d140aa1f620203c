import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { userWithRole } from '../catalog/catalog-helpers.js';
import { TEST_REDIS_URL } from '../helpers/databases.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/** A Redis namespace of this run's own: the allowance of user 1 must not carry over from another run. */
const prefix = () => `mg-api-write-${process.pid}-${Math.random().toString(36).slice(2, 8)}:`;

async function limited(perMinute: number, more: Record<string, any> = {}, databaseUrl?: string) {
  return startTestGateway(
    { auth: { api_write_rate_per_minute: perMinute }, ...more },
    { redis: more.redis !== undefined, databaseUrl },
  );
}

const newKey = (gw: TestGateway, auth: { cookie?: string; token?: string }, name: string) =>
  gw.call('POST', '/api/key', { ...auth, body: { name } });

describe('writes to /api per user (auth.api_write_rate_per_minute)', () => {
  it('past the limit a write is a 429 in the /api envelope with Retry-After, and changes nothing; reads and /v1 go on', async () => {
    const gw = await limited(3);
    try {
      const cookie = await gw.login();
      const made: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await newKey(gw, { cookie }, `k${i}`);
        expect(r.status).toBe(200);
        expect(r.headers.get('x-ratelimit-limit')).toBe('3');
        made.push(r.body.data.key);
      }
      const refused = await newKey(gw, { cookie }, 'one too many');
      expect(refused.status).toBe(429);
      // Which limit refused, in the shape of /v1's 429s (metadata.scope and limit).
      expect(refused.body).toEqual({
        success: false,
        message: expect.stringContaining('3 a minute per user'),
        metadata: { scope: 'api_write_user', limit: 3 },
      });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
      // Other mutating methods count alike.
      expect((await gw.call('DELETE', '/api/key/1', { cookie })).status).toBe(429);
      // Nothing was created by the refused write; reads are not counted.
      const keys = await gw.call('GET', '/api/key', { cookie });
      expect(keys.status).toBe(200);
      expect(keys.body.data.map((k: { name: string }) => k.name).sort()).toEqual(['k0', 'k1', 'k2']);
      for (let i = 0; i < 5; i++)
        expect((await gw.call('GET', '/api/user/self', { cookie })).status).toBe(200);
      // /v1 is not an /api write, whoever's key it is.
      for (let i = 0; i < 5; i++)
        expect((await gw.call('GET', '/v1/models', { token: made[0]! })).status).toBe(200);
      // Signing out is not held back either.
      expect((await gw.call('POST', '/api/user/logout', { cookie })).status).toBe(200);
    } finally {
      await gw.close();
    }
  });

  it('is per user: their sessions and access tokens share it, another user has their own', async () => {
    const gw = await limited(3);
    try {
      const root = await gw.login();
      // Root's three: a user, an access token, a key.
      const u = await gw.call('POST', '/api/user', {
        cookie: root,
        body: { username: 'writer', password: 'password-123' },
      });
      expect(u.status).toBe(200);
      const t = await gw.call('POST', '/api/user/tokens', { cookie: root, body: { name: 'script' } });
      expect(t.status).toBe(200);
      expect((await newKey(gw, { cookie: root }, 'r')).status).toBe(200);
      // Root's token is root: limited too, and a second session as well.
      expect((await newKey(gw, { token: t.body.data.token }, 'by token')).status).toBe(429);
      expect((await newKey(gw, { cookie: await gw.login() }, 'second session')).status).toBe(429);
      // Another user writes on their own allowance.
      const writer = await gw.login('writer', 'password-123');
      for (let i = 0; i < 3; i++) expect((await newKey(gw, { cookie: writer }, `w${i}`)).status).toBe(200);
      expect((await newKey(gw, { cookie: writer }, 'w3')).status).toBe(429);
    } finally {
      await gw.close();
    }
  });

  it('catalog writes count alike, by session and by access token: past the limit a 429 with Retry-After, nothing changed', async () => {
    const gw = await limited(4);
    try {
      const cookie = await gw.login();
      const token = (await gw.call('POST', '/api/user/tokens', { cookie, body: { name: 'catalog' } })).body
        .data.token as string;
      const made = await gw.call('POST', '/api/app', { token, body: { name: 'First' } });
      expect(made.status).toBe(200);
      const id = made.body.data.id as number;
      const renamed = await gw.call('PUT', '/api/app', { cookie, body: { id, name: 'Renamed' } });
      expect(renamed.status).toBe(200);
      // Each write counted once: the token, the app, the rename, this one.
      const second = await gw.call('POST', '/api/app', { cookie, body: { name: 'Second' } });
      expect(second.status).toBe(200);
      expect(second.headers.get('x-ratelimit-remaining')).toBe('0');

      const refused = [
        await gw.call('POST', '/api/app', { token, body: { name: 'Third' } }),
        await gw.call('PUT', '/api/app', { cookie, body: { id, name: 'Again' } }),
        await gw.call('DELETE', `/api/app/${id}`, { token }),
      ];
      for (const r of refused) {
        expect(r.status).toBe(429);
        expect(r.body).toEqual({
          success: false,
          message: expect.stringContaining('4 a minute per user'),
          metadata: { scope: 'api_write_user', limit: 4 },
        });
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
      const apps = await gw.call('GET', '/api/app', { cookie });
      expect(apps.body.data.map((a: { name: string }) => a.name).sort()).toEqual(['Renamed', 'Second']);
    } finally {
      await gw.close();
    }
  });

  it('a signed-in download counts once, against its user (not the address); an anonymous one against the address only', async () => {
    // The per-address catalog limit is on (10), to show which of the two counts each download.
    const gw = await limited(3, { limits: { catalog_ip_rpm: 10 } });
    try {
      const root = await gw.login();
      const made = await gw.call('POST', '/api/app', {
        cookie: root,
        body: { name: 'Popular', download_url: 'https://example.com/p.zip' },
      });
      const path = `/api/app/download/${made.body.data.id}`;
      // The fan's first write: their access token.
      const fan = await userWithRole(gw, root, 'fan', 1);
      const byCookie = await gw.call('POST', path, { cookie: fan.cookie });
      expect(byCookie.status).toBe(200);
      expect(byCookie.headers.get('x-ratelimit-limit')).toBe('3');
      expect(byCookie.headers.get('x-ratelimit-remaining')).toBe('1');
      const byToken = await gw.call('POST', path, { token: fan.token });
      expect(byToken.status).toBe(200);
      expect(byToken.headers.get('x-ratelimit-remaining')).toBe('0');

      const refused = await gw.call('POST', path, { cookie: fan.cookie });
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({
        success: false,
        message: expect.stringContaining('3 a minute per user'),
        metadata: { scope: 'api_write_user', limit: 3 },
      });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // The fan's other writes share the allowance.
      expect((await newKey(gw, { token: fan.token }, 'k')).status).toBe(429);

      // Anonymous downloads, from the same address, count against the address only; a cookie
      // that signs no one in is anonymous too, not a 401.
      for (const cookie of [undefined, 'mg_session=made-up']) {
        const anon = await gw.call('POST', path, { cookie });
        expect(anon.status).toBe(200);
        expect(anon.headers.get('x-ratelimit-limit')).toBe('10');
      }
      // Past the address's allowance an anonymous download is refused, naming that limit.
      let counted = 2;
      let anonymous = await gw.call('POST', path);
      for (; counted < 12 && anonymous.status === 200; counted++) anonymous = await gw.call('POST', path);
      expect(anonymous.status).toBe(429);
      expect(anonymous.body).toEqual({
        success: false,
        message: expect.stringContaining('10 requests a minute per client address'),
        metadata: { scope: 'ip_rpm', limit: 10 },
      });
      expect(Number(anonymous.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      const downloads = (await gw.call('GET', path.replace('/download', ''), { cookie: root })).body.data
        .download_count;
      // Two by the fan (the refused one not counted), the anonymous ones until the refusal.
      expect(downloads).toBe(2 + counted);
    } finally {
      await gw.close();
    }
  });

  it('0 turns it off', async () => {
    const gw = await limited(0);
    try {
      const cookie = await gw.login();
      for (let i = 0; i < 10; i++) {
        const r = await newKey(gw, { cookie }, `k${i}`);
        expect(r.status).toBe(200);
        expect(r.headers.get('x-ratelimit-limit')).toBeNull();
      }
    } finally {
      await gw.close();
    }
  });

  it('defaults to 120 a minute', () => {
    expect(loadConfig({}, {}).auth.api_write_rate_per_minute).toBe(120);
  });

  it.skipIf(!TEST_REDIS_URL)('is shared by the instances on one Redis', async () => {
    const redis = { url: TEST_REDIS_URL, key_prefix: prefix() };
    const a = await limited(3, { redis });
    const b = await limited(3, { redis }, a.databaseUrl);
    try {
      const cookie = await a.login();
      expect((await newKey(a, { cookie }, 'a1')).status).toBe(200);
      expect((await newKey(b, { cookie }, 'b1')).status).toBe(200);
      expect((await newKey(a, { cookie }, 'a2')).status).toBe(200);
      expect((await newKey(b, { cookie }, 'b2')).status).toBe(429);
    } finally {
      await b.stop();
      await a.close();
    }
  });
});
