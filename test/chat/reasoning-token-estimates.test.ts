import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampledTokens } from '../../src/gateway/chat/tokens.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { type ChatGateway, model, oaChunk, rawStream, sse, startChatGateway } from './chat-helpers.js';

/**
 * Reasoning tokens of an OpenAI-compatible upstream that reports no `completion_tokens_details`
 * (vLLM, llama.cpp: the reasoning comes as `reasoning_content` or `reasoning`): estimated from the
 * reasoning text, as for Anthropic, never past the completion count; a figure the upstream gives
 * is kept. Before, the answer showed `reasoning_tokens: 0`.
 */
let up: FakeUpstream;
let c: ChatGateway;
const THOUGHT = 'The user wants the capital of France. That is Paris, a well known fact.';
const USAGE = { prompt_tokens: 12, completion_tokens: 40, total_tokens: 52 };

const answer = (message: Record<string, unknown>, usage: Record<string, unknown> = USAGE) => ({
  id: 'chatcmpl-v',
  object: 'chat.completion',
  created: 1700000000,
  model: 'qwen3',
  choices: [
    { index: 0, message: { role: 'assistant', content: 'Paris.', ...message }, finish_reason: 'stop' },
  ],
  usage,
});

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': (req) => {
      const ask = req.json.messages.at(-1).content;
      if (req.json.stream)
        return {
          sse: sse([
            oaChunk({ role: 'assistant', content: '' }),
            oaChunk({ reasoning_content: THOUGHT.slice(0, 30), reasoning: THOUGHT.slice(0, 30) }),
            oaChunk({ reasoning: THOUGHT.slice(30) }),
            oaChunk({ content: 'Paris.' }, 'stop'),
            {
              ...oaChunk({}),
              choices: [],
              usage: ask === 'tiny' ? { ...USAGE, completion_tokens: 3 } : USAGE,
            },
          ]),
        };
      // vLLM: the reasoning under both names, no completion_tokens_details.
      if (ask === 'vllm') return { json: answer({ reasoning_content: THOUGHT, reasoning: THOUGHT }) };
      if (ask === 'reported')
        return {
          json: answer(
            { reasoning: THOUGHT },
            { ...USAGE, completion_tokens_details: { reasoning_tokens: 25 } },
          ),
        };
      if (ask === 'null figure')
        return {
          json: answer(
            { reasoning: THOUGHT },
            { ...USAGE, completion_tokens_details: { reasoning_tokens: null } },
          ),
        };
      return { json: answer({}) };
    },
  });
  c = await startChatGateway({
    channels: [
      { name: 'v', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: ['t/qwen'] },
    ],
    models: [model('t/qwen')],
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const ask = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 't/qwen',
  messages: [{ role: 'user', content }],
  ...extra,
});
const chat = async (body: Record<string, unknown>) => {
  const r = await c.gw.call('POST', '/v1/chat/completions', { token: c.key, body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};
const ESTIMATE = sampledTokens([THOUGHT]);

describe('reasoning tokens an OpenAI-compatible upstream did not report', () => {
  it('are estimated from the reasoning text (vLLM reasoning_content / reasoning)', async () => {
    expect(ESTIMATE).toBeGreaterThan(0);
    expect(ESTIMATE).toBeLessThan(USAGE.completion_tokens);
    const body = await chat(ask('vllm'));
    expect(body.choices[0].message.reasoning).toBe(THOUGHT);
    expect(body.usage.completion_tokens_details).toEqual({ reasoning_tokens: ESTIMATE });
    expect(body.usage.completion_tokens).toBe(40);
    // With usage.include too.
    const inc = await chat(ask('vllm', { usage: { include: true } }));
    expect(inc.usage.completion_tokens_details).toEqual({ reasoning_tokens: ESTIMATE });
  });

  it('so is a figure that is no count (null)', async () => {
    const body = await chat(ask('null figure'));
    expect(body.usage.completion_tokens_details).toEqual({ reasoning_tokens: ESTIMATE });
  });

  it('a reported figure is kept; no reasoning, none estimated', async () => {
    expect((await chat(ask('reported'))).usage.completion_tokens_details).toEqual({ reasoning_tokens: 25 });
    expect((await chat(ask('plain'))).usage.completion_tokens_details).toBeUndefined();
  });

  it('streamed: estimated from the reasoning deltas, at most the completion count', async () => {
    const s = await rawStream(c, ask('streamed', { stream_options: { include_usage: true } }));
    expect(s.res.status).toBe(200);
    expect(s.chunks.at(-1).usage.completion_tokens_details).toEqual({ reasoning_tokens: ESTIMATE });
    const tiny = await rawStream(c, ask('tiny', { stream_options: { include_usage: true } }));
    expect(tiny.chunks.at(-1).usage.completion_tokens).toBe(3);
    expect(tiny.chunks.at(-1).usage.completion_tokens_details).toEqual({ reasoning_tokens: 3 });
  });
});
