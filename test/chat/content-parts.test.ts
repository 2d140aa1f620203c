import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { type ChatGateway, model, rawStream, sse, startChatGateway, userMsg } from './chat-helpers.js';

/**
 * Mistral's reasoning models (Magistral) answer with `content` as a list of chunks: `thinking`
 * (whose `thinking` is itself a list of text chunks) and `text`, streamed and not. A
 * /v1/chat/completions client always gets string content, the thinking as `reasoning`
 * (left out with `reasoning.exclude`), and the other ingresses the same text and thinking.
 */
const head = {
  id: 'cmpl-m',
  object: 'chat.completion.chunk',
  created: 1700000000,
  model: 'magistral-medium-2509',
};
const chunk = (delta: object, finish: string | null = null) => ({
  ...head,
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const think = (text: string) => [{ type: 'thinking', thinking: [{ type: 'text', text }] }];
const STREAM = sse([
  chunk({ role: 'assistant', content: '' }),
  chunk({ content: think('The user says hi') }),
  chunk({ content: think('. Greet back.') }),
  chunk({ content: [{ type: 'text', text: 'Hello' }] }),
  chunk({ content: '!' }),
  { ...chunk({ content: '' }, 'stop'), usage: { prompt_tokens: 5, completion_tokens: 12, total_tokens: 17 } },
]);
const ANSWER = {
  id: 'cmpl-m',
  object: 'chat.completion',
  created: 1700000000,
  model: 'magistral-medium-2509',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: [{ type: 'text', text: 'The user says hi. Greet back.' }] },
          { type: 'text', text: 'Hello!' },
        ],
      },
      finish_reason: 'stop',
    },
  ],
  usage: { prompt_tokens: 5, completion_tokens: 12, total_tokens: 17 },
};

let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': (req) => (req.json?.stream ? { sse: STREAM } : { json: ANSWER }),
  });
  c = await startChatGateway({
    channels: [
      {
        name: 'mi',
        kind: 'openai-compatible',
        base_url: `${up.url}/v1`,
        keys: ['k'],
        models: ['mistral/magistral'],
      },
    ],
    models: [model('mistral/magistral')],
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const body = { model: 'mistral/magistral', messages: userMsg('hi') };
const joined = (chunks: any[], field: string) =>
  chunks
    .map((ch) => {
      const v = ch.choices[0]?.delta?.[field];
      if (v !== undefined && v !== null && typeof v !== 'string')
        throw new Error(`${field} is ${JSON.stringify(v)}`);
      return v ?? '';
    })
    .join('');

describe("Mistral's list-shaped content", () => {
  it('streamed: string content, thinking as reasoning', async () => {
    const r = await rawStream(c, body);
    expect(joined(r.chunks, 'content')).toBe('Hello!');
    expect(joined(r.chunks, 'reasoning')).toBe('The user says hi. Greet back.');
  });

  it('streamed with reasoning.exclude: the content alone', async () => {
    const r = await rawStream(c, { ...body, reasoning: { exclude: true } });
    expect(joined(r.chunks, 'content')).toBe('Hello!');
    expect(r.text).not.toContain('Greet back');
  });

  it('not streamed: string content, thinking as reasoning; with exclude, no reasoning', async () => {
    const r = await c.gw.call('POST', '/v1/chat/completions', { token: c.key, body });
    expect(r.status).toBe(200);
    expect(r.body.choices[0].message).toMatchObject({
      content: 'Hello!',
      reasoning: 'The user says hi. Greet back.',
    });
    const ex = await c.gw.call('POST', '/v1/chat/completions', {
      token: c.key,
      body: { ...body, reasoning: { exclude: true } },
    });
    expect(ex.body.choices[0].message.content).toBe('Hello!');
    expect(ex.body.choices[0].message.reasoning).toBeUndefined();
  });

  it('through /v1/messages: a thinking block and a text block', async () => {
    const r = await c.gw.call('POST', '/v1/messages', {
      token: c.key,
      body: { model: 'mistral/magistral', max_tokens: 100, messages: userMsg('hi') },
    });
    expect(r.status).toBe(200);
    expect(r.body.content).toEqual([
      expect.objectContaining({ type: 'thinking', thinking: 'The user says hi. Greet back.' }),
      { type: 'text', text: 'Hello!' },
    ]);
  });
});
