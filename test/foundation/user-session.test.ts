import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_REDIS_URL } from '../helpers/databases.js';
import { ROOT_PASSWORD, startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({}, { redis: false });
});
afterAll(async () => gw?.close());

describe('GET /api/user/session', () => {
  it('answers 200 with data null when signed out, where /api/user/self answers 401', async () => {
    const r = await gw.call('GET', '/api/user/session');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, data: null });
    const ended = await gw.call('GET', '/api/user/session', { cookie: 'mg_session=not-a-session' });
    expect(ended.status).toBe(200);
    expect(ended.body.data).toBeNull();
    expect((await gw.call('GET', '/api/user/self')).status).toBe(401);
  });

  it('answers the user as /api/user/self does when signed in, and 401 for a bad token', async () => {
    const cookie = await gw.login();
    const self = await gw.call('GET', '/api/user/self', { cookie });
    const r = await gw.call('GET', '/api/user/session', { cookie });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual(self.body.data);
    expect(r.body.data.username).toBe('root');
    await gw.call('POST', '/api/user/logout', { cookie });
    expect((await gw.call('GET', '/api/user/session', { cookie })).body.data).toBeNull();
    const bad = await gw.call('GET', '/api/user/session', { token: 'mgt-nope' });
    expect(bad.status).toBe(401);
  });
});

describe('sign-out', () => {
  const cookieAttributes = (setCookie: string) =>
    setCookie
      .split(';')
      .slice(1)
      .map((a) => a.trim().toLowerCase())
      .filter((a) => !a.startsWith('expires=') && !a.startsWith('max-age='))
      .sort();

  it('clears the cookie with the attributes it was set with (HttpOnly, SameSite=Strict)', async () => {
    const login = await gw.call('POST', '/api/user/login', {
      body: { username: 'root', password: ROOT_PASSWORD },
    });
    const set = login.headers.get('set-cookie')!;
    const out = await gw.call('POST', '/api/user/logout', { cookie: set.split(';')[0]! });
    const cleared = out.headers.get('set-cookie')!;
    expect(cleared).toMatch(/^mg_session=;/);
    expect(cookieAttributes(cleared)).toEqual(cookieAttributes(set));
    expect(cookieAttributes(cleared)).toEqual(['httponly', 'path=/', 'samesite=strict']);
    // Signed out already (no cookie): cleared the same way.
    const again = await gw.call('POST', '/api/user/logout');
    expect(cookieAttributes(again.headers.get('set-cookie')!)).toEqual(cookieAttributes(set));
  });

  it('behind a trusted TLS proxy, clears it Secure as it was set', async () => {
    const proxied = await startTestGateway({ server: { trust_proxy: '127.0.0.1' } }, { redis: false });
    try {
      const headers = { 'x-forwarded-proto': 'https' };
      const login = await proxied.call('POST', '/api/user/login', {
        body: { username: 'root', password: ROOT_PASSWORD },
        headers,
      });
      const set = login.headers.get('set-cookie')!;
      expect(cookieAttributes(set)).toContain('secure');
      const out = await proxied.call('POST', '/api/user/logout', { cookie: set.split(';')[0]!, headers });
      expect(cookieAttributes(out.headers.get('set-cookie')!)).toEqual(cookieAttributes(set));
    } finally {
      await proxied.close();
    }
  });
});

describe('sign-in attempts per client address', () => {
  it('past auth.login_rate_per_minute: 429 with Retry-After, right password or wrong; X-Forwarded-For is not believed', async () => {
    const limited = await startTestGateway({ auth: { login_rate_per_minute: 3 } }, { redis: false });
    try {
      const attempt = (password: string, headers: Record<string, string> = {}) =>
        limited.call('POST', '/api/user/login', { body: { username: 'root', password }, headers });
      expect((await attempt('wrong-one')).status).toBe(401);
      expect((await attempt('wrong-two')).status).toBe(401);
      expect((await attempt(ROOT_PASSWORD)).status).toBe(200);
      const refused = await attempt(ROOT_PASSWORD);
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({
        success: false,
        message: expect.stringContaining('3 attempts a minute'),
        metadata: { scope: 'login_ip', limit: 3 },
      });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // Without server.trust_proxy the header is the client's word, not its address.
      expect((await attempt(ROOT_PASSWORD, { 'x-forwarded-for': '203.0.113.9' })).status).toBe(429);
    } finally {
      await limited.close();
    }
  });

  it('with server.trust_proxy naming the proxy, each forwarded client has its own allowance', async () => {
    const limited = await startTestGateway(
      { auth: { login_rate_per_minute: 1 }, server: { trust_proxy: '127.0.0.1' } },
      { redis: false },
    );
    try {
      const attempt = (ip: string) =>
        limited.call('POST', '/api/user/login', {
          body: { username: 'root', password: 'wrong-pass' },
          headers: { 'x-forwarded-for': ip },
        });
      expect((await attempt('203.0.113.1')).status).toBe(401);
      expect((await attempt('203.0.113.1')).status).toBe(429);
      expect((await attempt('203.0.113.2')).status).toBe(401);
    } finally {
      await limited.close();
    }
  });

  it.skipIf(!TEST_REDIS_URL)('is shared by the instances on one Redis (docs/scaling.md)', async () => {
    // A Redis namespace of this run's own: the allowance of 127.0.0.1 must not carry over.
    const redis = {
      url: TEST_REDIS_URL,
      key_prefix: `mg-login-${process.pid}-${Math.random().toString(36).slice(2, 8)}:`,
    };
    const config = { auth: { login_rate_per_minute: 3 }, redis };
    const a = await startTestGateway(config, { redis: true });
    const b = await startTestGateway(config, { redis: true, databaseUrl: a.databaseUrl });
    try {
      const attempt = (gw: TestGateway, password: string) =>
        gw.call('POST', '/api/user/login', { body: { username: 'root', password } });
      const first = await attempt(a, 'wrong-one');
      expect(first.status).toBe(401);
      expect(first.headers.get('x-ratelimit-limit')).toBe('3');
      expect((await attempt(b, 'wrong-two')).status).toBe(401);
      expect((await attempt(a, ROOT_PASSWORD)).status).toBe(200);
      const refused = await attempt(b, ROOT_PASSWORD);
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ success: false });
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    } finally {
      await b.stop();
      await a.close();
    }
  });
});

describe('ended sessions', () => {
  it('are deleted by a sign-in (at most once an hour per instance), live ones kept', async () => {
    const fresh = await startTestGateway({}, { redis: false });
    try {
      const { credentials } = fresh.services.repos;
      await credentials.createSession('ended-1', 1, 1_000, 2_000);
      await credentials.createSession('ended-2', 1, 1_000, 2_000);
      const ids = async () =>
        (await fresh.services.database.db.selectFrom('sessions').select('id').execute()).map((r) => r.id);
      expect(await ids()).toEqual(expect.arrayContaining(['ended-1', 'ended-2']));
      const cookie = await fresh.login();
      const left = await ids();
      expect(left).not.toContain('ended-1');
      expect(left).not.toContain('ended-2');
      expect(left).toHaveLength(1);
      expect((await fresh.call('GET', '/api/user/self', { cookie })).status).toBe(200);
    } finally {
      await fresh.close();
    }
  });
});
