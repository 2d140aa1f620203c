import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

// `GET /api/key?ids=...`: the console's Usage page names the keys of its chart with it, asking
// only for the keys that have usage instead of paging through every key.
let gw: TestGateway;
let rootCookie: string;
let userCookie: string;
const rootKeys: number[] = [];
let userKey: number;

beforeAll(async () => {
  gw = await startTestGateway();
  rootCookie = await gw.login();
  for (const name of ['first', 'second', 'third']) {
    const r = await gw.call('POST', '/api/key', { cookie: rootCookie, body: { name } });
    rootKeys.push(r.body.data.id);
  }
  await gw.call('POST', '/api/user', {
    cookie: rootCookie,
    body: { username: 'ids-user', password: 'ids-password' },
  });
  userCookie = await gw.login('ids-user', 'ids-password');
  userKey = (await gw.call('POST', '/api/key', { cookie: userCookie, body: { name: 'users own' } })).body.data
    .id;
});
afterAll(async () => gw?.close());

const names = (body: { data: { name: string }[] }) => body.data.map((k) => k.name).sort();

describe('GET /api/key?ids=', () => {
  it('lists only the keys asked for, each once, leaving out unknown ids', async () => {
    const r = await gw.call('GET', `/api/key?ids=${rootKeys[0]},${rootKeys[2]},${rootKeys[0]},999999`, {
      cookie: rootCookie,
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, message: '', total: 2 });
    expect(names(r.body)).toEqual(['first', 'third']);
    expect(JSON.stringify(r.body)).not.toMatch(/"key"|key_hash/);
  });

  it("gives an admin any user's keys, and a user only their own", async () => {
    const ids = [...rootKeys, userKey].join(',');
    const asRoot = await gw.call('GET', `/api/key?ids=${ids}&page_size=100`, { cookie: rootCookie });
    expect(names(asRoot.body)).toEqual(['first', 'second', 'third', 'users own']);
    const asUser = await gw.call('GET', `/api/key?ids=${ids}`, { cookie: userCookie });
    expect(asUser.status).toBe(200);
    expect(asUser.body.total).toBe(1);
    expect(names(asUser.body)).toEqual(['users own']);
    // With user_id, both filters apply.
    const narrowed = await gw.call('GET', `/api/key?ids=${ids}&user_id=1`, { cookie: rootCookie });
    expect(names(narrowed.body)).toEqual(['first', 'second', 'third']);
  });

  it('pages the keys asked for like any list', async () => {
    const r = await gw.call('GET', `/api/key?ids=${rootKeys.join(',')}&p=1&page_size=2`, {
      cookie: rootCookie,
    });
    expect(r.body.total).toBe(3);
    expect(names(r.body)).toEqual(['first']);
  });

  it('takes up to 100 ids', async () => {
    const ids = Array.from({ length: 100 }, (_, i) => i + 1).join(',');
    const r = await gw.call('GET', `/api/key?ids=${ids}&page_size=100`, { cookie: rootCookie });
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(4);
  });

  it('refuses anything but 1 to 100 plain ids with a 400 naming ids', async () => {
    const tooMany = Array.from({ length: 101 }, (_, i) => i + 1).join(',');
    for (const query of [
      'ids=',
      'ids=abc',
      'ids=0',
      'ids=-1',
      'ids=1,,2',
      'ids=1,',
      'ids=1.5',
      'ids=0x1',
      'ids=1e2',
      'ids=%201',
      'ids=01',
      'ids=2147483648',
      'ids=99999999999999999999',
      `ids=${tooMany}`,
      'ids=1&ids=2',
    ]) {
      const r = await gw.call('GET', `/api/key?${query}`, { cookie: rootCookie });
      expect(r.status, query).toBe(400);
      expect(r.body.success, query).toBe(false);
      expect(r.body.message, query).toMatch(/^ids: /);
      expect(Object.keys(r.body).sort(), query).toEqual(['message', 'success']);
    }
  });

  it('asks for a session like the rest of the list', async () => {
    const r = await gw.call('GET', `/api/key?ids=${rootKeys[0]}`);
    expect(r.status).toBe(401);
    expect(r.body.success).toBe(false);
  });
});
