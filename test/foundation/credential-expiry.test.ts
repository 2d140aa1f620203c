import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * docs/configuration.md, "Credentials": an access token, a session and an API key are refused
 * from the second of their `expires_time` on, also while a request made in the second before
 * left them in the credential cache (`auth.credential_cache_ms`, 1 s). The clock is the test's
 * (Date only): the cache and the expiry read the same one.
 */
let gw: TestGateway;
let cookie: string;
const HOUR = 3600;

beforeAll(async () => {
  gw = await startTestGateway(
    { auth: { session_ttl_hours: 1, credential_cache_ms: 1000 } },
    { redis: false },
  );
  cookie = await gw.login();
});
afterAll(async () => gw?.close());
afterEach(() => {
  vi.useRealTimers();
});

const seconds = () => Math.floor(Date.now() / 1000);
/** The clock `ms` milliseconds after the start of second `s`. */
const at = (s: number, ms = 0) => vi.setSystemTime(s * 1000 + ms);

describe('a credential is refused from its expiry on, cached or not', () => {
  it('an access token used half a second before its expiry is refused at it', async () => {
    const expires = seconds() + 60;
    const made = await gw.call('POST', '/api/user/tokens', {
      cookie,
      body: { name: 'expiring', expires_time: expires },
    });
    expect(made.status).toBe(200);
    const token = made.body.data.token;
    vi.useFakeTimers({ toFake: ['Date'] });
    at(expires - 1, 500);
    expect((await gw.call('GET', '/api/user/self', { token })).status).toBe(200);
    at(expires);
    const refused = await gw.call('GET', '/api/user/self', { token });
    expect(refused.status).toBe(401);
    expect(refused.body.message).toBe('invalid or revoked access token');
  });

  it('a session used half a second before its end is refused at it', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const start = seconds() + 10;
    at(start);
    const session = await gw.login();
    const ends = start + HOUR;
    at(ends - 1, 500);
    expect((await gw.call('GET', '/api/user/self', { cookie: session })).status).toBe(200);
    at(ends);
    expect((await gw.call('GET', '/api/user/self', { cookie: session })).status).toBe(401);
    expect((await gw.call('GET', '/api/user/session', { cookie: session })).body.data).toBeNull();
  });

  it('an API key used half a second before its expiry is refused at it (as before)', async () => {
    const expires = seconds() + 60;
    const made = await gw.call('POST', '/api/key', {
      cookie,
      body: { name: 'expiring', expires_time: expires },
    });
    expect(made.status).toBe(200);
    const headers = { authorization: `Bearer ${made.body.data.key}` };
    vi.useFakeTimers({ toFake: ['Date'] });
    at(expires - 1, 500);
    expect((await gw.call('GET', '/v1/models', { headers })).status).toBe(200);
    at(expires);
    const refused = await gw.call('GET', '/v1/models', { headers });
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toBe('API key has expired');
  });
});
