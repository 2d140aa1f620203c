import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import {
  fakeChat,
  fixture,
  fixtureJson,
  geminiChannel,
  geminiRoutes,
  model,
  ONE_ATTEMPT,
  sseSteps,
  userMsg,
} from './chat-helpers.js';
import { openaiClient } from './sdk-clients.js';

/**
 * `presence_penalty` and `frequency_penalty` at Gemini. Gemini 2.5 and 3 answer a
 * `presencePenalty` or `frequencyPenalty` with 400 "Penalty is not enabled for
 * models/gemini-2.5-flash" (INVALID_ARGUMENT); 1.5 and 2.0 take them. OpenAI clients and chat UIs
 * often send both (at 0 by default). The fake answers as Gemini does.
 */
const PENALTIES = new Set(['gemini-2.0-flash-001']);
const MODELS: Record<string, string> = {
  'g/flash20': 'gemini-2.0-flash-001',
  'g/flash25': 'gemini-2.5-flash',
  'g/pro25': 'gemini-2.5-pro',
  'g/flash3': 'gemini-3-flash-preview',
};

const gemini = (name: string, stream: boolean) => (req: any) => {
  const g = req.json.generationConfig ?? {};
  if (!PENALTIES.has(name) && ('presencePenalty' in g || 'frequencyPenalty' in g))
    return {
      status: 400,
      json: {
        error: {
          code: 400,
          message: `Penalty is not enabled for models/${name}`,
          status: 'INVALID_ARGUMENT',
        },
      },
    };
  return stream
    ? { sse: sseSteps(fixture('gemini/chat-stream.sse')) }
    : { json: fixtureJson('gemini/chat.json') };
};

const t = fakeChat(geminiRoutes(Object.values(MODELS), gemini), (up) => ({
  channels: [geminiChannel('google', up, MODELS)],
  models: Object.keys(MODELS).map((id) => model(id)),
  gateway: ONE_ATTEMPT,
}));

const PENALTY_FIELDS = [
  { presence_penalty: 0.6 },
  { frequency_penalty: 0.3 },
  { presence_penalty: 0, frequency_penalty: 0 },
];

describe('Gemini penalties', () => {
  it.each(['g/flash25', 'g/pro25', 'g/flash3'])('%s: served without them, streamed and not', async (id) => {
    const oa = openaiClient(t.c);
    for (const extra of PENALTY_FIELDS) {
      const body = { model: id, messages: userMsg('hi'), temperature: 0.5, ...extra };
      const r = await oa.chat.completions.create(body);
      expect(r.choices[0]!.message.content).toBeTruthy();
      const sent = t.up.requests.at(-1)!.json.generationConfig;
      expect(sent).toEqual({ temperature: 0.5 });

      const s = await oa.chat.completions.create({
        ...body,
        stream: true,
      } as ChatCompletionCreateParamsStreaming);
      let text = '';
      for await (const ch of s) text += ch.choices[0]?.delta?.content ?? '';
      expect(text).not.toBe('');
    }
  });

  it('Gemini 2.0 still gets them', async () => {
    await openaiClient(t.c).chat.completions.create({
      model: 'g/flash20',
      messages: userMsg('hi'),
      presence_penalty: 0.6,
      frequency_penalty: 0.3,
    });
    expect(t.up.requests.at(-1)!.json.generationConfig).toEqual({
      presencePenalty: 0.6,
      frequencyPenalty: 0.3,
    });
  });

  it('provider.require_parameters skips the models that refuse them', async () => {
    const before = t.up.requests.length;
    const r = await t.c.gw.call('POST', '/v1/chat/completions', {
      token: t.c.key,
      body: {
        model: 'g/flash25',
        models: ['g/flash20'],
        messages: userMsg('hi'),
        presence_penalty: 0.6,
        provider: { require_parameters: true },
      },
    });
    expect(r.status).toBe(200);
    expect(r.body.model).toBe('g/flash20');
    // Not tried and refused: skipped.
    expect(t.up.requests.slice(before).map((q) => q.path)).toEqual([
      '/v1beta/models/gemini-2.0-flash-001:generateContent',
    ]);
  });
});
