import type OpenAI from 'openai';
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
  WEATHER_FUNCTION,
  PIECES_WHOLE as WHOLE,
} from './reasoning-fixtures.js';
import { openaiClient } from './sdk-clients.js';

/**
 * Reasoning details that OpenRouter streams in pieces, through the Responses ingress
 * (/v1/responses, streamed, with the official `openai` SDK), carried in reasoning items'
 * `encrypted_content`. A streamed reasoning item carries the details that came while it was open;
 * a detail whose pieces come on both sides of a text (its text, the answer's text, then its
 * signature and more of its text) lands in two items. Sent back in `input`, the pieces must be
 * joined by type and index again: OpenRouter wants the detail whole, as it gives it not streamed.
 */

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

let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': (req) =>
      req.json.stream ? { sse: STREAM } : { json: oaCompletion('Paris is 18°C and sunny.') },
  });
  c = await startChatGateway({
    channels: [openrouterChannel(up, { 'acme/or-gem3': 'google/gemini-3-flash-preview' })],
    models: [reasoningModel('acme/or-gem3')],
    gateway: { retry_base_ms: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const client = () => openaiClient(c);
const tools = [WEATHER_FUNCTION];

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
    const turn = lastSentTo(up, '/v1/chat/completions').json.messages[1];
    expect(turn.tool_calls[0].id).toBe(CALL_ID);
    expect(turn.reasoning).toBe('**Planning** the weather lookup');
    expect(turn.reasoning_details).toEqual(WHOLE);
  });
});
