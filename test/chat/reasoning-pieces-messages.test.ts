import type Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { type ChatGateway, lastSentTo, oaCompletion, sse, startChatGateway } from './chat-helpers.js';
import {
  PIECES_CALL_ID as CALL_ID,
  GEMINI_FORMAT as FORMAT,
  openrouterChannel,
  openrouterChunk as orChunk,
  reasoningModel,
  SIG_PARIS as SIG_CALL,
  SIG_TEXT,
  WEATHER_TOOL,
  PIECES_WHOLE as WHOLE,
} from './reasoning-fixtures.js';
import { anthropicClient } from './sdk-clients.js';

/**
 * Reasoning details that OpenRouter streams in pieces, through the Anthropic Messages ingress
 * (/v1/messages) with the official @anthropic-ai/sdk as the client. OpenRouter sends one detail
 * over several chunks under its `type` and `index` (reference/openrouter.md §5.3: the text of a
 * `reasoning.text` piece by piece, its signature in a later chunk, an encrypted blob in parts),
 * and wants the whole details back unchanged on the next turn. Another upstream's signed
 * reasoning rides in a thinking block's signature (docs/anthropic-ingress.md): it must be the
 * merged details, not the last piece of each.
 */

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
      openrouterChannel(up, {
        'acme/or-gem3': 'google/gemini-3-flash-preview',
        'acme/or-late': 'google/gemini-3-late',
      }),
    ],
    models: [reasoningModel('acme/or-gem3'), reasoningModel('acme/or-late')],
    gateway: { retry_base_ms: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const client = () => anthropicClient(c);
const TOOLS = [WEATHER_TOOL];
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
  const turn = lastSentTo(up, '/v1/chat/completions').json.messages[1];
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
