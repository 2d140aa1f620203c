import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * docs/configuration.md (request bodies): a request that sends `Content-Type: application/json`
 * with no body (what a script or HTTP client configured with that header on every call sends
 * for a DELETE) has no body, as an empty text/plain one has. The routes that take none answer
 * as without the header; those that need one say which field is missing, where both answered
 * `Body cannot be empty when content-type is set to 'application/json'`, naming nothing.
 */
let gw: TestGateway;
let cookie: string;
const JSON_TYPE = { 'content-type': 'application/json' };

beforeAll(async () => {
  gw = await startTestGateway({}, { redis: false });
  cookie = await gw.login();
});
afterAll(async () => gw?.close());

describe('an empty application/json body is no body', () => {
  it('deletes an API key, an access token and a user, and signs out', async () => {
    const key = await gw.call('POST', '/api/key', { cookie, body: { name: 'to delete' } });
    const token = await gw.call('POST', '/api/user/tokens', { cookie, body: { name: 'to delete' } });
    const user = await gw.call('POST', '/api/user', {
      cookie,
      body: { username: 'to-delete', password: 'password-1234' },
    });
    expect([key.status, token.status, user.status]).toEqual([200, 200, 200]);

    for (const path of [
      `/api/key/${key.body.data.id}`,
      `/api/user/tokens/${token.body.data.id}`,
      `/api/user/${user.body.data.id}`,
    ]) {
      const r = await gw.call('DELETE', path, { cookie, headers: JSON_TYPE });
      expect({ path, status: r.status, body: r.body }).toEqual({
        path,
        status: 200,
        body: { success: true, message: '', data: null },
      });
    }
    expect((await gw.call('GET', `/api/key/${key.body.data.id}`, { cookie })).status).toBe(404);

    const session = await gw.login();
    const out = await gw.call('POST', '/api/user/logout', { cookie: session, headers: JSON_TYPE });
    expect(out.status).toBe(200);
    expect((await gw.call('GET', '/api/user/self', { cookie: session })).status).toBe(401);
  });

  it('a route that needs a body names it, on /api and /v1', async () => {
    const api = await gw.call('POST', '/api/key', { cookie, headers: JSON_TYPE });
    expect(api.status).toBe(400);
    expect(api.body).toEqual({ success: false, message: 'body: must be object' });

    const made = await gw.call('POST', '/api/key', { cookie, body: { name: 'v1' } });
    const v1 = await gw.call('POST', '/v1/chat/completions', {
      headers: { ...JSON_TYPE, authorization: `Bearer ${made.body.data.key}` },
    });
    expect(v1.status).toBe(400);
    expect(v1.body.error).toMatchObject({ code: 400, message: 'body: must be object', param: 'body' });
  });
});
