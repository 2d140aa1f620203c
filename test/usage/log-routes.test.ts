import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../../src/gateway/usage/request-log-entry.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let root: string;
let alice: string;
let aliceId: number;
let bobId: number;

const DAY = 86_400;
const D0 = 19_700 * DAY; // a UTC midnight

beforeAll(async () => {
  gw = await startTestGateway({}, { redis: false });
  root = await gw.login();
  for (const name of ['alice', 'bob']) {
    const r = await gw.call('POST', '/api/user', {
      cookie: root,
      body: { username: name, password: 'password-123' },
    });
    expect(r.status).toBe(200);
    if (name === 'alice') aliceId = r.body.data.id;
    else bobId = r.body.data.id;
  }
  alice = await gw.login('alice', 'password-123');
  const base = { endpoint: 'chat.completions', provider: 'fake', status: 200 } as const;
  const entries: RequestLogEntry[] = [
    {
      ...base,
      created_time: D0 + 10,
      request_id: 'a1',
      user_id: aliceId,
      key_id: 11,
      model: 'm1',
      prompt_tokens: 10,
      completion_tokens: 5,
      cost_micros: 1_500,
    },
    {
      ...base,
      created_time: D0 + 20,
      request_id: 'a2',
      user_id: aliceId,
      key_id: 12,
      model: 'm2',
      prompt_tokens: 1,
      completion_tokens: 2,
      cost_micros: 250,
    },
    {
      ...base,
      created_time: D0 + DAY + 5,
      request_id: 'a3',
      user_id: aliceId,
      key_id: 11,
      model: 'm1',
      prompt_tokens: 100,
      completion_tokens: 50,
      cost_micros: 20_000,
      stream: true,
      ttft_ms: 42,
    },
    {
      ...base,
      created_time: D0 + DAY + 6,
      request_id: 'a4',
      user_id: aliceId,
      key_id: 11,
      model: 'm1',
      status: 502,
      error_kind: 'server_error',
      attempts: [{ channel_id: 1, error_kind: 'server_error' }],
    },
    {
      ...base,
      created_time: D0 + 30,
      request_id: 'b1',
      user_id: bobId,
      key_id: 21,
      model: 'm1',
      prompt_tokens: 7,
      completion_tokens: 3,
      cost_micros: 999_999,
    },
  ];
  for (const e of entries) gw.services.requestLogs.record(e);
  await gw.services.requestLogs.flush();
});
afterAll(async () => gw?.close());

const ids = (body: any) => body.data.map((r: any) => r.request_id);

describe('GET /api/log', () => {
  it('admin sees every user, newest first, cost in USD', async () => {
    const r = await gw.call('GET', '/api/log', { cookie: root });
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    expect(r.body.total).toBe(5);
    expect(ids(r.body)).toEqual(['a4', 'a3', 'b1', 'a2', 'a1']);
    const a3 = r.body.data[1];
    expect(a3).toMatchObject({
      user_id: aliceId,
      key_id: 11,
      model: 'm1',
      cost: 0.02,
      stream: true,
      ttft_ms: 42,
    });
    expect(r.body.data[0]).toMatchObject({
      status: 502,
      error_kind: 'server_error',
      attempts: [{ channel_id: 1, error_kind: 'server_error' }],
    });
    const bob = await gw.call('GET', `/api/log?user_id=${bobId}`, { cookie: root });
    expect(ids(bob.body)).toEqual(['b1']);
    expect(bob.body.data[0].cost).toBe(0.999999);
  });

  it('a user sees only their own and may not ask for another user', async () => {
    const r = await gw.call('GET', '/api/log', { cookie: alice });
    expect(r.body.total).toBe(4);
    expect(ids(r.body)).toEqual(['a4', 'a3', 'a2', 'a1']);
    expect((await gw.call('GET', `/api/log?user_id=${aliceId}`, { cookie: alice })).body.total).toBe(4);
    const other = await gw.call('GET', `/api/log?user_id=${bobId}`, { cookie: alice });
    expect(other.status).toBe(403);
    expect(other.body.success).toBe(false);
    // A key of another user filters to nothing, not to their logs.
    expect((await gw.call('GET', '/api/log?key_id=21', { cookie: alice })).body.total).toBe(0);
    expect((await gw.call('GET', '/api/log')).status).toBe(401);
  });

  it('filters by model, key, status and time, and pages', async () => {
    const q = async (qs: string) => ids((await gw.call('GET', `/api/log?${qs}`, { cookie: root })).body);
    expect(await q('model=m2')).toEqual(['a2']);
    expect(await q('key_id=11')).toEqual(['a4', 'a3', 'a1']);
    expect(await q('status=502')).toEqual(['a4']);
    expect(await q(`from=${D0 + 20}&to=${D0 + 30}`)).toEqual(['b1', 'a2']);
    expect(await q(`from=${D0 + DAY}`)).toEqual(['a4', 'a3']);
    expect(await q('model=m1&key_id=11&status=200')).toEqual(['a3', 'a1']);
    const page = await gw.call('GET', '/api/log?p=1&page_size=2', { cookie: root });
    expect(page.body.total).toBe(5);
    expect(ids(page.body)).toEqual(['b1', 'a2']);
  });

  it('answers 400 for bad numbers', async () => {
    for (const qs of [
      'p=-1',
      'page_size=0',
      'page_size=101',
      'from=abc',
      'to=1.5',
      'key_id=x',
      'status=abc',
      `from=${D0 + 5}&to=${D0}`,
    ]) {
      const r = await gw.call('GET', `/api/log?${qs}`, { cookie: root });
      expect(r.status, qs).toBe(400);
      expect(r.body.success, qs).toBe(false);
    }
  });
});

describe('GET /api/log/stats', () => {
  it('groups by UTC day with exact totals', async () => {
    const r = await gw.call('GET', '/api/log/stats?group=day', { cookie: root });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual([
      { bucket: D0, requests: 3, prompt_tokens: 18, completion_tokens: 10, cost: 1.001749 },
      { bucket: D0 + DAY, requests: 2, prompt_tokens: 100, completion_tokens: 50, cost: 0.02 },
    ]);
  });

  it('groups by model and key; a user sees only their own', async () => {
    const byModel = await gw.call('GET', '/api/log/stats?group=model', { cookie: alice });
    expect(byModel.body.data).toEqual([
      { bucket: 'm1', requests: 3, prompt_tokens: 110, completion_tokens: 55, cost: 0.0215 },
      { bucket: 'm2', requests: 1, prompt_tokens: 1, completion_tokens: 2, cost: 0.00025 },
    ]);
    const byKey = await gw.call('GET', '/api/log/stats?group=key', { cookie: root });
    expect(byKey.body.data).toEqual([
      { bucket: 11, requests: 3, prompt_tokens: 110, completion_tokens: 55, cost: 0.0215 },
      { bucket: 12, requests: 1, prompt_tokens: 1, completion_tokens: 2, cost: 0.00025 },
      { bucket: 21, requests: 1, prompt_tokens: 7, completion_tokens: 3, cost: 0.999999 },
    ]);
    const ranged = await gw.call('GET', `/api/log/stats?group=day&from=${D0 + DAY}&to=${D0 + 2 * DAY}`, {
      cookie: alice,
    });
    expect(ranged.body.data).toEqual([
      { bucket: D0 + DAY, requests: 2, prompt_tokens: 100, completion_tokens: 50, cost: 0.02 },
    ]);
    expect((await gw.call('GET', `/api/log/stats?user_id=${bobId}`, { cookie: alice })).status).toBe(403);
    const bob = await gw.call('GET', `/api/log/stats?group=model&user_id=${bobId}`, { cookie: root });
    expect(bob.body.data).toEqual([
      { bucket: 'm1', requests: 1, prompt_tokens: 7, completion_tokens: 3, cost: 0.999999 },
    ]);
  });

  it('answers 400 for an unknown group or bad numbers', async () => {
    for (const qs of ['group=week', 'group=', 'from=yesterday', 'to=-5']) {
      const r = await gw.call('GET', `/api/log/stats?${qs}`, { cookie: root });
      expect(r.status, qs).toBe(400);
      expect(r.body.success, qs).toBe(false);
    }
    const r = await gw.call('GET', '/api/log/stats?group=week', { cookie: root });
    expect(r.body.message).toContain('group');
  });
});

describe('GET /api/log names', () => {
  it("names each row's user and key beside their ids, null once deleted or absent", async () => {
    const upd = await gw.call('PUT', '/api/user/self', { cookie: alice, body: { display_name: 'Alice A.' } });
    expect(upd.status).toBe(200);
    const made = async (name: string) => {
      const r = await gw.call('POST', '/api/key', { cookie: alice, body: { name } });
      expect(r.status).toBe(200);
      return r.body.data.id as number;
    };
    const kept = await made('laptop');
    const gone = await made('old phone');
    const base = { endpoint: 'chat.completions', provider: 'fake', status: 200, model: 'm-named' } as const;
    const rows: [string, number | null, number | null][] = [
      ['n1', aliceId, kept],
      ['n2', aliceId, gone],
      ['n3', aliceId, null],
      ['n4', 999_999, 999_998],
    ];
    rows.forEach(([request_id, user_id, key_id], i) => {
      gw.services.requestLogs.record({ ...base, created_time: D0 - 100 + i, request_id, user_id, key_id });
    });
    await gw.services.requestLogs.flush();
    expect((await gw.call('DELETE', `/api/key/${gone}`, { cookie: alice })).status).toBe(200);

    const r = await gw.call('GET', '/api/log?model=m-named', { cookie: root });
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(4);
    const by = Object.fromEntries(r.body.data.map((d: any) => [d.request_id, d]));
    expect(ids(r.body)).toEqual(['n4', 'n3', 'n2', 'n1']);
    expect(by.n1).toMatchObject({
      user_id: aliceId,
      username: 'alice',
      user_display_name: 'Alice A.',
      key_id: kept,
      key_name: 'laptop',
    });
    expect(by.n2).toMatchObject({ key_id: gone, key_name: null, username: 'alice' });
    expect(by.n3).toMatchObject({ key_id: null, key_name: null, username: 'alice' });
    expect(by.n4).toMatchObject({
      user_id: 999_999,
      username: null,
      user_display_name: null,
      key_id: 999_998,
      key_name: null,
    });
    // Paging still picks rows newest first before naming them.
    const p = await gw.call('GET', '/api/log?model=m-named&p=1&page_size=2', { cookie: root });
    expect(ids(p.body)).toEqual(['n2', 'n1']);
    expect(p.body.data[1].key_name).toBe('laptop');
  });
});
