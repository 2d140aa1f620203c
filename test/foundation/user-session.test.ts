import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

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
