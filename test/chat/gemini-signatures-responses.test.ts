import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { type ChatGateway, fixture, model, startChatGateway } from './chat-helpers.js';

/**
 * Gemini's thought signatures through the Responses ingress (/v1/responses, streamed, with the
 * official `openai` SDK), carried in a reasoning item's `encrypted_content`. Gemini numbers the
 * parts of each streamed chunk from 0, so the signature on a text part and the one on the next
 * functionCall part come as two details of the same type and index: each must go back on its own
 * part, not as one joined signature.
 */

const TEXT_CALL = 'Weather in Paris, then London?';
const TEXT_CALL_TEXT = 'Paris is 18°C and sunny. Checking London as well, one moment.';
const SIG_TEXT = 'EsIBAdHtim9vR4uLw+Q2k8sT1nJ6yH3pB0mX/cZ5aVf7gD9eKoN2iU4tWqSr1==';
const SIG_LONDON = 'CtwBAdHtim8vQ2nL5pR7sK1uY9eW3xZ+bT0mJ4cF6gH8iD2aN/oV5qS7rE1wP==';

/** Gemini's events end in CRLF pairs: one write each. */
const crlfSteps = (text: string) => text.split(/(?<=\r\n\r\n)/).filter((s) => s.trim() !== '');

let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1beta/models/gemini-3-flash-preview:streamGenerateContent': () => ({
      sse: crlfSteps(fixture('gemini/gemini3-signed-text-call-stream.sse')),
    }),
  });
  c = await startChatGateway({
    channels: [
      {
        name: 'ge',
        kind: 'gemini',
        base_url: up.url,
        keys: ['AIza'],
        models: ['acme/gem3'],
        model_mapping: { 'acme/gem3': 'gemini-3-flash-preview' },
      },
    ],
    models: [model('acme/gem3', { supported_parameters: ['tools', 'reasoning', 'max_tokens'] })],
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
    expect(up.requests.at(-1)!.json.contents[1]).toEqual({
      role: 'model',
      parts: [
        { text: TEXT_CALL_TEXT, thoughtSignature: SIG_TEXT },
        { functionCall: { name: 'get_weather', args: { city: 'London' } }, thoughtSignature: SIG_LONDON },
      ],
    });
  });
});
