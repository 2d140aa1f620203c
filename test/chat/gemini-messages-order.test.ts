import type Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { type ChatGateway, fixtureJson, geminiChannel, startChatGateway } from './chat-helpers.js';
import { reasoningModel, WEATHER_TOOL as WEATHER } from './reasoning-fixtures.js';
import { anthropicClient } from './sdk-clients.js';

/**
 * A Gemini answer through the Anthropic Messages ingress (/v1/messages), not streamed: Gemini
 * gives its parts in order (thought parts, `thought: true`; text; functionCall, with
 * thoughtSignatures), and the Anthropic client gets its blocks in that order, as it would from
 * Anthropic, rather than all thinking first, the texts run together and the calls last. Other
 * surfaces (/v1/chat/completions) are unchanged.
 */
const INTERLEAVED = {
  candidates: [
    {
      content: {
        role: 'model',
        parts: [
          { text: '**Planning**\n\nThe user wants Paris and London.', thought: true },
          { text: "I'll check Paris first.", thoughtSignature: 'CiQB0e2Kb7sig1' },
          {
            functionCall: { name: 'get_weather', args: { city: 'Paris' } },
            thoughtSignature: 'CiQB0e2Kb7sig2',
          },
          { text: '**Next**\n\nNow London.', thought: true },
          { text: 'And London.' },
          { functionCall: { name: 'get_weather', args: { city: 'London' } } },
        ],
      },
      index: 0,
      finishReason: 'STOP',
    },
  ],
  usageMetadata: {
    promptTokenCount: 40,
    candidatesTokenCount: 30,
    totalTokenCount: 150,
    thoughtsTokenCount: 80,
  },
  modelVersion: 'gemini-2.5-flash',
  responseId: 'Rq3aaNbwLvzPz7IP6rKX0Qs',
};

let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1beta/models/gemini-2.5-flash:generateContent': (req) =>
      JSON.stringify(req.json.contents).includes('Paris')
        ? { json: INTERLEAVED }
        : { json: fixtureJson('gemini/reasoning.json') },
  });
  c = await startChatGateway({
    channels: [geminiChannel('ge', up, { 'acme/gem': 'gemini-2.5-flash' })],
    models: [reasoningModel('acme/gem')],
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const client = () => anthropicClient(c);
const ask = (content: string) =>
  client().messages.create({
    model: 'acme/gem',
    max_tokens: 4000,
    thinking: { type: 'enabled', budget_tokens: 1024 },
    tools: [WEATHER],
    messages: [{ role: 'user', content }],
  });

describe('a Gemini answer on /v1/messages', () => {
  it('keeps its parts in order: thinking, text and tool calls interleaved as Gemini gave them', async () => {
    const answer = await ask('weather in Paris and London?');
    // The signature Gemini put on the Paris call rides in an empty thinking block just before it
    // (gemini-signatures-messages.test.ts); the one on the text, in the first thinking block.
    const carrying = expect.stringMatching(/^mgr1\./);
    expect(answer.content).toMatchObject([
      { type: 'thinking', thinking: '**Planning**\n\nThe user wants Paris and London.', signature: carrying },
      { type: 'text', text: "I'll check Paris first." },
      { type: 'thinking', thinking: '', signature: carrying },
      { type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'thinking', thinking: '**Next**\n\nNow London.', signature: '' },
      { type: 'text', text: 'And London.' },
      { type: 'tool_use', name: 'get_weather', input: { city: 'London' } },
    ]);
    expect(answer.content).toHaveLength(7);
    expect(answer.stop_reason).toBe('tool_use');
    // Each call's id is the one the gateway gave it, distinct and well formed.
    const ids = answer.content
      .filter((b) => b.type === 'tool_use')
      .map((b) => (b as Anthropic.ToolUseBlock).id);
    expect(new Set(ids).size).toBe(2);
  });

  it('is as before when Gemini thinks first (the usual answer), with its signature', async () => {
    const answer = await ask('2+2?');
    expect(answer.content).toEqual([
      {
        type: 'thinking',
        thinking: '**Calculating the sum**\n\nThe user asks for 2+2, which is 4.',
        signature: expect.stringMatching(/^mgr1\./),
      },
      { type: 'text', text: '2 + 2 = 4.' },
    ]);
  });

  it('leaves /v1/chat/completions answers as they were, with nothing hidden sent', async () => {
    const r = await c.gw.call('POST', '/v1/chat/completions', {
      token: c.key,
      body: { model: 'acme/gem', messages: [{ role: 'user', content: 'weather in Paris and London?' }] },
    });
    expect(r.status).toBe(200);
    const m = r.body.choices[0].message;
    expect(m.content).toBe("I'll check Paris first.And London.");
    expect(m.reasoning).toBe('**Planning**\n\nThe user wants Paris and London.**Next**\n\nNow London.');
    expect(m.tool_calls).toHaveLength(2);
    expect(JSON.stringify(r.body)).not.toMatch(/content_order|functionCall|thoughtSignature"/);
  });
});
