import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { type ChatGateway, model, oaCompletion, sse, startChatGateway } from './chat-helpers.js';

/**
 * Reasoning details that OpenRouter streams in pieces, through the Responses ingress
 * (/v1/responses, streamed, with the official `openai` SDK), carried in reasoning items'
 * `encrypted_content`. A streamed reasoning item carries the details that came while it was open;
 * a detail whose pieces come on both sides of a text (its text, the answer's text, then its
 * signature and more of its text) lands in two items. Sent back in `input`, the pieces must be
 * joined by type and index again: OpenRouter wants the detail whole, as it gives it not streamed.
 */

const FORMAT = 'google-gemini-v1';
const CALL_ID = 'tool_get_weather_Pq7LmN2vXc4R';
const SIG_TEXT = 'EsIBAdHtim9vR4uLw+Q2k8sT1nJ6yH3pB0mX/cZ5aVf7gD9eKoN2iU4tWqSr1==';
const SIG_CALL = 'CoMCAdHtim8Xq3T+vJ0cQ1uF9m2wLk7sZ/aPq4Rr8n1YbG5eD0hWjK3tUvXy6cN2Mo==';

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

/**
 * The thought's first piece, the answer's text, the thought's signature (alone, while the text is
 * written), the rest of the thought's text, then the call with its own signature.
 */
const STREAM = sse([
  orChunk({
    role: 'assistant',
    content: '',
    reasoning: '**Planning** ',
    reasoning_details: [{ type: 'reasoning.text', text: '**Planning** ', format: FORMAT, index: 0 }],
  }),
  orChunk({ role: 'assistant', content: 'Checking.', reasoning: null, reasoning_details: [] }),
  orChunk({
    role: 'assistant',
    content: '',
    reasoning: null,
    reasoning_details: [{ type: 'reasoning.text', text: '', signature: SIG_TEXT, index: 0 }],
  }),
  orChunk({
    role: 'assistant',
    content: '',
    reasoning: 'the weather lookup',
    reasoning_details: [{ type: 'reasoning.text', text: 'the weather lookup', index: 0 }],
  }),
  orChunk({
    role: 'assistant',
    content: '',
    reasoning: null,
    reasoning_details: [
      { type: 'reasoning.encrypted', data: SIG_CALL, id: CALL_ID, format: FORMAT, index: 1 },
    ],
    tool_calls: [
      {
        index: 0,
        id: CALL_ID,
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      },
    ],
  }),
  orChunk({ role: 'assistant', content: '', reasoning: null, reasoning_details: [] }, 'tool_calls'),
]);

/** The details as OpenRouter gives them whole (not streamed), and wants back. */
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

let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': (req) =>
      req.json.stream ? { sse: STREAM } : { json: oaCompletion('Paris is 18°C and sunny.') },
  });
  c = await startChatGateway({
    channels: [
      {
        name: 'or',
        kind: 'openai-compatible',
        base_url: `${up.url}/v1`,
        keys: ['sk-or'],
        models: ['acme/or-gem3'],
        model_mapping: { 'acme/or-gem3': 'google/gemini-3-flash-preview' },
        settings: { reasoningObject: true },
      },
    ],
    models: [model('acme/or-gem3', { supported_parameters: ['tools', 'reasoning', 'max_tokens'] })],
    gateway: { retry_base_ms: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const client = () => new OpenAI({ apiKey: c.key, baseURL: `${c.gw.url}/v1`, maxRetries: 0 });
const tools: OpenAI.Responses.Tool[] = [
  {
    type: 'function',
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    strict: false,
  },
];

describe('reasoning details streamed in pieces (OpenRouter) through /v1/responses', () => {
  it('pieces of one detail in two reasoning items go back joined, as OpenRouter gave it', async () => {
    const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'Weather in Paris?' }];
    const r = await client()
      .responses.stream({
        model: 'acme/or-gem3',
        input,
        tools,
        reasoning: { effort: 'low' },
        include: ['reasoning.encrypted_content'],
      })
      .finalResponse();
    expect(r.output.map((o) => o.type)).toEqual(['reasoning', 'message', 'reasoning', 'function_call']);
    const call = r.output[3] as OpenAI.Responses.ResponseFunctionToolCall;

    await client()
      .responses.stream({
        model: 'acme/or-gem3',
        input: [
          ...input,
          ...(r.output as OpenAI.Responses.ResponseInputItem[]),
          { type: 'function_call_output', call_id: call.call_id, output: '18°C, sunny' },
        ],
        tools,
        reasoning: { effort: 'low' },
      })
      .finalResponse();
    const turn = up.requests.at(-1)!.json.messages[1];
    expect(turn.tool_calls[0].id).toBe(CALL_ID);
    expect(turn.reasoning).toBe('**Planning** the weather lookup');
    expect(turn.reasoning_details).toEqual(WHOLE);
  });
});
