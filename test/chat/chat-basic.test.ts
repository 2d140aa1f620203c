import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let up: FakeUpstream;
let gw: TestGateway;
let key: string;

const completion = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1700000000,
  model: 'small-1',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
};

const sse = (chunks: unknown[]) => [
  ...chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`),
  'data: [DONE]\n\n',
];
const chunk = (delta: object, finish: string | null = null) => ({
  id: 'chatcmpl-2',
  object: 'chat.completion.chunk',
  created: 1700000000,
  model: 'small-1',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': (req) =>
      req.json.stream
        ? {
            sse: sse([
              chunk({ role: 'assistant', content: '' }),
              chunk({ content: 'Hel' }),
              chunk({ content: 'lo' }),
              chunk({}, 'stop'),
              {
                ...chunk({}),
                choices: [],
                usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
              },
            ]),
          }
        : { json: completion },
  });
  gw = await startTestGateway({
    channels: [
      {
        name: 'fake',
        kind: 'openai-compatible',
        base_url: `${up.url}/v1`,
        keys: ['up-key'],
        models: ['acme/small'],
      },
    ],
    models: [
      {
        id: 'acme/small',
        context_length: 4096,
        max_completion_tokens: 1024,
        pricing: { prompt: '0.000001', completion: '0.000002' },
      },
    ],
  });
  const cookie = await gw.login();
  key = (await gw.call('POST', '/api/key', { cookie, body: { name: 'chat' } })).body.data.key;
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

describe('chat completions', () => {
  it('answers a plain request through the openai SDK', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key });
    const r = await client.chat.completions.create({
      model: 'acme/small',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(r.choices[0]!.message.content).toBe('Hello there');
    expect(r.model).toBe('acme/small');
    expect(Number.isInteger(r.created)).toBe(true);
    expect(r.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 });
    const sent = up.requests.at(-1)!;
    expect(sent.headers.authorization).toBe('Bearer up-key');
    expect(sent.json.model).toBe('acme/small');
  });

  it('streams through the openai SDK with a final usage chunk', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key });
    const stream = await client.chat.completions.create({
      model: 'acme/small',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: any;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      if (c.usage) usage = c.usage;
    }
    expect(text).toBe('Hello');
    expect(usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 2 });
    expect(usage.cost).toBeCloseTo(10 * 0.000001 + 2 * 0.000002, 12);
  });

  it('rejects out-of-range parameters naming them', async () => {
    for (const [field, value] of [
      ['temperature', 2.5],
      ['top_p', 0],
      ['top_k', 0],
      ['frequency_penalty', -3],
      ['presence_penalty', 2.1],
      ['repetition_penalty', 0],
      ['min_p', 1.5],
      ['top_a', -0.1],
      ['max_tokens', 0],
      ['top_logprobs', 21],
      // OpenAI's limit; it also keeps Gemini under its own (5 stopSequences).
      ['stop', ['a', 'b', 'c', 'd', 'e']],
    ] as const) {
      const r = await gw.call('POST', '/v1/chat/completions', {
        token: key,
        body: { model: 'acme/small', messages: [{ role: 'user', content: 'x' }], [field]: value },
      });
      expect(r.status, field).toBe(400);
      expect(r.body.error.message, field).toContain(field);
      expect(r.body.error.code).toBe(400);
    }
  });

  it('rejects max_tokens at or above the context length', async () => {
    const r = await gw.call('POST', '/v1/chat/completions', {
      token: key,
      body: { model: 'acme/small', messages: [{ role: 'user', content: 'x' }], max_tokens: 4096 },
    });
    expect(r.status).toBe(400);
    expect(r.body.error.param).toBe('max_tokens');
    expect(r.body.error.message).toMatch(/^max_tokens: /);
    // The newer name (what the openai SDK documents) is named as sent, in the message too.
    const c = await gw.call('POST', '/v1/chat/completions', {
      token: key,
      body: { model: 'acme/small', messages: [{ role: 'user', content: 'x' }], max_completion_tokens: 4096 },
    });
    expect(c.status).toBe(400);
    expect(c.body.error.param).toBe('max_completion_tokens');
    expect(c.body.error.message).toMatch(/^max_completion_tokens: must be below the context length/);
    // Both sent: max_completion_tokens is the limit used, so it is the one checked and named.
    const both = await gw.call('POST', '/v1/chat/completions', {
      token: key,
      body: {
        model: 'acme/small',
        messages: [{ role: 'user', content: 'x' }],
        max_tokens: 100,
        max_completion_tokens: 5000,
      },
    });
    expect(both.status).toBe(400);
    expect(both.body.error.param).toBe('max_completion_tokens');
    expect(both.body.error.message).toMatch(/^max_completion_tokens: /);
  });

  it('404s an unknown model and 401s a bad key', async () => {
    const r = await gw.call('POST', '/v1/chat/completions', {
      token: key,
      body: { model: 'nope/nothing', messages: [{ role: 'user', content: 'x' }] },
    });
    expect(r.status).toBe(404);
    const bad = await gw.call('POST', '/v1/chat/completions', {
      token: 'sk-wrong',
      body: { model: 'acme/small', messages: [{ role: 'user', content: 'x' }] },
    });
    expect(bad.status).toBe(401);
  });

  it('records a request log', async () => {
    await gw.services.requestLogs.flush();
    const cookie = await gw.login();
    const logs = await gw.call('GET', '/api/log?model=acme/small', { cookie });
    expect(logs.body.total).toBeGreaterThanOrEqual(2);
  });
});
