import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

// PostgreSQL text cannot hold U+0000: stored fields with one used to fail as a 500 there (and
// be stored on SQLite), and a request log row with one blocked every later log and spend write.
let up: FakeUpstream;
let gw: TestGateway;
let cookie: string;
let key: string;
beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/embeddings': {
      json: {
        object: 'list',
        data: [{ object: 'embedding', index: 0, embedding: [0.1] }],
        model: 'e',
        usage: { prompt_tokens: 1, total_tokens: 1 },
      },
    },
  });
  gw = await startTestGateway(
    {
      log: { request_logs_flush_ms: 60_000 },
      channels: [
        {
          name: 'fake',
          kind: 'openai-compatible',
          base_url: `${up.url}/v1`,
          keys: ['k'],
          models: ['acme/small'],
        },
      ],
    },
    { redis: false },
  );
  cookie = await gw.login();
  key = (await gw.call('POST', '/api/key', { cookie, body: { name: 'nul' } })).body.data.key;
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

const refused = (field: string) => ({
  success: false,
  message: `${field}: must not contain NUL (U+0000) characters`,
});

describe('NUL characters', () => {
  it('the management API refuses them with a 400 naming the field, on every backend', async () => {
    const k = await gw.call('POST', '/api/key', { cookie, body: { name: 'a\u0000b' } });
    expect([k.status, k.body]).toEqual([400, refused('name')]);
    const login = await gw.call('POST', '/api/user/login', {
      body: { username: 'root\u0000', password: 'x' },
    });
    expect([login.status, login.body]).toEqual([400, refused('username')]);
    const logs = await gw.call('GET', '/api/log?model=a%00b', { cookie });
    expect([logs.status, logs.body]).toEqual([400, refused('model')]);
    const app = await gw.call('POST', '/api/app', {
      cookie,
      body: { name: 'Nul', description: 'd', category: 'tools', tags: ['ok', 'x\u0000'] },
    });
    expect([app.status, app.body]).toEqual([400, refused('tags[1]')]);
    // Nothing was stored, and the same requests without the NUL still work.
    const keys = await gw.call('GET', '/api/key', { cookie });
    expect(keys.body.data.map((x: { name: string }) => x.name)).toEqual(['nul']);
    expect((await gw.call('POST', '/api/key', { cookie, body: { name: 'ab' } })).status).toBe(200);
  });

  it('credentials are checked first: no session is told about the field', async () => {
    const r = await gw.call('POST', '/api/key', { body: { name: 'a\u0000b' } });
    expect(r.status).toBe(401);
  });

  it('a model name with one is answered as usual and its request log is written', async () => {
    const r = await gw.call('POST', '/v1/embeddings', {
      token: key,
      body: { model: 'nope\u0000x', input: 'hi' },
    });
    expect(r.status).toBe(404);
    const ok = await gw.call('POST', '/v1/embeddings', {
      token: key,
      body: { model: 'acme/small', input: 'hi' },
    });
    expect(ok.status).toBe(200);
    await gw.services.requestLogs.flush();
    expect(gw.services.requestLogs.pending).toBe(0);
    const rows = (await gw.call('GET', '/api/log?page_size=100', { cookie })).body.data;
    expect(rows.map((x: { model: string; status: number }) => [x.model, x.status])).toEqual(
      expect.arrayContaining([
        ['nope\uFFFDx', 404],
        ['acme/small', 200],
      ]),
    );
  });
});

// PostgreSQL's `integer` is 32-bit and `bigint` 64-bit: ids, limits and times past them were a
// 500 there (and a 404 or 200 on SQLite); a quota limit past 2^53 micro-USD a 409 "taken".
describe('integers past their columns', () => {
  it('are a 400 naming the field on every backend', async () => {
    const big = 3_000_000_000;
    const cases: Array<[string, string, unknown, RegExp]> = [
      ['GET', `/api/app/${big}`, undefined, /^id: /],
      ['POST', `/api/app/download/${big}`, undefined, /^id: /],
      ['GET', `/api/key/${big}`, undefined, /^id: /],
      ['GET', `/api/user/${big}`, undefined, /^id: /],
      ['GET', `/api/log?key_id=${big}`, undefined, /^key_id: /],
      ['GET', `/api/key?user_id=${big}`, undefined, /^user_id: /],
      ['POST', '/api/key', { name: 'k', rpm_limit: big }, /^rpm_limit: /],
      ['POST', '/api/key', { name: 'k', expires_time: 1e19 }, /^expires_time: /],
      ['POST', '/api/key', { name: 'k', user_id: big }, /^user_id: /],
      [
        'POST',
        '/api/key',
        { name: 'k', quota_limit: 1e13 },
        /^quota_limit: must be a number from 0 to 9007199254 \(USD\)$/,
      ],
      ['PUT', '/api/key', { id: big, name: 'k' }, /^id: /],
      [
        'POST',
        '/api/user',
        { username: 'fresh1', password: 'password1', quota_limit: 1e13 },
        /^quota_limit: /,
      ],
      ['PUT', '/api/user', { id: 1, quota_limit: 1e13 }, /^quota_limit: /],
      ['POST', '/api/user/tokens', { name: 't', expires_time: 1e19 }, /^expires_time: /],
      ['POST', '/api/channel', { name: 'c', kind: 'openai-compatible', weight: big }, /^weight: /],
    ];
    for (const [method, path, body, message] of cases) {
      const r = await gw.call(method, path, { cookie, body });
      expect([method, path, r.status, r.body.message]).toEqual([
        method,
        path,
        400,
        expect.stringMatching(message),
      ]);
    }
    // The largest allowed values are stored as given.
    const k = await gw.call('POST', '/api/key', {
      cookie,
      body: {
        name: 'max',
        rpm_limit: 2_147_483_647,
        quota_limit: 9_007_199_254,
        expires_time: 253_402_300_799,
      },
    });
    expect(k.status).toBe(200);
    const got = (await gw.call('GET', `/api/key/${k.body.data.id}`, { cookie })).body.data;
    expect(got).toMatchObject({
      rpm_limit: 2_147_483_647,
      quota_limit: 9_007_199_254,
      expires_time: 253_402_300_799,
    });
  });

  it('a taken username is still a 409 on both backends (only unique violations are)', async () => {
    const taken = await gw.call('POST', '/api/user', {
      cookie,
      body: { username: 'root', password: 'password1' },
    });
    expect([taken.status, taken.body.message]).toEqual([409, 'username: "root" is taken']);
  });
});

describe('request content-type', () => {
  const post = (path: string, headers: Record<string, string>, body: string | Uint8Array) =>
    fetch(gw.url + path, { method: 'POST', headers, body }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as any,
    }));
  const json = JSON.stringify({ model: 'acme/small', messages: [{ role: 'user', content: 'x' }] });

  it('a body that is not application/json is a 415 saying what to send, in each envelope', async () => {
    const auth = { authorization: `Bearer ${key}` };
    const chat = await post('/v1/chat/completions', { ...auth, 'content-type': 'text/plain' }, json);
    expect(chat).toEqual({
      status: 415,
      body: {
        error: {
          code: 415,
          message: 'content-type: must be application/json (got text/plain)',
          type: 'invalid_request_error',
          param: null,
          metadata: {},
        },
      },
    });
    const form = await post(
      '/v1/embeddings',
      { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
      'model=acme%2Fsmall&input=x',
    );
    expect(form.status).toBe(415);
    expect(form.body.error.message).toBe(
      'content-type: must be application/json (got application/x-www-form-urlencoded)',
    );
    // No content-type at all (fetch sends none for bytes).
    const bare = await post('/v1/chat/completions', auth, new TextEncoder().encode(json));
    expect(bare.status).toBe(415);
    expect(bare.body.error.message).toBe('content-type: must be application/json (got none)');

    const api = await post(
      '/api/key',
      { cookie, 'content-type': 'text/plain;charset=UTF-8' },
      '{"name":"x"}',
    );
    expect(api).toEqual({
      status: 415,
      body: { success: false, message: 'content-type: must be application/json (got text/plain)' },
    });
  });

  it('an empty text/plain body is still no body', async () => {
    const other = await gw.login();
    const out = await fetch(`${gw.url}/api/user/logout`, {
      method: 'POST',
      headers: { cookie: other, 'content-type': 'text/plain' },
      body: '',
    });
    expect(out.status).toBe(200);
  });
});
