import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChatGateway, oaChunk, rawStream, startChatGateway } from '../chat/chat-helpers.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';

/**
 * What a channel may carry onto the wire (header names and values, keys, the base URL), checked
 * when it is saved rather than failing every request later as a "connection" error, and what an
 * upstream's error text may carry back to API-key users (the channel's own credentials).
 */
let c: ChatGateway;
let up: FakeUpstream;

const KEY = 'sk-BAD2CHANNEL-SECRET-KEY-0002';
const TOKEN = 'gw-token-SECRET-HEADER-VALUE-77';

beforeAll(async () => {
  // An upstream that says back, in its error text, the credentials it was sent.
  const echo = (status: number) => (req: { headers: Record<string, unknown> }) => ({
    status,
    json: {
      error: {
        message: `no such model; your header was ${req.headers.authorization}, token ${req.headers['x-gateway-token']}`,
        type: status === 400 ? 'invalid_request_error' : 'server_error',
      },
    },
  });
  up = await startFakeUpstream({
    'POST /v400/chat/completions': echo(400),
    'POST /v500/chat/completions': echo(500),
    'GET /v400/models': echo(400),
    // Mid-stream: a token, then an error event saying the credentials back.
    'POST /vmid/chat/completions': (req) => ({
      sse: [
        `data: ${JSON.stringify(oaChunk({ role: 'assistant', content: 'hi' }))}\n\n`,
        `data: ${JSON.stringify({ error: { message: `stream broke; key ${req.headers.authorization}, token ${req.headers['x-gateway-token']}`, type: 'server_error' } })}\n\n`,
      ],
    }),
  });
  c = await startChatGateway({
    gateway: { discover_models: false, max_attempts: 1, retry_base_ms: 1, retry_max_ms: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const create = (body: Record<string, unknown>) =>
  c.gw.call('POST', '/api/channel', { cookie: c.cookie, body: { kind: 'openai-compatible', ...body } });

describe('channel settings that would break the wire', () => {
  it('refuses header names and values HTTP cannot carry, naming the header', async () => {
    const cases: Array<[Record<string, string>, string, RegExp]> = [
      [{ 'X-A': 'v\r\nX-Injected: 1' }, 'settings.headers.X-A', /line break|control/],
      [{ 'X-A': 'v\nX-Injected: 1' }, 'settings.headers.X-A', /line break|control/],
      [{ 'X-A': 'nul\u0000' }, 'settings.headers.X-A', /control|NUL/],
      [{ 'X-A': 'bell\u0007' }, 'settings.headers.X-A', /control characters \(found U\+0007\)/],
      [{ 'X-A': 'snowman ☃' }, 'settings.headers.X-A', /Latin-1|ASCII/],
      [{ 'X A:': 'v' }, 'settings.headers.X A:', /not a valid header name/],
      [{ '': 'v' }, 'settings.headers.', /not a valid header name/],
      [{ 'X-Ä': 'v' }, 'settings.headers.X-Ä', /not a valid header name/],
    ];
    for (const [headers, field, why] of cases) {
      const r = await create({ name: 'h1', base_url: `${up.url}/v1`, settings: { headers } });
      expect(r.status, JSON.stringify(headers)).toBe(400);
      expect(r.body.message, JSON.stringify(headers)).toContain(`${field}:`);
      expect(r.body.message, `${JSON.stringify(headers)} ${r.body.message}`).toMatch(why);
    }
  });

  it('refuses headers the gateway sets itself, saying why', async () => {
    for (const name of [
      'Host',
      'content-length',
      'Transfer-Encoding',
      'Connection',
      'Keep-Alive',
      'Upgrade',
      'TE',
      'Trailer',
      'Expect',
      'Content-Type',
      'Accept-Encoding',
    ]) {
      const r = await create({
        name: 'h2',
        base_url: `${up.url}/v1`,
        settings: { headers: { [name]: 'x' } },
      });
      expect(r.status, name).toBe(400);
      expect(r.body.message, name).toContain(`settings.headers.${name}: `);
      expect(r.body.message, name).toMatch(/the gateway sets/);
    }
    // Credentials of other shapes are what headers are for: an `x-api-key` or a gateway's token.
    const ok = await create({
      name: 'h-ok',
      base_url: `${up.url}/v1`,
      settings: { headers: { 'x-api-key': 'k', 'X-Gateway-Token': 'a b\tc', 'anthropic-beta': 'x' } },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it('refuses keys with line breaks or control characters, naming the key by its place', async () => {
    for (const keys of [['k\r\nX-Inj: 1'], ['good-key', 'bad\nkey'], ['tab\tkey'], ['ключ']]) {
      const r = await create({ name: 'k1', base_url: `${up.url}/v1`, keys });
      expect(r.status, JSON.stringify(keys)).toBe(400);
      expect(r.body.message).toMatch(new RegExp(`^keys\\.${keys.length - 1}: `));
      expect(r.body.message).not.toContain(keys.at(-1));
    }
  });

  it('refuses a base URL with a query string or fragment, which request paths would be appended to', async () => {
    for (const base_url of [
      `${up.url}/v1?api_key=SECRETQ`,
      `${up.url}/v1?`,
      `${up.url}/v1#frag`,
      `${up.url}/v1/#`,
    ]) {
      const r = await create({ name: 'q1', base_url });
      expect(r.status, base_url).toBe(400);
      expect(r.body.message, base_url).toMatch(/^base_url: must not carry a query string or fragment/);
      expect(r.body.message).not.toContain('SECRETQ');
    }
  });

  it('checks the same on PUT', async () => {
    const r = await create({ name: 'put-me', base_url: `${up.url}/v1`, keys: ['good'], models: ['m-put'] });
    expect(r.status).toBe(200);
    const id = r.body.data.id;
    const put = (body: Record<string, unknown>) =>
      c.gw.call('PUT', '/api/channel', { cookie: c.cookie, body: { id, ...body } });
    const header = await put({ settings: { headers: { 'X-A': 'v\r\nX-Injected: 1' } } });
    expect(header.status).toBe(400);
    expect(header.body.message).toMatch(/^settings\.headers\.X-A: /);
    const host = await put({ settings: { headers: { host: 'elsewhere' } } });
    expect(host.status).toBe(400);
    expect(host.body.message).toMatch(/^settings\.headers\.host: /);
    const key = await put({ keys: ['good', 'k\r\nX-Inj: 1'] });
    expect(key.status).toBe(400);
    expect(key.body.message).toMatch(/^keys\.1: /);
    const base = await put({ base_url: `${up.url}/v1?api_key=SECRETQ` });
    expect(base.status).toBe(400);
    expect(base.body.message).toMatch(/^base_url: /);
  });
});

describe('upstream error text', () => {
  async function channelAt(name: string, path: string, model: string) {
    const r = await create({
      name,
      base_url: `${up.url}/${path}`,
      keys: [KEY],
      models: [model],
      settings: { headers: { 'x-gateway-token': TOKEN } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  }
  const chat = (model: string) =>
    fetch(`${c.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    });

  it('reaches API-key users with the channel’s keys and header values redacted (400, 500; streamed or not)', async () => {
    await channelAt('echo-400', 'v400', 'echo-400-model');
    await channelAt('echo-500', 'v500', 'echo-500-model');
    for (const [model, status] of [
      ['echo-400-model', 400],
      ['echo-500-model', 502],
    ] as const) {
      const res = await chat(model);
      const text = await res.text();
      expect(res.status, text).toBe(status);
      expect(text).not.toContain(KEY);
      expect(text).not.toContain(TOKEN);
      expect(JSON.parse(text).error.message).toContain('your header was Bearer [redacted], token [redacted]');

      const streamed = await rawStream(c, { model, messages: [{ role: 'user', content: 'hi' }] });
      expect(streamed.text).toContain('[redacted]');
      expect(streamed.text).not.toContain(KEY);
      expect(streamed.text).not.toContain(TOKEN);
    }
  });

  it('in an error event after the stream began, reaches the client redacted too', async () => {
    await channelAt('echo-mid', 'vmid', 'echo-mid-model');
    const streamed = await rawStream(c, {
      model: 'echo-mid-model',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(streamed.res.status).toBe(200);
    expect(streamed.chunks.at(-1).choices[0].finish_reason).toBe('error');
    expect(streamed.text).toContain('key Bearer [redacted], token [redacted]');
    expect(streamed.text).not.toContain(KEY);
    expect(streamed.text).not.toContain(TOKEN);
  });

  it('reaches admins redacted in a channel test and a model refresh (the console masks them)', async () => {
    const r = await create({
      name: 'echo-admin',
      base_url: `${up.url}/v400`,
      keys: [KEY],
      models: ['echo-admin-model'],
      settings: { headers: { 'x-gateway-token': TOKEN } },
    });
    expect(r.status).toBe(200);
    const id = r.body.data.id;
    const tested = await c.gw.call('POST', `/api/channel/${id}/test`, { cookie: c.cookie, body: {} });
    expect(tested.body.success).toBe(false);
    expect(tested.body.message).toContain('your header was Bearer [redacted], token [redacted]');
    const refreshed = await c.gw.call('POST', `/api/channel/${id}/models/refresh`, { cookie: c.cookie });
    expect(refreshed.body.success).toBe(false);
    expect(refreshed.body.message).toContain('your header was Bearer [redacted], token [redacted]');
    for (const body of [tested.body, refreshed.body]) {
      expect(JSON.stringify(body)).not.toContain(KEY);
      expect(JSON.stringify(body)).not.toContain(TOKEN);
    }
  });
});
