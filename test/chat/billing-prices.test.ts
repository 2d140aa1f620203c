import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeAnswer, type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  type ChatGateway,
  lastText,
  model,
  oaChunk,
  oaCompletion,
  openaiChannel,
  requestLogs,
  sse,
  startChatGateway,
} from './chat-helpers.js';

/**
 * Prices beyond tokens, against a fake OpenAI-compatible upstream on all three ingress formats:
 * `pricing.image` per input image sent, `pricing.internal_reasoning` per reasoning token, and a
 * usage whose details exceed their totals reaching the client clamped. The fake answers by the
 * last message's text.
 */
let up: FakeUpstream;
let c: ChatGateway;

const USAGE: Record<string, object> = {
  // 10 x $1 + 5 x $2 per million = 20 micro-USD of tokens.
  pic: { prompt_tokens: 10, completion_tokens: 5 },
  // 100 x $1 + 200 x $2 + 800 x $5 per million = 4,500 micro-USD (2,100 at the completion price).
  think: {
    prompt_tokens: 100,
    completion_tokens: 1000,
    completion_tokens_details: { reasoning_tokens: 800 },
  },
  // 10 x $1 + 5,000 x $2 per million = 10,010 micro-USD, whatever max_tokens said.
  big: { prompt_tokens: 10, completion_tokens: 5000 },
  // Details past their totals: 50 cached and 30 written of a 10-token prompt, 9 of 5 reasoning.
  odd: {
    prompt_tokens: 10,
    completion_tokens: 5,
    prompt_tokens_details: { cached_tokens: 50, cache_write_tokens: 30 },
    completion_tokens_details: { reasoning_tokens: 9 },
  },
};

function answer(word: string, stream: boolean): FakeAnswer {
  const usage = USAGE[word] ?? USAGE.pic!;
  if (!stream) return { json: { ...oaCompletion('ok'), usage: { ...usage, total_tokens: 15 } } };
  const last = { ...oaChunk({}), choices: [], usage: { ...usage, total_tokens: 15 } };
  return { sse: sse([oaChunk({ role: 'assistant', content: 'ok' }), oaChunk({}, 'stop'), last]) };
}

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': (req) => answer(lastText(req.json), req.json.stream === true),
  });
  c = await startChatGateway({
    channels: [openaiChannel('up', up, ['acme/pic', 'acme/think', 'acme/cheap'])],
    models: [
      model('acme/pic', {
        pricing: { prompt: '0.000001', completion: '0.000002', request: '0.005', image: '0.01' },
      }),
      model('acme/cheap'),
      model('acme/think', {
        pricing: { prompt: '0.000001', completion: '0.000002', internal_reasoning: '0.000005' },
      }),
    ],
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const IMG = 'https://example.com/a.png';
const IMG2 = 'data:image/png;base64,iVBORw0KGgo=';

/** A key of its own (`quota_limit` in USD), and how much it has spent. */
async function newKey(body: Record<string, unknown> = {}) {
  const r = await c.gw.call('POST', '/api/key', {
    cookie: c.cookie,
    body: { name: `k${Math.random()}`, ...body },
  });
  expect(r.status).toBe(200);
  const { key, id } = r.body.data;
  const spent = async () => {
    await c.gw.services.requestLogs.flush();
    const list = (await c.gw.call('GET', '/api/key', { cookie: c.cookie })).body.data;
    return Math.round(list.find((k: any) => k.id === id).quota_used * 1e6);
  };
  return { key, id, spent };
}

/** A POST to `path` with `key`: the JSON answer, or for a stream its events' data. */
async function post(key: string, path: string, body: Record<string, unknown>) {
  const res = await fetch(`${c.gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!body.stream) return { status: res.status, json: JSON.parse(text), events: [] as any[] };
  const events = text
    .split('\n\n')
    .flatMap((e) => e.split('\n').filter((l) => l.startsWith('data: ')))
    .map((l) => l.slice(6))
    .filter((d) => d !== '[DONE]')
    .map((d) => JSON.parse(d));
  return { status: res.status, json: undefined as any, events };
}

/** The three ingress formats, each asked `word` with `images` image URLs beside it. */
const INGRESS = [
  {
    name: 'chat',
    path: '/v1/chat/completions',
    body: (m: string, word: string, images: string[], stream: boolean) => ({
      model: m,
      stream,
      usage: { include: true },
      max_tokens: 10,
      messages: [
        {
          role: 'user',
          content: [
            ...images.map((url) => ({ type: 'image_url', image_url: { url } })),
            { type: 'text', text: word },
          ],
        },
      ],
    }),
    usage: (r: Awaited<ReturnType<typeof post>>) =>
      r.json ? r.json.usage : r.events.filter((e) => e.usage).at(-1)?.usage,
  },
  {
    name: 'messages',
    path: '/v1/messages',
    body: (m: string, word: string, images: string[], stream: boolean) => ({
      model: m,
      stream,
      max_tokens: 10,
      messages: [
        {
          role: 'user',
          content: [
            ...images.map((url) =>
              url.startsWith('data:')
                ? {
                    type: 'image',
                    source: { type: 'base64', media_type: 'image/png', data: url.split(',')[1] },
                  }
                : { type: 'image', source: { type: 'url', url } },
            ),
            { type: 'text', text: word },
          ],
        },
      ],
    }),
    usage: (r: Awaited<ReturnType<typeof post>>) =>
      r.json ? r.json.usage : r.events.filter((e) => e.type === 'message_delta').at(-1)?.usage,
  },
  {
    name: 'responses',
    path: '/v1/responses',
    body: (m: string, word: string, images: string[], stream: boolean) => ({
      model: m,
      stream,
      max_output_tokens: 16,
      input: [
        {
          role: 'user',
          content: [
            ...images.map((url) => ({ type: 'input_image', image_url: url })),
            { type: 'input_text', text: word },
          ],
        },
      ],
    }),
    usage: (r: Awaited<ReturnType<typeof post>>) =>
      r.json ? r.json.usage : r.events.filter((e) => e.type === 'response.completed').at(-1)?.response.usage,
  },
];

describe('pricing.image: each input image sent is billed', () => {
  for (const ing of INGRESS)
    for (const stream of [false, true])
      it(`${ing.name}, ${stream ? 'streamed' : 'not streamed'}: two images cost 2 x image on top of tokens and request`, async () => {
        const k = await newKey();
        const r = await post(k.key, ing.path, ing.body('acme/pic', 'pic', [IMG, IMG2], stream));
        expect(r.status).toBe(200);
        // 20 micro-USD of tokens + 5,000 per request + 2 x 10,000 per image.
        const micros = 20 + 5_000 + 20_000;
        if (ing.name === 'chat') expect(ing.usage(r).cost).toBe(micros / 1e6);
        expect((await requestLogs(c))[0]).toMatchObject({ endpoint: expect.any(String), cost: micros / 1e6 });
        expect(await k.spent()).toBe(micros);
      });

  it('the reservation counts the images: a quota that covers one image and not two answers 402', async () => {
    // 0.02 USD: the request price and one image (15,000 micro-USD and a few tokens) fit, two do not.
    const k = await newKey({ quota_limit: 0.02 });
    const sent = up.requests.length;
    const two = await post(
      k.key,
      '/v1/chat/completions',
      INGRESS[0]!.body('acme/pic', 'pic', [IMG, IMG2], false),
    );
    expect(two.status).toBe(402);
    expect(up.requests.length).toBe(sent);
    const one = await post(k.key, '/v1/chat/completions', INGRESS[0]!.body('acme/pic', 'pic', [IMG], false));
    expect(one.status).toBe(200);
    expect(await k.spent()).toBe(20 + 5_000 + 10_000);
  });
});

describe('pricing.internal_reasoning: reasoning tokens at their own price', () => {
  for (const ing of INGRESS)
    for (const stream of [false, true])
      it(`${ing.name}, ${stream ? 'streamed' : 'not streamed'}: 800 reasoning tokens of 1000 at internal_reasoning`, async () => {
        const k = await newKey();
        const r = await post(k.key, ing.path, {
          ...ing.body('acme/think', 'think', [], stream),
          max_tokens: 2000,
          max_output_tokens: 2000,
        });
        expect(r.status).toBe(200);
        if (ing.name === 'chat') expect(ing.usage(r).cost).toBe(0.0045);
        expect((await requestLogs(c))[0]).toMatchObject({ completion_tokens: 1000, cost: 0.0045 });
        expect(await k.spent()).toBe(4_500);
      });

  it('the reservation prices the completion at the dearer of the two', async () => {
    // max_tokens 1000: 2,000 micro-USD at the completion price would fit 0.004 USD; 5,000 at
    // internal_reasoning does not.
    const k = await newKey({ quota_limit: 0.004 });
    const r = await post(k.key, '/v1/chat/completions', {
      ...INGRESS[0]!.body('acme/think', 'think', [], false),
      max_tokens: 1000,
    });
    expect(r.status).toBe(402);
  });
});

describe('details past their totals reach the client clamped', () => {
  for (const stream of [false, true]) {
    it(`chat, ${stream ? 'streamed' : 'not streamed'}`, async () => {
      const r = await post(c.key, '/v1/chat/completions', INGRESS[0]!.body('acme/pic', 'odd', [], stream));
      const u = INGRESS[0]!.usage(r);
      expect(u).toMatchObject({ prompt_tokens: 10, completion_tokens: 5 });
      expect(u.prompt_tokens_details.cached_tokens).toBe(10);
      expect(u.prompt_tokens_details.cache_write_tokens ?? 0).toBe(0);
      expect(u.completion_tokens_details.reasoning_tokens).toBe(5);
    });

    it(`messages, ${stream ? 'streamed' : 'not streamed'}`, async () => {
      const r = await post(c.key, '/v1/messages', INGRESS[1]!.body('acme/pic', 'odd', [], stream));
      const u = INGRESS[1]!.usage(r);
      expect(u).toMatchObject({
        input_tokens: 0,
        output_tokens: 5,
        cache_read_input_tokens: 10,
        cache_creation_input_tokens: 0,
      });
    });

    it(`responses, ${stream ? 'streamed' : 'not streamed'}`, async () => {
      const r = await post(c.key, '/v1/responses', INGRESS[2]!.body('acme/pic', 'odd', [], stream));
      const u = INGRESS[2]!.usage(r);
      expect(u).toMatchObject({
        input_tokens: 10,
        input_tokens_details: { cached_tokens: 10 },
        output_tokens: 5,
        output_tokens_details: { reasoning_tokens: 5 },
      });
    });
  }
});

describe('a settlement past the limit', () => {
  it('refuses the next request of the key instead of serving it from leased credit', async () => {
    // 500 micro-USD; each request is estimated at a few dozen and costs 20, so the instance holds
    // credit after a few of them. Then one costs 10,010 (an upstream past max_tokens).
    const k = await newKey({ quota_limit: 0.0005 });
    const ask = (word: string) =>
      post(k.key, '/v1/chat/completions', INGRESS[0]!.body('acme/cheap', word, [], false));
    for (let i = 0; i < 3; i++) expect((await ask('pic')).status).toBe(200);
    expect((await ask('big')).status).toBe(200);
    const sent = up.requests.length;
    const next = await ask('pic');
    expect(next.status).toBe(402);
    expect(next.json.error.metadata.scope).toBe('key');
    expect(up.requests.length).toBe(sent);
    expect(await k.spent()).toBe(3 * 20 + 10_010);
    const key = (await c.gw.call('GET', `/api/key/${k.id}`, { cookie: c.cookie })).body.data;
    expect(key.status).toBe(4);
  });
});
