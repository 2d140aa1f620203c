import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChatGateway, model, oaCompletion, startChatGateway } from '../chat/chat-helpers.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { ROOT_PASSWORD } from '../helpers/gateway.js';

/**
 * Request bodies sent with a Content-Encoding: gzip, deflate and br are decoded (the body limit
 * counting the decoded bytes), a corrupt one is a 400 naming its encoding, any other encoding a
 * 415. Before, a gzip body was parsed as it came and answered 400 "malformed JSON".
 */
let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({ 'POST /v1/chat/completions': { json: oaCompletion('decoded') } });
  c = await startChatGateway({
    channels: [
      { name: 'up', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: ['acme/m'] },
    ],
    models: [model('acme/m')],
    server: { body_limit_bytes: 64 * 1024 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const ENCODERS: Record<string, (b: Buffer) => Buffer> = {
  gzip: gzipSync,
  deflate: deflateSync,
  br: brotliCompressSync,
};

function post(path: string, body: Buffer, encoding: string, auth = true) {
  return fetch(`${c.gw.url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'content-encoding': encoding,
      ...(auth ? { authorization: `Bearer ${c.key}` } : {}),
    },
    body: new Uint8Array(body),
  });
}

const CHAT = Buffer.from(
  JSON.stringify({ model: 'acme/m', messages: [{ role: 'user', content: 'zipped' }] }),
);

describe('Content-Encoding of request bodies', () => {
  it.each(Object.keys(ENCODERS))('%s: /v1 and /api bodies are decoded', async (encoding) => {
    const before = up.requests.length;
    const r = await post('/v1/chat/completions', ENCODERS[encoding]!(CHAT), encoding);
    expect(r.status).toBe(200);
    expect(((await r.json()) as any).choices[0].message.content).toBe('decoded');
    expect(up.requests.at(before)!.json.messages[0].content).toBe('zipped');
    const login = JSON.stringify({ username: 'root', password: ROOT_PASSWORD });
    const l = await post(
      '/api/user/login',
      ENCODERS[encoding]!(Buffer.from(login)),
      encoding.toUpperCase(),
      false,
    );
    expect(l.status).toBe(200);
  });

  it('identity is the body as it is', async () => {
    expect((await post('/v1/chat/completions', CHAT, 'identity')).status).toBe(200);
  });

  it('the body limit counts the decoded bytes: a small zip bomb is a 413', async () => {
    const bomb = gzipSync(Buffer.from(JSON.stringify({ username: 'root', password: 'x'.repeat(1 << 20) })));
    expect(bomb.length).toBeLessThan(64 * 1024);
    const r = await post('/api/user/login', bomb, 'gzip', false);
    expect(r.status).toBe(413);
    expect(((await r.json()) as any).message).toContain('too large');
  });

  it('a body that does not decode is a 400 naming its encoding', async () => {
    const r = await post('/v1/chat/completions', Buffer.from('{"model":"not gzip"}'), 'gzip');
    expect(r.status).toBe(400);
    expect(((await r.json()) as any).error.message).toContain('malformed gzip');
  });

  it('another encoding is a 415 saying which are taken', async () => {
    const r = await post('/v1/chat/completions', CHAT, 'compress');
    expect(r.status).toBe(415);
    expect(((await r.json()) as any).error.message).toBe(
      'content-encoding: must be gzip, deflate, br or identity (got compress)',
    );
    const a = await post('/api/user/login', CHAT, 'zstd', false);
    expect(a.status).toBe(415);
    expect(((await a.json()) as any).success).toBe(false);
  });
});

describe('Content-Encoding: the edges a move of the decoding must keep', () => {
  it('x-gzip is gzip, and an empty text/plain body sent gzip is no body', async () => {
    expect((await post('/v1/chat/completions', gzipSync(CHAT), 'x-gzip')).status).toBe(200);
    const r = await fetch(`${c.gw.url}/api/user/logout`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'content-encoding': 'gzip' },
      body: new Uint8Array(gzipSync(Buffer.alloc(0))),
    });
    expect(r.status).toBe(200);
    const t = await fetch(`${c.gw.url}/api/user/logout`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'content-encoding': 'gzip' },
      body: new Uint8Array(gzipSync(Buffer.from('{"a":1}'))),
    });
    expect(t.status).toBe(415);
  });

  it('the decoded body may be exactly the limit; one byte more is a 413', async () => {
    const sized = (n: number) => {
      const head = JSON.stringify({ username: 'root', password: '' });
      return Buffer.from(head.replace('""', `"${'x'.repeat(n - head.length)}"`));
    };
    const at = await post('/api/user/login', gzipSync(sized(64 * 1024)), 'gzip', false);
    expect(at.status).not.toBe(413);
    const over = await post('/api/user/login', gzipSync(sized(64 * 1024 + 1)), 'gzip', false);
    expect(over.status).toBe(413);
  });

  it('a JSON body keeps Fastify prototype-poisoning protection, sent plain or encoded', async () => {
    const poisoned = Buffer.from('{"username":"root","password":"x","__proto__":{"admin":true}}');
    for (const [body, enc] of [
      [poisoned, 'identity'],
      [gzipSync(poisoned), 'gzip'],
    ] as const) {
      const r = await post('/api/user/login', body, enc, false);
      expect(r.status).toBe(400);
    }
  });
});
