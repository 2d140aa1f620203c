import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import {
  anthropicChannel,
  fakeChat,
  fixture,
  fixtureJson,
  lastSentTo,
  model,
  ONE_ATTEMPT,
  sseSteps,
  userMsg,
} from './chat-helpers.js';
import { openaiClient } from './sdk-clients.js';

/**
 * Reasoning at Claude models that think only adaptively. Opus 4.7 and later Opus 4.x, and the 5.x
 * models, answer `thinking: {type: "enabled", budget_tokens}` with 400 "\"thinking.type.enabled\"
 * is not supported for this model. Use \"thinking.type.adaptive\" and \"output_config.effort\" to
 * control thinking behavior."; models before Opus and Sonnet 4.6 answer `adaptive` with 400
 * "adaptive thinking is not supported on this model"; 4.6 takes both. The fake answers so.
 */
const ADAPTIVE_ONLY = new Set(['claude-opus-4-7', 'claude-opus-4-8', 'claude-sonnet-5']);
const refuse = (message: string) => ({
  status: 400,
  json: { type: 'error', error: { type: 'invalid_request_error', message } },
});

const t = fakeChat(
  {
    'POST /v1/messages': (req: any) => {
      const { model: m, thinking, stream } = req.json;
      if (thinking?.type === 'enabled' && ADAPTIVE_ONLY.has(m))
        return refuse(
          '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.',
        );
      if (thinking?.type === 'adaptive' && !ADAPTIVE_ONLY.has(m) && !m.includes('4-6'))
        return refuse('adaptive thinking is not supported on this model');
      return stream
        ? { sse: sseSteps(fixture('anthropic/reasoning-stream.sse')) }
        : { json: fixtureJson('anthropic/reasoning.json') };
    },
  },
  (up) => ({
    channels: [
      anthropicChannel('claude', up, {
        'a/opus47': 'claude-opus-4-7',
        'a/opus48': 'claude-opus-4-8',
        'a/sonnet5': 'claude-sonnet-5',
        'a/sonnet45': 'claude-sonnet-4-5',
        'a/opus46': 'claude-opus-4-6',
      }),
    ],
    models: ['a/opus47', 'a/opus48', 'a/sonnet5', 'a/sonnet45', 'a/opus46'].map((id) =>
      model(id, { max_completion_tokens: 64_000 }),
    ),
    gateway: ONE_ATTEMPT,
  }),
);

const sent = () => lastSentTo(t.up, '/v1/messages').json;

describe('reasoning at adaptive-only Claude models', () => {
  it.each(['a/opus47', 'a/opus48', 'a/sonnet5'])(
    '%s: adaptive thinking with the effort asked, its reasoning shown, streamed and not',
    async (id) => {
      const oa = openaiClient(t.c);
      const body = {
        model: id,
        messages: userMsg('hi'),
        max_tokens: 2000,
        temperature: 0.3,
        reasoning: { effort: 'high' },
      } as any;
      const r = await oa.chat.completions.create(body);
      expect((r.choices[0]!.message as any).reasoning).toBeTruthy();
      expect(sent().thinking).toEqual({ type: 'adaptive', display: 'summarized' });
      expect(sent().output_config).toEqual({ effort: 'high' });
      // No budget to make room for: the length asked; no temperature beside thinking.
      expect(sent().max_tokens).toBe(2000);
      expect(sent()).not.toHaveProperty('temperature');

      const s = await oa.chat.completions.create({
        ...body,
        stream: true,
      } as ChatCompletionCreateParamsStreaming);
      let reasoning = '';
      for await (const ch of s) reasoning += (ch.choices[0]?.delta as any)?.reasoning ?? '';
      expect(reasoning).not.toBe('');
      expect(sent().thinking.type).toBe('adaptive');
    },
  );

  it('the effort is the nearest level the model takes; a budget alone picks one by its share of max_tokens', async () => {
    const oa = openaiClient(t.c);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ reasoning_effort: 'minimal' }, 'low'],
      [{ reasoning: { effort: 'xhigh' } }, 'xhigh'],
      [{ reasoning: { enabled: true } }, 'medium'],
      [{ reasoning: { max_tokens: 1600 } }, 'high'],
    ];
    for (const [extra, effort] of cases) {
      await oa.chat.completions.create({
        model: 'a/opus47',
        messages: userMsg('hi'),
        max_tokens: 2000,
        ...extra,
      } as any);
      expect(sent().thinking.type).toBe('adaptive');
      expect(sent().output_config).toEqual({ effort });
    }
    // Reasoning off: no thinking at all.
    await oa.chat.completions.create({
      model: 'a/opus47',
      messages: userMsg('hi'),
      reasoning: { enabled: false },
    } as any);
    expect(sent()).not.toHaveProperty('thinking');
  });

  it('models that take budgets keep them (Sonnet 4.5, Opus 4.6)', async () => {
    const oa = openaiClient(t.c);
    for (const id of ['a/sonnet45', 'a/opus46']) {
      await oa.chat.completions.create({
        model: id,
        messages: userMsg('hi'),
        reasoning_effort: 'high',
      } as any);
      expect(sent().thinking).toMatchObject({ type: 'enabled' });
    }
  });
});
