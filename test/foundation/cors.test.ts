import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCorsGateway, startCorsUpstream } from '../helpers/cors-gateway.js';
import type { FakeUpstream } from '../helpers/fake-upstream.js';
import type { TestGateway } from '../helpers/gateway.js';

/** Browser clients on other origins (docs/architecture.md, "Browser clients (CORS)"). */

const SDK_HEADERS =
  'authorization,content-type,x-stainless-arch,x-stainless-lang,x-stainless-os,x-stainless-retry-count,openai-organization,http-referer,x-title';
const ANTHROPIC_HEADERS =
  'anthropic-beta,anthropic-dangerous-direct-browser-access,anthropic-version,content-type,x-api-key,x-stainless-timeout';

let up: FakeUpstream;

const preflight = (gw: TestGateway, path: string, origin: string, method = 'POST', headers = SDK_HEADERS) =>
  fetch(gw.url + path, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': method,
      ...(headers ? { 'access-control-request-headers': headers } : {}),
    },
  });

const chat = (gw: TestGateway, key: string, origin: string | undefined, stream = false) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${key}`,
      ...(origin ? { origin } : {}),
    },
    body: JSON.stringify({ model: 'acme/small', messages: [{ role: 'user', content: 'Hi' }], stream }),
  });

const gatewayWith = (server: Record<string, unknown>, env?: Record<string, string>) =>
  startCorsGateway(up, server, env);

beforeAll(async () => {
  up = await startCorsUpstream();
});
afterAll(async () => up?.close());

describe('CORS by default (any origin)', () => {
  let gw: TestGateway;
  let cookie: string;
  let key: string;
  const origin = 'https://chat.example.net';

  beforeAll(async () => {
    const g = await gatewayWith({});
    gw = g.gw;
    cookie = g.cookie;
    key = await g.key();
  });
  afterAll(async () => gw?.close());

  it('answers preflights of the API surface with 204, its methods and the headers asked for', async () => {
    for (const [path, headers] of [
      ['/v1/chat/completions', SDK_HEADERS],
      ['/api/v1/chat/completions', SDK_HEADERS],
      ['/v1/messages', ANTHROPIC_HEADERS],
      ['/v1/responses', SDK_HEADERS],
      ['/v1/embeddings', SDK_HEADERS],
      ['/v1/multimodalembeddings', 'authorization,content-type'],
    ] as const) {
      const res = await preflight(gw, path, origin, 'POST', headers);
      expect(res.status, path).toBe(204);
      expect(res.headers.get('access-control-allow-origin'), path).toBe('*');
      expect(res.headers.get('access-control-allow-methods'), path).toContain('POST');
      expect(res.headers.get('access-control-allow-headers'), path).toBe(headers);
      expect(res.headers.get('access-control-max-age'), path).toBe('7200');
      expect(res.headers.get('access-control-allow-credentials'), path).toBeNull();
      expect(await res.text(), path).toBe('');
    }
    const models = await preflight(gw, '/v1/models', origin, 'GET', 'authorization');
    expect(models.status).toBe(204);
    expect(models.headers.get('access-control-allow-methods')).toContain('GET');
  });

  it('a local page on a public site may call a gateway on a private network (Chromium asks)', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-private-network': 'true',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-private-network')).toBe('true');
  });

  it('puts the origin header on answers, errors and streams, and exposes what SDKs read', async () => {
    const ok = await chat(gw, key, origin);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('*');
    const exposed = ok.headers.get('access-control-expose-headers') ?? '';
    for (const h of ['x-request-id', 'request-id', 'retry-after', 'x-ratelimit-remaining-requests'])
      expect(exposed).toContain(h);
    expect(ok.headers.get('access-control-allow-credentials')).toBeNull();

    const unauthorized = await chat(gw, 'sk-not-a-key', origin);
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('access-control-allow-origin')).toBe('*');

    const stream = await chat(gw, key, origin, true);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.headers.get('access-control-allow-origin')).toBe('*');
    expect(await stream.text()).toContain('data: [DONE]');

    const typo = await fetch(`${gw.url}/v1/chat/completion`, { method: 'POST', headers: { origin } });
    expect(typo.status).toBe(404);
    expect(typo.headers.get('access-control-allow-origin')).toBe('*');
    // The router's refusal of a URL, which no hook sees.
    const badUrl = await fetch(`${gw.url}/v1/models/%c0`, {
      headers: { origin, authorization: `Bearer ${key}` },
    });
    expect(badUrl.status).toBe(400);
    expect(badUrl.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('a rate limit refusal (429) carries it too, with Retry-After readable', async () => {
    const limited = await gatewayKey({ rpm_limit: 1 });
    expect((await chat(gw, limited, origin)).status).toBe(200);
    const res = await chat(gw, limited, origin);
    expect(res.status).toBe(429);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(res.headers.get('access-control-expose-headers')).toContain('retry-after');
  });

  async function gatewayKey(body: Record<string, unknown>) {
    return (await gw.call('POST', '/api/key', { cookie, body: { name: 'limited', ...body } })).body.data
      .key as string;
  }

  it('a request without Origin gets no CORS headers', async () => {
    const res = await chat(gw, key, undefined);
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('access-control-expose-headers')).toBeNull();
  });

  it('/api: the public catalog reads and downloads answer other origins; sign-in and management do not', async () => {
    const list = await fetch(`${gw.url}/api/app?p=0`, { headers: { origin } });
    expect(list.status).toBe(200);
    expect(list.headers.get('access-control-allow-origin')).toBe('*');
    const one = await fetch(`${gw.url}/api/app/999`, { headers: { origin } });
    expect(one.status).toBe(404);
    expect(one.headers.get('access-control-allow-origin')).toBe('*');
    expect((await preflight(gw, '/api/app/download/1', origin, 'POST', 'content-type')).status).toBe(204);

    for (const [path, method] of [
      ['/api/user/login', 'POST'],
      ['/api/user/self', 'GET'],
      ['/api/key', 'POST'],
      ['/api/app', 'POST'],
      ['/api/app', 'PUT'],
      ['/api/app/1', 'DELETE'],
    ] as const) {
      const res = await preflight(gw, path, origin, method, 'content-type');
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.headers.get('access-control-allow-origin'), `${method} ${path}`).toBeNull();
    }
    const login = await fetch(`${gw.url}/api/user/login`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'root', password: 'wrong-password' }),
    });
    expect(login.status).toBe(401);
    expect(login.headers.get('access-control-allow-origin')).toBeNull();
    const self = await fetch(`${gw.url}/api/user/self`, { headers: { origin, cookie } });
    expect(self.status).toBe(200);
    expect(self.headers.get('access-control-allow-origin')).toBeNull();
    const create = await fetch(`${gw.url}/api/app`, {
      method: 'POST',
      headers: { origin, cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x' }),
    });
    expect(create.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('an OPTIONS that is not a preflight is still a 404', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'OPTIONS' });
    expect(res.status).toBe(404);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('CORS for listed origins', () => {
  let gw: TestGateway;
  let key: string;

  beforeAll(async () => {
    const g = await gatewayWith({ cors_origins: ['https://App.Example.com/', 'https://*.example.org'] });
    gw = g.gw;
    key = await g.key();
  });
  afterAll(async () => gw?.close());

  it('names the allowed origin back, varying by Origin', async () => {
    for (const origin of [
      'https://app.example.com',
      'https://preview-3.example.org',
      'https://a.b.example.org',
    ]) {
      const pre = await preflight(gw, '/v1/chat/completions', origin);
      expect(pre.status, origin).toBe(204);
      expect(pre.headers.get('access-control-allow-origin'), origin).toBe(origin);
      expect(pre.headers.get('vary'), origin).toContain('Origin');
      const res = await chat(gw, key, origin);
      expect(res.status, origin).toBe(200);
      expect(res.headers.get('access-control-allow-origin'), origin).toBe(origin);
      expect(res.headers.get('vary'), origin).toBe('Origin');
    }
  });

  it('another origin gets no CORS headers, and its preflight a 403 saying why', async () => {
    for (const origin of ['https://evil.example', 'https://example.org', 'http://app.example.com']) {
      const pre = await preflight(gw, '/v1/chat/completions', origin);
      expect(pre.status, origin).toBe(403);
      expect(pre.headers.get('access-control-allow-origin'), origin).toBeNull();
      expect(((await pre.json()) as any).error.message, origin).toContain(
        'server.cors_origins does not list it',
      );
      const res = await chat(gw, key, origin);
      expect(res.status, origin).toBe(200);
      expect(res.headers.get('access-control-allow-origin'), origin).toBeNull();
    }
  });
});

describe('CORS turned off', () => {
  let gw: TestGateway;
  let key: string;

  beforeAll(async () => {
    const g = await gatewayWith({}, { MODELGATE_SERVER_CORS_ORIGINS: 'none' });
    gw = g.gw;
    key = await g.key();
  });
  afterAll(async () => gw?.close());

  it('answers no origin, and says so to a preflight', async () => {
    const origin = 'https://chat.example.net';
    const pre = await preflight(gw, '/v1/chat/completions', origin);
    expect(pre.status).toBe(403);
    expect(((await pre.json()) as any).error.message).toContain('server.cors_origins is empty');
    const res = await chat(gw, key, origin);
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});
