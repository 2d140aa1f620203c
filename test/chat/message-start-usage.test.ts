import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { type ChatGateway, geminiChannel, model, startChatGateway } from './chat-helpers.js';

/**
 * /v1/messages streams its message_start with the input counts the upstream reported before the
 * first delta (Gemini's usageMetadata, on every chunk): a cached count past the prompt's reaches
 * the client there clamped too, as in message_delta (docs/routing.md, "Billing once").
 */
let ge: FakeUpstream;
let c: ChatGateway;

const chunk = (text: string, finishReason?: string) =>
  `data: ${JSON.stringify({
    candidates: [
      { content: { parts: [{ text }], role: 'model' }, index: 0, ...(finishReason ? { finishReason } : {}) },
    ],
    usageMetadata: { promptTokenCount: 10, cachedContentTokenCount: 50, candidatesTokenCount: 1 },
  })}\n\n`;

beforeAll(async () => {
  ge = await startFakeUpstream({
    'POST /v1beta/models/gemini-2.5-flash:streamGenerateContent': { sse: [chunk('o'), chunk('k', 'STOP')] },
  });
  c = await startChatGateway({
    channels: [geminiChannel('google', ge, { 'google/g': 'gemini-2.5-flash' })],
    models: [model('google/g')],
  });
});
afterAll(async () => {
  await c?.gw.close();
  await ge?.close();
});

describe('message_start usage', () => {
  it('carries a cached count no larger than the prompt the upstream reported', async () => {
    const res = await fetch(`${c.gw.url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'google/g',
        max_tokens: 10,
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
    expect(res.status).toBe(200);
    const events = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)));
    const start = events.find((e) => e.type === 'message_start');
    expect(start.message.usage).toMatchObject({ input_tokens: 0, cache_read_input_tokens: 10 });
    const delta = events.filter((e) => e.type === 'message_delta').at(-1);
    expect(delta.usage).toMatchObject({ input_tokens: 0, cache_read_input_tokens: 10 });
  });
});
