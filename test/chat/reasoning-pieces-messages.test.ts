import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { type ChatGateway, model, oaCompletion, sse, startChatGateway } from './chat-helpers.js';

/**
 * Reasoning details that OpenRouter streams in pieces, through the Anthropic Messages ingress
 * (/v1/messages) with the official @anthropic-ai/sdk as the client. OpenRouter sends one detail
 * over several chunks under its `type` and `index` (reference/openrouter.md §5.3: the text of a
 * `reasoning.text` piece by piece, its signature in a later chunk, an encrypted blob in parts),
 * and wants the whole details back unchanged on the next turn. Another upstream's signed
 * reasoning rides in a thinking block's signature (docs/anthropic-ingress.md): it must be the
 * merged details, not the last piece of each.
 */

const FORMAT = 'google-gemini-v1';
const CALL_ID = 'tool_get_weather_Pq7LmN2vXc4R';
const SIG_TEXT = 'EsIBAdHtim9vR4uLw+Q2k8sT1nJ6yH3pB0mX/cZ5aVf7gD9eKoN2iU4tWqSr1==';
const SIG_CALL = 'CoMCAdHtim8Xq3T+vJ0cQ1uF9m2wLk7sZ/aPq4Rr8n1YbG5eD0hWjK3tUvXy6cN2Mo==';

/** OpenRouter in front of Gemini 3, streamed. */
const orChunk = (delta: object, finish: string | null = null) => ({
  id: 'gen-1764553300-Rt5WqZ8xC2vB7nM4kL0p',
  provider: 'Google AI Studio',
  model: 'google/gemini-3-flash-preview',
  object: 'chat.completion.chunk',
  created: 1764553300,
  choices: [
    { index: 0, delta, finish_reason: finish, native_finish_reason: finish && 'STOP', logprobs: null },
  ],
});
const piece = (p: object) => ({ format: FORMAT, ...p });
/** The chunk of the call, with its signature (index 1, with the call's id). */
const SPLIT_STREAM_CALL = orChunk({
  role: 'assistant',
  content: '',
  reasoning: null,
  reasoning_details: [piece({ type: 'reasoning.encrypted', data: SIG_CALL, id: CALL_ID, index: 1 })],
  tool_calls: [
    {
      index: 0,
      id: CALL_ID,
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    },
  ],
});
/**
 * The thought's text in two pieces and its signature in a third (index 0), a piece that does not
 * repeat the format, then the call's signature (index 1, with the call's id) on the chunk of the
 * call itself.
 */
const SPLIT_STREAM = sse([
  orChunk({
    role: 'assistant',
    content: '',
    reasoning: '**Planning** ',
    reasoning_details: [piece({ type: 'reasoning.text', text: '**Planning** ', index: 0 })],
  }),
  orChunk({
    role: 'assistant',
    content: '',
    reasoning: 'the weather lookup',
    reasoning_details: [piece({ type: 'reasoning.text', text: 'the weather lookup', index: 0 })],
  }),
  orChunk({
    role: 'assistant',
    content: '',
    reasoning: null,
    reasoning_details: [{ type: 'reasoning.text', text: '', signature: SIG_TEXT, index: 0 }],
  }),
  SPLIT_STREAM_CALL,
  orChunk({ role: 'assistant', content: '', reasoning: null, reasoning_details: [] }, 'tool_calls'),
]);

/**
 * A piece that comes after its detail's signature was written: the thought's text and its
 * signature, a text (which ends the thinking block, signature and all), then more of the thought's
 * text under its index, then the call with its signature.
 */
const LATE_STREAM = sse([
  orChunk({
    role: 'assistant',
    content: '',
    reasoning: '**Planning** ',
    reasoning_details: [piece({ type: 'reasoning.text', text: '**Planning** ', index: 0 })],
  }),
  orChunk({
    role: 'assistant',
    content: '',
    reasoning: null,
    reasoning_details: [{ type: 'reasoning.text', text: '', signature: SIG_TEXT, index: 0 }],
  }),
  orChunk({ role: 'assistant', content: 'Checking.', reasoning: null, reasoning_details: [] }),
  orChunk({
    role: 'assistant',
    content: '',
    reasoning: 'the weather lookup',
    reasoning_details: [{ type: 'reasoning.text', text: 'the weather lookup', index: 0 }],
  }),
  SPLIT_STREAM_CALL,
  orChunk({ role: 'assistant', content: '', reasoning: null, reasoning_details: [] }, 'tool_calls'),
]);

/** The details as OpenRouter would have given them whole (not streamed), and wants back. */
const WHOLE = [
  {
    type: 'reasoning.text',
    text: '**Planning** the weather lookup',
    signature: SIG_TEXT,
    format: FORMAT,
    index: 0,
  },
  { type: 'reasoning.encrypted', data: SIG_CALL, id: CALL_ID, format: FORMAT, index: 1 },
];

/** The same answer not streamed: its details whole. */
const WHOLE_ANSWER = {
  id: 'gen-1764553300-Rt5WqZ8xC2vB7nM4kL0p',
  object: 'chat.completion',
  created: 1764553300,
  model: 'google/gemini-3-flash-preview',
  provider: 'Google AI Studio',
  choices: [
    {
      index: 0,
      logprobs: null,
      finish_reason: 'tool_calls',
      native_finish_reason: 'STOP',
      message: {
        role: 'assistant',
        content: '',
        refusal: null,
        reasoning: '**Planning** the weather lookup',
        reasoning_details: WHOLE,
        tool_calls: [
          {
            id: CALL_ID,
            index: 0,
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
    },
  ],
  usage: { prompt_tokens: 60, completion_tokens: 120, total_tokens: 180 },
};

let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': (req) =>
      req.json.stream
        ? { sse: req.json.model === 'google/gemini-3-late' ? LATE_STREAM : SPLIT_STREAM }
        : { json: req.json.messages.length === 1 ? WHOLE_ANSWER : oaCompletion('Paris is 18°C and sunny.') },
  });
  c = await startChatGateway({
    channels: [
      {
        name: 'or',
        kind: 'openai-compatible',
        base_url: `${up.url}/v1`,
        keys: ['sk-or'],
        models: ['acme/or-gem3', 'acme/or-late'],
        model_mapping: {
          'acme/or-gem3': 'google/gemini-3-flash-preview',
          'acme/or-late': 'google/gemini-3-late',
        },
        settings: { reasoningObject: true },
      },
    ],
    models: [
      model('acme/or-gem3', { supported_parameters: ['tools', 'reasoning', 'max_tokens'] }),
      model('acme/or-late', { supported_parameters: ['tools', 'reasoning', 'max_tokens'] }),
    ],
    gateway: { retry_base_ms: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const client = () => new Anthropic({ apiKey: c.key, baseURL: c.gw.url, maxRetries: 0 });
const TOOLS: Anthropic.Tool[] = [
  {
    name: 'get_weather',
    description: 'Weather of a city',
    input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
];
const params = (messages: Anthropic.MessageParam[], model = 'acme/or-gem3') => ({
  model,
  max_tokens: 4000,
  thinking: { type: 'enabled' as const, budget_tokens: 1024 },
  tools: TOOLS,
  messages,
});
const QUESTION: Anthropic.MessageParam = { role: 'user', content: 'Weather in Paris?' };

const RESULTS: Anthropic.MessageParam = {
  role: 'user',
  content: [{ type: 'tool_result', tool_use_id: CALL_ID, content: '18°C, sunny' }],
};
const back = (m: Anthropic.Message): Anthropic.MessageParam => ({
  role: 'assistant',
  content: m.content as Anthropic.ContentBlockParam[],
});
/** The reasoning details the upstream got with the assistant turn of the last request. */
const sentBack = () => {
  const turn = up.requests.at(-1)!.json.messages[1];
  expect(turn.tool_calls[0].id).toBe(CALL_ID);
  return turn.reasoning_details;
};

describe('reasoning details streamed in pieces (OpenRouter)', () => {
  it('ride merged in one signature and go back whole, as OpenRouter gave them', async () => {
    const events: string[] = [];
    const s = client().messages.stream(params([QUESTION]));
    s.on('streamEvent', (ev) => {
      if (ev.type === 'content_block_delta') events.push(`${ev.index}:${ev.delta.type}`);
      if (ev.type === 'content_block_stop') events.push(`${ev.index}:stop`);
    });
    const a = await s.finalMessage();
    expect(a.content).toEqual([
      {
        type: 'thinking',
        thinking: '**Planning** the weather lookup',
        signature: expect.stringMatching(/^mgr1\./),
      },
      { type: 'tool_use', id: CALL_ID, name: 'get_weather', input: { city: 'Paris' } },
    ]);
    // One signature, as Anthropic sends one: just before the thinking block's stop.
    expect(events.slice(0, 4)).toEqual([
      '0:thinking_delta',
      '0:thinking_delta',
      '0:signature_delta',
      '0:stop',
    ]);

    await client().messages.create(params([QUESTION, back(a), RESULTS]));
    expect(sentBack()).toEqual(WHOLE);
  });

  it('not streamed, a signed text detail goes back once, not beside a copy of its text', async () => {
    const a = await client().messages.create(params([QUESTION]));
    expect(a.content).toEqual([
      {
        type: 'thinking',
        thinking: '**Planning** the weather lookup',
        signature: expect.stringMatching(/^mgr1\./),
      },
      { type: 'tool_use', id: CALL_ID, name: 'get_weather', input: { city: 'Paris' } },
    ]);
    await client().messages.create(params([QUESTION, back(a), RESULTS]));
    expect(sentBack()).toEqual(WHOLE);
  });

  it('a piece after its detail’s signature was written rides in a thinking block of its own, and goes back joined', async () => {
    const s = client().messages.stream(params([QUESTION], 'acme/or-late'));
    const a = await s.finalMessage();
    // The signature ended the first thinking block: the text that came after it is thinking of its
    // own, signed (a thinking block the SDK keeps as it came), and none of it is lost.
    expect(a.content).toEqual([
      { type: 'thinking', thinking: '**Planning** ', signature: expect.stringMatching(/^mgr1\./) },
      { type: 'text', text: 'Checking.' },
      { type: 'thinking', thinking: 'the weather lookup', signature: expect.stringMatching(/^mgr1\./) },
      { type: 'tool_use', id: CALL_ID, name: 'get_weather', input: { city: 'Paris' } },
    ]);
    await client().messages.create(params([QUESTION, back(a), RESULTS], 'acme/or-late'));
    expect(sentBack()).toEqual(WHOLE);
  });
});
