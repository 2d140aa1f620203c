import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { type ChatGateway, fixture, geminiChannel, lastSentTo, startChatGateway } from './chat-helpers.js';
import { crlfSteps, reasoningModel, SIG_LONDON, SIG_TEXT, WEATHER_FUNCTION } from './reasoning-fixtures.js';
import { openaiClient } from './sdk-clients.js';

/**
 * Gemini's thought signatures through the Responses ingress (/v1/responses, streamed, with the
 * official `openai` SDK), carried in a reasoning item's `encrypted_content`. Gemini numbers the
 * parts of each streamed chunk from 0, so the signature on a text part and the one on the next
 * functionCall part come as two details of the same type and index: each must go back on its own
 * part, not as one joined signature.
 */

const TEXT_CALL = 'Weather in Paris, then London?';
const TEXT_CALL_TEXT = 'Paris is 18°C and sunny. Checking London as well, one moment.';

let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1beta/models/gemini-3-flash-preview:streamGenerateContent': () => ({
      sse: crlfSteps(fixture('gemini/gemini3-signed-text-call-stream.sse')),
    }),
  });
  c = await startChatGateway({
    channels: [geminiChannel('ge', up, { 'acme/gem3': 'gemini-3-flash-preview' })],
    models: [reasoningModel('acme/gem3')],
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const client = () => openaiClient(c);
const tools = [WEATHER_FUNCTION];

describe('Gemini thought signatures through /v1/responses, streamed', () => {
  it('two signatures of one answer go back each on its own part', async () => {
    const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: TEXT_CALL }];
    const r = await client()
      .responses.stream({ model: 'acme/gem3', input, tools, include: ['reasoning.encrypted_content'] })
      .finalResponse();
    expect(r.output.map((o) => o.type)).toEqual(['message', 'reasoning', 'function_call']);
    const call = r.output[2] as OpenAI.Responses.ResponseFunctionToolCall;

    await client()
      .responses.stream({
        model: 'acme/gem3',
        input: [
          ...input,
          ...(r.output as OpenAI.Responses.ResponseInputItem[]),
          { type: 'function_call_output', call_id: call.call_id, output: '12°C, light rain' },
        ],
        tools,
      })
      .finalResponse();
    const sent = lastSentTo(up, '/v1beta/models/gemini-3-flash-preview:streamGenerateContent?alt=sse');
    expect(sent.json.contents[1]).toEqual({
      role: 'model',
      parts: [
        { text: TEXT_CALL_TEXT, thoughtSignature: SIG_TEXT },
        { functionCall: { name: 'get_weather', args: { city: 'London' } }, thoughtSignature: SIG_LONDON },
      ],
    });
  });
});
