import { once } from 'node:events';
import { connect } from 'node:net';
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

/** Sends `head` as the raw bytes of a request and returns the status and body the server wrote. */
async function rawRequest(head: Buffer | string): Promise<{ status: number; headers: string; body: any }> {
  const socket = connect(Number(new URL(gw.url).port), '127.0.0.1');
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => {});
  const closed = once(socket, 'close');
  socket.end(head);
  await closed;
  const raw = Buffer.concat(chunks).toString('utf8');
  const [headers = '', body = ''] = raw.split('\r\n\r\n');
  return { status: Number(headers.split(' ')[1]), headers, body: JSON.parse(body) };
}

/** The `/v1` error body (decisions.md "Errors"), its `code` the status as an integer. */
const v1Error = (code: number, message: unknown, param: string | null) => ({
  error: { code, message, type: 'invalid_request_error', param, metadata: {} },
});

// Fastify and Node answered these in their own shapes (`{"error":"Bad Request","code":
// "FST_ERR_BAD_URL",...}`, `{"statusCode":431,...}`): an SDK reading `error.code` as an integer,
// or the console reading `success`/`message`, got neither.
describe('errors raised before a route runs', () => {
  it('a path that does not percent-decode is a 400 in the shape of its family', async () => {
    for (const p of [
      '/api/app/%ff',
      '/api/key/%ff',
      '/api/user/%ff',
      '/api/user/tokens/%ff',
      '/api/channel/%ff',
    ]) {
      const r = await gw.call('GET', p, { cookie });
      expect(r.headers.get('x-content-type-options'), p).toBe('nosniff');
      expect(r.headers.get('x-request-id'), p).toBeTruthy();
      expect([p, r.status, r.body]).toEqual([
        p,
        400,
        {
          success: false,
          message: `url: ${p} is not a valid URL path (a % must start UTF-8 bytes written as %XX)`,
        },
      ]);
    }
    for (const p of ['/v1/models/%ff', '/api/v1/models/%ff']) {
      const r = await gw.call('GET', p, { token: key });
      expect([p, r.status, r.body]).toEqual([
        p,
        400,
        v1Error(400, `url: ${p} is not a valid URL path (a % must start UTF-8 bytes written as %XX)`, 'url'),
      ]);
    }
    const messages = await gw.call('POST', '/v1/messages/%ff', { token: key, body: {} });
    expect([messages.status, messages.body.type, messages.body.error.type]).toEqual([
      400,
      'error',
      'invalid_request_error',
    ]);
  });

  it('an over-long path parameter is the 400 naming it that a short bad one gets', async () => {
    const digits = '9'.repeat(200);
    for (const p of [`/api/app/${digits}`, `/api/key/${digits}`, `/api/app/download/${digits}`]) {
      const r = await gw.call(p.includes('download') ? 'POST' : 'GET', p, { cookie });
      expect([p, r.status, r.body.success, r.body.message]).toEqual([
        p,
        400,
        false,
        expect.stringMatching(/^id: /),
      ]);
    }
    const words = await gw.call('GET', `/api/app/${'x'.repeat(5000)}`);
    expect([words.status, words.body.message]).toEqual([400, expect.stringMatching(/^id: /)]);
  });

  it('a request Node cannot parse gets one JSON body both families read', async () => {
    const tooBig = await rawRequest(
      `GET /api/app HTTP/1.1\r\nHost: gw\r\nx-big: ${'a'.repeat(17 * 1024)}\r\n\r\n`,
    );
    const bigMessage = 'headers: the request line and headers must be at most 16384 bytes';
    expect(tooBig.status).toBe(431);
    expect(tooBig.headers.toLowerCase()).toContain('content-type: application/json');
    expect(tooBig.body).toEqual({
      success: false,
      message: bigMessage,
      ...v1Error(431, bigMessage, null),
    });
    const bytes = Buffer.concat([
      Buffer.from('GET /v1/models/a'),
      Buffer.from([0xff]),
      Buffer.from(' HTTP/1.1\r\nHost: gw\r\n\r\n'),
    ]);
    const bad = await rawRequest(bytes);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      success: false,
      message: expect.stringMatching(/^request: not a valid HTTP\/1\.1 request \(.+\)$/),
      ...v1Error(400, bad.body.message, null),
    });
  });
});

// secure-json-parse refuses them (prototype pollution), and the refusal read "malformed JSON".
describe('a __proto__ key in a JSON body', () => {
  it('is a 400 saying the key is refused, in each family', async () => {
    const app = await gw.call('POST', '/api/app', {
      cookie,
      rawBody: '{"name":"x","__proto__":{"status":2}}',
    });
    expect([app.status, app.body]).toEqual([
      400,
      { success: false, message: 'body: the key "__proto__" is not allowed' },
    ]);
    const chat = await gw.call('POST', '/v1/chat/completions', {
      token: key,
      rawBody: '{"model":"acme/small","messages":[{"role":"user","content":"x","__proto__":{}}]}',
    });
    expect([chat.status, chat.body]).toEqual([
      400,
      v1Error(400, 'messages.0: the key "__proto__" is not allowed', 'messages.0'),
    ]);
    const ctor = await gw.call('POST', '/api/key', {
      cookie,
      rawBody: '{"name":"x","constructor":{"prototype":{}}}',
    });
    expect([ctor.status, ctor.body]).toEqual([
      400,
      { success: false, message: 'body: the key "constructor" must not hold a "prototype"' },
    ]);
    // Malformed JSON still says so.
    const broken = await gw.call('POST', '/api/app', { cookie, rawBody: '{"name":' });
    expect([broken.status, broken.body.message]).toEqual([
      400,
      expect.stringMatching(/^body: malformed JSON/),
    ]);
  });
});
