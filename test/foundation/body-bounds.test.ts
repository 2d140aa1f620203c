import { request as httpRequest } from 'node:http';
import { brotliCompressSync, constants, createGzip, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChatGateway, model, oaCompletion, startChatGateway } from '../chat/chat-helpers.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { ROOT_PASSWORD, startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * A small compressed body must not make the gateway parse megabytes of JSON: a 48-byte brotli
 * body decoding to 10 MiB of `{"x":[{},{},...]}` sent to an anonymous route blocked the event
 * loop for seconds. The management API's bodies are bounded far below the /v1 limits, the routes
 * that take no credentials tighter still, deep bodies are refused before JSON.parse builds them,
 * and /v1 bodies may not expand without bound.
 */
let gw: TestGateway;
let cookie: string;

beforeAll(async () => {
  gw = await startTestGateway({}, { redis: false });
  cookie = await gw.login();
});
afterAll(async () => gw?.close());

/** `{"x":[{},{},...]}`, `bytes` long (give or take one element). */
const wide = (bytes: number) =>
  `{"x":[${Array(Math.floor((bytes - 8) / 3))
    .fill('{}')
    .join(',')}]}`;
const deep = (levels: number) => `{"x":${'['.repeat(levels)}${']'.repeat(levels)}}`;

function send(path: string, body: Buffer, encoding: string, headers: Record<string, string> = {}) {
  return fetch(gw.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-encoding': encoding, ...headers },
    body: new Uint8Array(body),
  });
}

describe('body limits per route (/api)', () => {
  it('a tiny brotli body decoding to megabytes is a 413 on the anonymous routes', async () => {
    const bomb = brotliCompressSync(Buffer.from(wide(2 * 1024 * 1024)));
    expect(bomb.length).toBeLessThan(100);
    for (const path of ['/api/app/download/10', '/api/user/login', '/api/user/logout']) {
      const r = await send(path, bomb, 'br');
      expect(r.status, path).toBe(413);
      expect(await r.json(), path).toEqual({ success: false, message: expect.stringContaining('too large') });
    }
  });

  it('sign-in and download take 64 KiB, plain or compressed', async () => {
    const big = Buffer.from(JSON.stringify({ username: 'root', password: 'x'.repeat(70 * 1024) }));
    const plain = await gw.call('POST', '/api/user/login', { rawBody: big.toString() });
    expect(plain.status).toBe(413);
    expect((await send('/api/app/download/10', gzipSync(big), 'gzip')).status).toBe(413);
  });

  it('the other /api routes take 1 MiB: a channel with 5000 models fits, 2 MiB does not', async () => {
    const models = Array.from({ length: 5000 }, (_, i) => `vendor/model-with-a-long-name-${i}`);
    const ok = await gw.call('POST', '/api/channel', {
      cookie,
      body: { name: 'many-models', kind: 'openai-compatible', keys: ['k'], models },
    });
    expect(ok.status).toBe(200);
    const r = await send('/api/app', gzipSync(Buffer.from(wide(2 * 1024 * 1024))), 'gzip', { cookie });
    expect(r.status).toBe(413);
    expect(((await r.json()) as any).success).toBe(false);
  });

  it('answers 413 while the compressed body is still arriving: nothing past the limit is decoded', async () => {
    // The request is never ended: the answer can only come from a gateway that stopped reading.
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${gw.url}/api/app/download/10`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      });
      req.on('response', (res) => {
        resolve(res.statusCode!);
        res.resume();
        req.destroy();
      });
      req.on('error', reject);
      const gzip = createGzip();
      gzip.on('data', (chunk: Buffer) => req.write(chunk));
      gzip.write(`{"x":[${'{},'.repeat(1024 * 1024)}`);
      gzip.flush(constants.Z_SYNC_FLUSH);
    });
    expect(status).toBe(413);
  });
});

describe('JSON nesting is bounded before the body is parsed', () => {
  it('a body nested past 128 levels is a 400 on a route without a body schema', async () => {
    const r = await gw.call('POST', '/api/app/download/10', { rawBody: deep(200) });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(`x${'.0'.repeat(127)}: nested more than 128 levels`);
  });

  it('says the same as the schema check did, and 128 levels still parse', async () => {
    const r = await gw.call('POST', '/api/user/login', { rawBody: deep(200) });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(`x${'.0'.repeat(127)}: nested more than 128 levels`);
    // 128 levels: the body is read (and refused by the schema, not the depth check).
    const atLimit = await gw.call('POST', '/api/user/login', {
      rawBody: `{"username":"root","password":${'['.repeat(127)}${']'.repeat(127)}}`,
    });
    expect(atLimit.status).toBe(400);
    expect(atLimit.body.message).toContain('password');
    expect(atLimit.body.message).not.toContain('nested');
  });

  it('brackets inside strings and keys do not count', async () => {
    const text = '['.repeat(300);
    const r = await gw.call('POST', '/api/user/login', {
      rawBody: JSON.stringify({ username: 'root', password: text, [`${text}"\\`]: 1 }),
    });
    expect(r.status).toBe(400);
    expect(r.body.message).not.toContain('nested');
  });

  it('names the key path through objects, escaped keys decoded', async () => {
    const inner = `${'['.repeat(127)}${']'.repeat(127)}`;
    const r = await gw.call('POST', '/api/user/login', { rawBody: `{"a":{"b\\u0063":${inner}}}` });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(`a.bc${'.0'.repeat(126)}: nested more than 128 levels`);
  });

  it('a __proto__ key deep in a body is named, and malformed JSON stays malformed', async () => {
    const r = await gw.call('POST', '/api/app/download/10', {
      rawBody: '{"x":[1,{"y":{"__proto__":{"admin":true}}}]}',
    });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe('x.1.y: the key "__proto__" is not allowed');
    const c = await gw.call('POST', '/api/app/download/10', {
      rawBody: '{"x":{"constructor":{"prototype":{}}}}',
    });
    expect(c.status).toBe(400);
    expect(c.body.message).toBe('x: the key "constructor" must not hold a "prototype"');
    const bad = await gw.call('POST', '/api/app/download/10', { rawBody: '{"__proto__":' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).not.toContain('__proto__');
  });
});

describe('sign-in attempts are counted before the body is read', () => {
  it('malformed and schema-failing bodies use up the allowance', async () => {
    const limited = await startTestGateway({ auth: { login_rate_per_minute: 3 } }, { redis: false });
    try {
      expect((await limited.call('POST', '/api/user/login', { rawBody: '{' })).status).toBe(400);
      expect((await limited.call('POST', '/api/user/login', { rawBody: '{"x":1}' })).status).toBe(400);
      expect(
        (await limited.call('POST', '/api/user/login', { body: { username: 'root', password: 'wrong' } }))
          .status,
      ).toBe(401);
      const refused = await limited.call('POST', '/api/user/login', {
        body: { username: 'root', password: ROOT_PASSWORD },
      });
      expect(refused.status).toBe(429);
      expect(refused.body.metadata).toEqual({ scope: 'login_ip', limit: 3 });
    } finally {
      await limited.close();
    }
  });
});

describe('/v1: a compressed body may not expand without bound', () => {
  let up: FakeUpstream;
  let c: ChatGateway;
  beforeAll(async () => {
    up = await startFakeUpstream({ 'POST /v1/chat/completions': { json: oaCompletion('ok') } });
    c = await startChatGateway({
      channels: [
        { name: 'up', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: ['acme/m'] },
      ],
      models: [model('acme/m')],
    });
  });
  afterAll(async () => {
    await c?.gw.close();
    await up?.close();
  });

  const chat = (content: string) =>
    Buffer.from(JSON.stringify({ model: 'acme/m', messages: [{ role: 'user', content }] }));
  const post = (body: Buffer) =>
    fetch(`${c.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        authorization: `Bearer ${c.key}`,
      },
      body: new Uint8Array(body),
    });

  it('past 1 MiB, decoding more than 100 bytes per byte sent is a 413 in the /v1 shape', async () => {
    const bomb = gzipSync(chat('a'.repeat(4 * 1024 * 1024)));
    expect(bomb.length).toBeLessThan(32 * 1024);
    const r = await post(bomb);
    expect(r.status).toBe(413);
    const body = (await r.json()) as any;
    expect(body.error.message).toContain('expands more than 100 times');
  });

  it('a large body that compresses as real content does (base64, text) is served', async () => {
    const bytes = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 2654435761) >>> 13;
    expect((await post(gzipSync(chat(bytes.toString('base64'))))).status).toBe(200);
    // Under 1 MiB decoded, any ratio.
    expect((await post(gzipSync(chat('a'.repeat(900 * 1024))))).status).toBe(200);
  });
});
