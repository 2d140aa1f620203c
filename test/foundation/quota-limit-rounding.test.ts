import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let root: string;
beforeAll(async () => {
  gw = await startTestGateway({}, { redis: false });
  root = await gw.login();
});
afterAll(async () => gw?.close());

/**
 * Quotas are kept in whole micro-dollars: a positive limit below half of one rounded to 0 and
 * made a key that was exhausted (status 4) from its creation, with a 200.
 */
describe('a positive quota_limit that rounds to no micro-dollar', () => {
  it('is a 400 naming the field on keys, created or updated', async () => {
    for (const quota_limit of [1e-9, 0.0000004]) {
      const r = await gw.call('POST', '/api/key', { cookie: root, body: { name: 'tiny', quota_limit } });
      expect(r.status, String(quota_limit)).toBe(400);
      expect(r.body).toEqual({
        success: false,
        message: 'quota_limit: must be 0 or at least 0.000001 (USD)',
      });
    }
    const k = await gw.call('POST', '/api/key', {
      cookie: root,
      body: { name: 'one', quota_limit: 0.000001 },
    });
    expect(k.status).toBe(200);
    expect(k.body.data).toMatchObject({ quota_limit: 0.000001, status: 1 });
    const put = await gw.call('PUT', '/api/key', {
      cookie: root,
      body: { id: k.body.data.id, quota_limit: 1e-9 },
    });
    expect(put.status).toBe(400);
    expect(put.body.message).toContain('quota_limit');
    expect((await gw.call('GET', `/api/key/${k.body.data.id}`, { cookie: root })).body.data.quota_limit).toBe(
      0.000001,
    );
    // 0 is a limit of its own (nothing may be spent), and half a micro-dollar and up rounds to one.
    const zero = await gw.call('POST', '/api/key', { cookie: root, body: { name: 'zero', quota_limit: 0 } });
    expect(zero.body.data).toMatchObject({ quota_limit: 0, status: 4 });
    const half = await gw.call('POST', '/api/key', {
      cookie: root,
      body: { name: 'half', quota_limit: 6e-7 },
    });
    expect(half.body.data).toMatchObject({ quota_limit: 0.000001, status: 1 });
  });

  it("is a 400 naming the field on users' quotas too", async () => {
    const created = await gw.call('POST', '/api/user', {
      cookie: root,
      body: { username: 'tiny', password: 'tiny-pass-1', quota_limit: 1e-9 },
    });
    expect(created.status).toBe(400);
    expect(created.body.message).toBe('quota_limit: must be 0 or at least 0.000001 (USD)');
    const u = await gw.call('POST', '/api/user', {
      cookie: root,
      body: { username: 'tiny', password: 'tiny-pass-1', quota_limit: 1 },
    });
    const put = await gw.call('PUT', '/api/user', {
      cookie: root,
      body: { id: u.body.data.id, quota_limit: 1e-9 },
    });
    expect(put.status).toBe(400);
    expect(put.body.message).toBe('quota_limit: must be 0 or at least 0.000001 (USD)');
    expect(
      (await gw.call('GET', `/api/user/${u.body.data.id}`, { cookie: root })).body.data.quota_limit,
    ).toBe(1);
  });
});
