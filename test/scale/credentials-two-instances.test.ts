/**
 * Two gateway instances on one database (and one Redis under `npm run test:pg`): a credential
 * ended through one is refused by the other within the credential cache's second, whichever
 * way it ends (a revoked access token, a disabled user, a new password, a deleted key, a
 * hand-back's lifted mark), and a user's disable stops their API keys on both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { model, oaCompletion } from '../chat/chat-helpers.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let up: FakeUpstream;
let gw1: TestGateway;
let gw2: TestGateway;
let root: string;

const KEY_PREFIX = `creds2:${process.pid}:${Date.now()}:`;
const overrides = () => ({
  channels: [
    { name: 'up', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: ['acme/m'] },
  ],
  models: [model('acme/m')],
  gateway: { discover_models: false },
  redis: { key_prefix: KEY_PREFIX },
});

beforeAll(async () => {
  up = await startFakeUpstream({ 'POST /v1/chat/completions': { json: oaCompletion('hi') } });
  gw1 = await startTestGateway(overrides());
  gw2 = await startTestGateway(overrides(), { databaseUrl: gw1.databaseUrl });
  root = await gw1.login();
});
afterAll(async () => {
  await gw2?.close();
  await gw1?.close();
  await up?.close();
});

let n = 0;
/** A new user on gw1, signed in on gw2, with an access token and an API key. */
async function member() {
  const username = `m${++n}`;
  const u = await gw1.call('POST', '/api/user', {
    cookie: root,
    body: { username, password: 'member-pass-1' },
  });
  expect(u.status).toBe(200);
  const session = await gw2.login(username, 'member-pass-1');
  const token = await gw2.call('POST', '/api/user/tokens', { cookie: session, body: { name: 't' } });
  const key = await gw2.call('POST', '/api/key', { cookie: session, body: { name: 'k' } });
  expect([token.status, key.status]).toEqual([200, 200]);
  return {
    id: u.body.data.id as number,
    session,
    token: token.body.data.token as string,
    tokenId: token.body.data.id as number,
    key: key.body.data.key as string,
    keyId: key.body.data.id as number,
  };
}

const self = (gw: TestGateway, auth: { cookie?: string; token?: string }) =>
  gw.call('GET', '/api/user/self', auth);
const chat = (gw: TestGateway, key: string) =>
  gw.call('POST', '/v1/chat/completions', {
    token: key,
    body: { model: 'acme/m', messages: [{ role: 'user', content: 'x' }] },
  });

/** Polls `probe` on gw2 until it answers `status`; fails when that takes over 1.5 s. */
async function refusedWithinASecond(probe: () => Promise<{ status: number }>, status = 401): Promise<void> {
  const start = Date.now();
  for (;;) {
    const r = await probe();
    if (r.status === status) return;
    expect(Date.now() - start, `still ${r.status} after ${Date.now() - start} ms`).toBeLessThan(1500);
    await new Promise((res) => setTimeout(res, 25));
  }
}

describe('credentials ended through one instance', () => {
  it('a revoked access token and a deleted key stop on the other', async () => {
    const m = await member();
    expect((await self(gw2, { token: m.token })).status).toBe(200);
    expect((await chat(gw2, m.key)).status).toBe(200);
    expect((await gw1.call('DELETE', `/api/user/tokens/${m.tokenId}`, { token: m.token })).status).toBe(200);
    await refusedWithinASecond(() => self(gw2, { token: m.token }));
    expect((await gw1.call('DELETE', `/api/key/${m.keyId}`, { cookie: root })).status).toBe(200);
    await refusedWithinASecond(() => chat(gw2, m.key));
  });

  it("a disabled user's session, token and keys stop on the other, and the session stays ended when enabled again", async () => {
    const m = await member();
    expect((await self(gw2, { cookie: m.session })).status).toBe(200);
    expect((await chat(gw2, m.key)).status).toBe(200);
    const off = await gw1.call('PUT', '/api/user', { cookie: root, body: { id: m.id, status: 2 } });
    expect(off.status).toBe(200);
    await refusedWithinASecond(() => self(gw2, { cookie: m.session }));
    await refusedWithinASecond(() => self(gw2, { token: m.token }));
    await refusedWithinASecond(() => chat(gw2, m.key));
    expect((await gw1.call('PUT', '/api/user', { cookie: root, body: { id: m.id, status: 1 } })).status).toBe(
      200,
    );
    // Token and key resume (credentials of their own); the session was ended by the disable.
    await refusedWithinASecond(() => self(gw2, { token: m.token }), 200);
    await refusedWithinASecond(() => chat(gw2, m.key), 200);
    expect((await self(gw2, { cookie: m.session })).status).toBe(401);
    expect((await self(gw1, { cookie: m.session })).status).toBe(401);
  });

  it('a new password set by an admin ends the sessions made on the other', async () => {
    const m = await member();
    expect((await self(gw2, { cookie: m.session })).status).toBe(200);
    const pw = await gw1.call('PUT', '/api/user', {
      cookie: root,
      body: { id: m.id, password: 'another-pass-2' },
    });
    expect(pw.status).toBe(200);
    await refusedWithinASecond(() => self(gw2, { cookie: m.session }));
  });

  it('a hand-back on one instance lets the member make keys on the other at once', async () => {
    const m = await member();
    const held = await gw1.call('POST', '/api/key', {
      cookie: root,
      body: { name: 'held', user_id: m.id, rpm_limit: 1 },
    });
    expect(held.status).toBe(200);
    expect((await gw2.call('POST', '/api/key', { cookie: m.session, body: { name: 'own' } })).status).toBe(
      403,
    );
    const back = await gw1.call('PUT', '/api/key', {
      cookie: root,
      body: { id: held.body.data.id, admin_managed: false },
    });
    expect(back.status).toBe(200);
    expect((await gw2.call('POST', '/api/key', { cookie: m.session, body: { name: 'own' } })).status).toBe(
      200,
    );
  });
});
