import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { type ChatGateway, geminiChannel, startChatGateway } from './chat-helpers.js';
import {
  GEMINI_FORMAT as FORMAT,
  reasoningModel,
  SIG_LONDON as SIG_CALL,
  SIG_TEXT,
} from './reasoning-fixtures.js';
import { openaiClient } from './sdk-clients.js';

/**
 * The native Gemini adapter's `reasoning_details` through /v1/chat/completions, with the official
 * `openai` SDK as the client. A client rebuilds streamed details as OpenRouter documents
 * (reference/openrouter.md §5.3): the pieces of one detail share its `type` and `index`, and are
 * joined. Gemini sends each chunk's parts afresh, so the index must not be a part's position in
 * its chunk: over the whole answer, a thought streamed in pieces keeps one index, and each
 * signature, and each thought after something else, takes the next one. Merged so, the streamed
 * details are the ones the same answer has when not streamed.
 */

/** One streamed GenerateContentResponse, as Gemini writes it (CRLF pairs end each event). */
const event = (parts: object[], finishReason?: string) =>
  `data: ${JSON.stringify({
    candidates: [{ content: { parts, role: 'model' }, index: 0, ...(finishReason ? { finishReason } : {}) }],
    usageMetadata: { promptTokenCount: 96, totalTokenCount: 96 },
    modelVersion: 'gemini-3-flash-preview',
    responseId: 'Wm9BafKdMpG0kdUP8r2x4Ak',
  })}\r\n\r\n`;

/**
 * A thought in two chunks, a text whose last piece carries a signature, another thought, then a
 * signed function call: every chunk's parts start again at 0.
 */
const STREAM = [
  event([{ text: '**Planning**\n\nParis first, ', thought: true }]),
  event([{ text: 'then London.', thought: true }]),
  event([{ text: 'Paris is 18°C and sunny. Checking Lon' }]),
  event([{ text: 'don as well.', thoughtSignature: SIG_TEXT }]),
  event([{ text: '**London**\n\nNow the call.', thought: true }]),
  event(
    [{ functionCall: { name: 'get_weather', args: { city: 'London' } }, thoughtSignature: SIG_CALL }],
    'STOP',
  ),
];

/** The same answer not streamed: one part per piece of the stream, whole. */
const WHOLE = {
  candidates: [
    {
      content: {
        parts: [
          { text: '**Planning**\n\nParis first, then London.', thought: true },
          { text: 'Paris is 18°C and sunny. Checking London as well.', thoughtSignature: SIG_TEXT },
          { text: '**London**\n\nNow the call.', thought: true },
          { functionCall: { name: 'get_weather', args: { city: 'London' } }, thoughtSignature: SIG_CALL },
        ],
        role: 'model',
      },
      index: 0,
      finishReason: 'STOP',
    },
  ],
  usageMetadata: { promptTokenCount: 96, candidatesTokenCount: 21, totalTokenCount: 162 },
  modelVersion: 'gemini-3-flash-preview',
  responseId: 'Wm9BafKdMpG0kdUP8r2x4Ak',
};

type Detail = Record<string, unknown> & { type: string; index?: number };

/** A client's merge, as OpenRouter documents it: by type and index, texts and data joined. */
function mergeAsOpenRouter(pieces: Detail[]): Detail[] {
  const out: Detail[] = [];
  const byKey = new Map<string, Detail>();
  for (const p of pieces) {
    const key = `${p.type}:${p.index}`;
    const d = byKey.get(key);
    if (!d) {
      const whole = { ...p };
      byKey.set(key, whole);
      out.push(whole);
      continue;
    }
    for (const f of ['text', 'summary', 'data'] as const)
      if (typeof p[f] === 'string') d[f] = `${(d[f] as string | undefined) ?? ''}${p[f]}`;
    for (const f of ['signature', 'id', 'format'] as const) if (p[f]) d[f] = p[f];
  }
  return out;
}

let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1beta/models/gemini-3-flash-preview:streamGenerateContent': () => ({ sse: STREAM }),
    'POST /v1beta/models/gemini-3-flash-preview:generateContent': () => ({ json: WHOLE }),
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
const body = {
  model: 'acme/gem3',
  messages: [{ role: 'user' as const, content: 'Weather in Paris, then London?' }],
  tools: [
    {
      type: 'function' as const,
      function: {
        name: 'get_weather',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
    },
  ],
  reasoning: { effort: 'low' },
};

describe('Gemini reasoning_details indexes over a whole answer', () => {
  it('streamed pieces merged by type and index are the details of the answer not streamed', async () => {
    const stream = await client().chat.completions.create({ ...body, stream: true } as never);
    const pieces: Detail[] = [];
    for await (const chunk of stream as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>) {
      const delta = chunk.choices[0]?.delta as { reasoning_details?: Detail[] } | undefined;
      pieces.push(...(delta?.reasoning_details ?? []));
    }
    const merged = mergeAsOpenRouter(pieces);
    expect(merged).toEqual([
      { type: 'reasoning.text', text: '**Planning**\n\nParis first, then London.', format: FORMAT, index: 0 },
      { type: 'reasoning.encrypted', data: SIG_TEXT, id: null, format: FORMAT, index: 1 },
      { type: 'reasoning.text', text: '**London**\n\nNow the call.', format: FORMAT, index: 2 },
      { type: 'reasoning.encrypted', data: SIG_CALL, id: expect.any(String), format: FORMAT, index: 3 },
    ]);

    const whole = (await client().chat.completions.create(body as never)) as OpenAI.ChatCompletion;
    const message = whole.choices[0]!.message as { reasoning_details?: Detail[] };
    // The call ids are the gateway's own (Gemini gave none): each answer gets fresh ones.
    const withoutIds = (ds: Detail[]) =>
      ds.map(({ id, ...d }) => ({ ...d, id: id === null ? null : 'call' }));
    expect(withoutIds(message.reasoning_details ?? [])).toEqual(withoutIds(merged));
  });
});
