import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * docs/quotas.md, "Which requests leave a row": a request authenticated with an API key whose
 * body passed its schema check leaves exactly one request-log row, whatever happens next; a
 * schema 400, a 401 and a rate-limit 429 leave none. The same rule on every /v1 endpoint that
 * logs: chat completions and both embeddings routes. Every case uses a key of its own, so its
 * rows are those of that key.
 */
let up: FakeUpstream;
let gw: TestGateway;
let cookie: string;

const CHAT = 'acme/chat';
const EMB = 'acme/emb';
/** Known models that only a disabled channel serves: 503 on their endpoint. */
const CHAT_OFF = 'acme/chat-offline';
const EMB_OFF = 'acme/emb-offline';

const upstreamAnswer = (texts: string[], ok: () => unknown) => {
  if (texts.includes('FAIL')) return { status: 500, json: { error: { message: 'boom' } } };
  if (texts.includes('SLOW')) return { delayMs: 30_000, json: ok() };
  return { json: ok() };
};

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': (r) =>
      upstreamAnswer(
        r.json.messages.map((m: { content: string }) => m.content),
        () => ({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1700000000,
          model: 'up',
          choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
        }),
      ),
    'POST /v1/embeddings': (r) => {
      const input: string[] = typeof r.json.input === 'string' ? [r.json.input] : r.json.input;
      return upstreamAnswer(input, () => ({
        object: 'list',
        data: input.map((_, index) => ({ object: 'embedding', index, embedding: [0.5, -0.5] })),
        model: 'up',
        usage: { prompt_tokens: 8, total_tokens: 8 },
      }));
    },
  });
  const pricing = { prompt: '0.000001', completion: '0.000002' };
  gw = await startTestGateway(
    {
      gateway: { discover_models: false, max_attempts: 1 },
      channels: [
        { name: 'up', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: [CHAT, EMB] },
        {
          name: 'off',
          kind: 'openai-compatible',
          base_url: `${up.url}/v1`,
          keys: ['k'],
          models: [CHAT_OFF, EMB_OFF],
          status: 2,
        },
      ],
      models: [
        { id: CHAT, context_length: 100_000, max_completion_tokens: 4096, pricing },
        { id: CHAT_OFF, context_length: 100_000, max_completion_tokens: 4096, pricing },
        { id: EMB, output_modalities: ['embeddings'], pricing: { prompt: '0.000001' } },
        { id: EMB_OFF, output_modalities: ['embeddings'], pricing: { prompt: '0.000001' } },
      ],
    },
    // The in-memory rate limiter: a 429 here is about this file's keys only.
    { redis: false },
  );
  cookie = await gw.login();
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

interface Endpoint {
  path: string;
  /** The row's `endpoint`. */
  name: string;
  model: string;
  offline: string;
  body(model: string, text?: string): Record<string, unknown>;
  /** A body its schema check refuses (a 400 before the handler). */
  badBody: Record<string, unknown>;
  /** A body past the schema check that is refused later with a 400. */
  lateBadBody: Record<string, unknown>;
}

const ENDPOINTS: Endpoint[] = [
  {
    path: '/v1/chat/completions',
    name: 'chat.completions',
    model: CHAT,
    offline: CHAT_OFF,
    body: (model, text = 'hello') => ({ model, messages: [{ role: 'user', content: text }] }),
    badBody: { model: CHAT, messages: 'hello' },
    // A tool_choice that demands a tool, without tools: planChat refuses it.
    lateBadBody: { model: CHAT, messages: [{ role: 'user', content: 'x' }], tool_choice: 'required' },
  },
  {
    path: '/v1/embeddings',
    name: 'embeddings',
    model: EMB,
    offline: EMB_OFF,
    body: (model, text = 'hello') => ({ model, input: [text] }),
    badBody: { model: EMB, input: [] },
    // A chat model is no embedding model.
    lateBadBody: { model: CHAT, input: ['x'] },
  },
  {
    path: '/v1/multimodalembeddings',
    name: 'multimodalembeddings',
    model: EMB,
    offline: EMB_OFF,
    body: (model, text = 'hello') => ({ model, inputs: [{ content: [{ type: 'text', text }] }] }),
    badBody: { model: EMB, inputs: [] },
    lateBadBody: { model: CHAT, inputs: [{ content: [{ type: 'text', text: 'x' }] }] },
  },
];

async function newKey(body: Record<string, unknown> = {}): Promise<{ key: string; id: number }> {
  const r = await gw.call('POST', '/api/key', { cookie, body: { name: 'row', ...body } });
  expect(r.status).toBe(200);
  return { key: r.body.data.key, id: r.body.data.id };
}

/** Every row of key `id`, newest first, after a flush. */
async function rowsOf(id: number): Promise<any[]> {
  await gw.services.requestLogs.flush();
  const r = await gw.call('GET', `/api/log?key_id=${id}&page_size=100`, { cookie });
  expect(r.status).toBe(200);
  return r.body.data;
}

async function allRowCount(): Promise<number> {
  await gw.services.requestLogs.flush();
  return (await gw.call('GET', '/api/log?page_size=1', { cookie })).body.total;
}

/** The row a refusal before any upstream call leaves: no upstream, no channel, no cost, no tokens. */
const refusalRow = (ep: Endpoint, status: number, model: string, errorType: string) => ({
  endpoint: ep.name,
  status,
  model,
  provider: '',
  channel_id: null,
  prompt_tokens: 0,
  completion_tokens: 0,
  cost: 0,
  ttft_ms: null,
  attempts: null,
  error_kind: errorType,
  stream: false,
  latency_ms: expect.any(Number),
});

describe.each(ENDPOINTS)('$path', (ep) => {
  const post = (token: string, body: Record<string, unknown>) => gw.call('POST', ep.path, { token, body });

  it('200: one row, served, with its cost', async () => {
    const k = await newKey();
    expect((await post(k.key, ep.body(ep.model))).status).toBe(200);
    const rows = await rowsOf(k.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ endpoint: ep.name, status: 200, model: ep.model, provider: 'up' });
    expect(rows[0].channel_id).toEqual(expect.any(Number));
    expect(rows[0].cost).toBeGreaterThan(0);
  });

  it('400 from the schema check: no row', async () => {
    const k = await newKey();
    const r = await post(k.key, ep.badBody);
    expect(r.status).toBe(400);
    expect(await rowsOf(k.id)).toEqual([]);
  });

  it('400 after the schema check: one row', async () => {
    const k = await newKey();
    const r = await post(k.key, ep.lateBadBody);
    expect(r.status).toBe(400);
    const rows = await rowsOf(k.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject(refusalRow(ep, 400, ep.lateBadBody.model as string, r.body.error.type));
  });

  it('401: no row', async () => {
    const before = await allRowCount();
    const r = await post('sk-not-a-key', ep.body(ep.model));
    expect(r.status).toBe(401);
    expect(await allRowCount()).toBe(before);
  });

  it('429 from a rate limit: no row (the request before it has its own)', async () => {
    const k = await newKey({ rpm_limit: 1 });
    expect((await post(k.key, ep.body(ep.model))).status).toBe(200);
    expect((await post(k.key, ep.body(ep.model))).status).toBe(429);
    const rows = await rowsOf(k.id);
    expect(rows.map((r) => r.status)).toEqual([200]);
  });

  it('403 for a model outside the allow-list: one row, the model as asked', async () => {
    const k = await newKey({ allowed_models: ['acme/something-else'] });
    const r = await post(k.key, ep.body(ep.model));
    expect(r.status).toBe(403);
    const rows = await rowsOf(k.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject(refusalRow(ep, 403, ep.model, r.body.error.type));
  });

  it('404 for an unknown model: one row, the model as asked', async () => {
    const k = await newKey();
    const r = await post(k.key, ep.body('nope/unknown'));
    expect(r.status).toBe(404);
    const rows = await rowsOf(k.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject(refusalRow(ep, 404, 'nope/unknown', r.body.error.type));
  });

  it('503 for a model no enabled upstream serves: one row', async () => {
    const k = await newKey();
    const r = await post(k.key, ep.body(ep.offline));
    expect(r.status).toBe(503);
    const rows = await rowsOf(k.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject(refusalRow(ep, 503, ep.offline, r.body.error.type));
  });

  it('402 for an exhausted quota: one row', async () => {
    const k = await newKey({ quota_limit: 0.000001 });
    const r = await post(k.key, ep.body(ep.model, 'a longer text than one micro-dollar buys '.repeat(20)));
    expect(r.status).toBe(402);
    const rows = await rowsOf(k.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject(refusalRow(ep, 402, ep.model, r.body.error.type));
  });

  it('502 for an upstream failure: one row, with the try in its trail', async () => {
    const k = await newKey();
    const r = await post(k.key, ep.body(ep.model, 'FAIL'));
    expect(r.status).toBe(502);
    const rows = await rowsOf(k.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      endpoint: ep.name,
      status: 502,
      model: ep.model,
      provider: 'up',
      cost: 0,
    });
    expect(rows[0].attempts).toHaveLength(1);
  });

  it('499 for a client that left: one row', async () => {
    const k = await newKey();
    const abort = new AbortController();
    const seen = up.requests.length;
    const sent = fetch(`${gw.url}${ep.path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(ep.body(ep.model, 'SLOW')),
      signal: abort.signal,
    }).catch(() => 'left');
    await expect.poll(() => up.requests.length, { timeout: 5_000, interval: 10 }).toBe(seen + 1);
    abort.abort();
    expect(await sent).toBe('left');
    await expect.poll(async () => (await rowsOf(k.id)).length, { timeout: 5_000, interval: 20 }).toBe(1);
    // Still one once the request has settled.
    await new Promise((r) => setTimeout(r, 100));
    const rows = await rowsOf(k.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ endpoint: ep.name, status: 499, model: ep.model, error_kind: 'aborted' });
  });
});

describe('chat refusals before the quota check', () => {
  const post = (token: string, body: Record<string, unknown>) =>
    gw.call('POST', '/v1/chat/completions', {
      token,
      body: { messages: [{ role: 'user', content: 'x' }], ...body },
    });

  it('a stream refused up front leaves a row that says it was a stream', async () => {
    const k = await newKey();
    const r = await post(k.key, { model: 'nope/unknown', stream: true });
    expect(r.status).toBe(404);
    const rows = await rowsOf(k.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 404, model: 'nope/unknown', stream: true });
  });

  it('the model as asked is the user default when the body has none', async () => {
    const k = await newKey();
    expect(
      (await gw.call('PUT', '/api/user/self', { cookie, body: { default_model: 'nope/default' } })).status,
    ).toBe(200);
    try {
      const r = await post(k.key, {});
      expect(r.status).toBe(404);
      const rows = await rowsOf(k.id);
      expect(rows.map((x) => [x.status, x.model])).toEqual([[404, 'nope/default']]);
    } finally {
      await gw.call('PUT', '/api/user/self', { cookie, body: { default_model: '' } });
    }
  });
});

describe('chat `models` fallback lists: one row whatever the list holds', () => {
  const post = (token: string, body: Record<string, unknown>) =>
    gw.call('POST', '/v1/chat/completions', {
      token,
      body: { messages: [{ role: 'user', content: 'x' }], ...body },
    });

  it('an unknown fallback is skipped: served, one row', async () => {
    const k = await newKey();
    expect((await post(k.key, { model: CHAT, models: ['nope/a'] })).status).toBe(200);
    expect((await rowsOf(k.id)).map((r) => [r.status, r.model])).toEqual([[200, CHAT]]);
  });

  it('an unknown first model with a known fallback: served by the fallback, one row', async () => {
    const k = await newKey();
    expect((await post(k.key, { model: 'nope/a', models: [CHAT] })).status).toBe(200);
    expect((await rowsOf(k.id)).map((r) => [r.status, r.model])).toEqual([[200, CHAT]]);
  });

  it('every model unknown: one 404 row, under the first model', async () => {
    const k = await newKey();
    const r = await post(k.key, { model: 'nope/a', models: ['nope/b', 'nope/c'] });
    expect(r.status).toBe(404);
    expect((await rowsOf(k.id)).map((x) => [x.status, x.model])).toEqual([[404, 'nope/a']]);
  });

  it('`models` without `model`: the list is tried in order, ahead of any default (OpenRouter)', async () => {
    const k = await newKey();
    expect(
      (await gw.call('PUT', '/api/user/self', { cookie, body: { default_model: 'nope/default' } })).status,
    ).toBe(200);
    try {
      expect((await post(k.key, { models: ['nope/a', CHAT] })).status).toBe(200);
      const r = await post(k.key, { models: ['nope/b', 'nope/c'] });
      expect(r.status).toBe(404);
      expect((await rowsOf(k.id)).map((x) => [x.status, x.model])).toEqual([
        [404, 'nope/b'],
        [200, CHAT],
      ]);
    } finally {
      await gw.call('PUT', '/api/user/self', { cookie, body: { default_model: '' } });
    }
  });

  it('fallbacks outside the allow-list are dropped; a known first model outside it is one 403 row', async () => {
    const k = await newKey({ allowed_models: [CHAT] });
    expect((await post(k.key, { model: CHAT, models: [CHAT_OFF] })).status).toBe(200);
    expect((await post(k.key, { model: CHAT_OFF, models: [CHAT] })).status).toBe(403);
    expect((await rowsOf(k.id)).map((r) => [r.status, r.model])).toEqual([
      [403, CHAT_OFF],
      [200, CHAT],
    ]);
  });
});
