import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import {
  anthropicChannel,
  fakeChat,
  fixture,
  fixtureJson,
  geminiChannel,
  geminiRoutes,
  lastSentTo,
  model,
  ONE_ATTEMPT,
  sseSteps,
  userMsg,
} from './chat-helpers.js';
import { openaiClient } from './sdk-clients.js';

/**
 * Reasoning asked of a model that cannot think. Claude before 3.7 Sonnet answers a `thinking`
 * with 400 "'claude-3-5-haiku-20241022' does not support thinking.", Gemini before 2.5 a
 * `thinkingConfig` (even a budget of 0) with 400 "thinking_config is not supported.". Coding
 * tools send one reasoning setting for every model; OpenRouter ignores it where a model has no
 * reasoning, and decisions.md drops what an upstream does not support. The fakes answer as the
 * providers do, so a `thinking` sent where it is refused fails the request.
 */
const THINKING_CLAUDE = new Set(['claude-3-7-sonnet-20250219', 'claude-sonnet-4-5']);
const THINKING_GEMINI = new Set(['gemini-2.5-flash']);

const anthropic = (req: any) => {
  const m = req.json.model as string;
  if (req.json.thinking && !THINKING_CLAUDE.has(m) && !m.startsWith('fancy'))
    return {
      status: 400,
      json: {
        type: 'error',
        error: { type: 'invalid_request_error', message: `'${m}' does not support thinking.` },
        request_id: 'req_011CV13AWUSuHe9Y38roN9qr',
      },
    };
  return req.json.stream
    ? { sse: sseSteps(fixture('anthropic/chat-stream.sse')) }
    : { json: fixtureJson('anthropic/chat.json') };
};
const gemini = (name: string, stream: boolean) => (req: any) => {
  if (req.json.generationConfig?.thinkingConfig && !THINKING_GEMINI.has(name))
    return {
      status: 400,
      json: {
        error: { code: 400, message: 'thinking_config is not supported.', status: 'INVALID_ARGUMENT' },
      },
    };
  return stream
    ? { sse: sseSteps(fixture('gemini/chat-stream.sse')) }
    : { json: fixtureJson('gemini/chat.json') };
};

const t = fakeChat(
  {
    'POST /v1/messages': anthropic,
    ...geminiRoutes(['gemini-2.0-flash-001', 'gemini-1.5-pro', 'gemini-2.5-flash', 'gemma-3-27b-it'], gemini),
  },
  (up) => ({
    channels: [
      anthropicChannel('claude', up, {
        'a/haiku35': 'claude-3-5-haiku-20241022',
        'a/sonnet35': 'claude-3-5-sonnet-20241022',
        'a/opus3': 'claude-3-opus-20240229',
        'a/sonnet37': 'claude-3-7-sonnet-20250219',
        'a/sonnet45': 'claude-sonnet-4-5',
      }),
      // A proxy's own name for a thinking model: the channel says it thinks.
      anthropicChannel(
        'claude-proxy',
        up,
        { 'a/fancy': 'fancy-claude-3-5-haiku' },
        { settings: { thinking: true } },
      ),
      geminiChannel('google', up, {
        'g/flash20': 'gemini-2.0-flash-001',
        'g/pro15': 'gemini-1.5-pro',
        'g/gemma': 'gemma-3-27b-it',
        'g/flash25': 'gemini-2.5-flash',
      }),
    ],
    models: [
      'a/haiku35',
      'a/sonnet35',
      'a/opus3',
      'a/sonnet37',
      'a/sonnet45',
      'a/fancy',
      'g/flash20',
      'g/pro15',
      'g/gemma',
      'g/flash25',
    ].map((id) => model(id)),
    gateway: ONE_ATTEMPT,
  }),
);

const REASONING: Array<Record<string, unknown>> = [
  { reasoning: { effort: 'high' } },
  { reasoning: { max_tokens: 2048 } },
  { reasoning_effort: 'low' },
  { reasoning: { enabled: false } },
];

describe('reasoning asked of a model without thinking', () => {
  it.each(['a/haiku35', 'a/sonnet35', 'a/opus3', 'g/flash20', 'g/pro15', 'g/gemma'])(
    '%s: served without thinking, streamed and not',
    async (id) => {
      const oa = openaiClient(t.c);
      for (const extra of REASONING) {
        const body = { model: id, messages: userMsg('hi'), max_tokens: 1000, ...extra } as any;
        const r = await oa.chat.completions.create(body);
        expect(r.choices[0]!.message.content).toBeTruthy();
        const sent = t.up.requests.at(-1)!.json;
        expect(sent.thinking).toBeUndefined();
        expect(sent.generationConfig?.thinkingConfig).toBeUndefined();
        // Its length is the one asked: no room was made for a budget.
        expect(sent.max_tokens ?? sent.generationConfig?.maxOutputTokens).toBe(1000);

        const s = await oa.chat.completions.create({
          ...body,
          stream: true,
        } as ChatCompletionCreateParamsStreaming);
        let text = '';
        for await (const ch of s) text += ch.choices[0]?.delta?.content ?? '';
        expect(text).not.toBe('');
      }
    },
  );

  it('thinking models still get it (3.7 Sonnet, Sonnet 4.5, Gemini 2.5, a name the channel says thinks)', async () => {
    const oa = openaiClient(t.c);
    for (const id of ['a/sonnet37', 'a/sonnet45', 'a/fancy']) {
      await oa.chat.completions.create({
        model: id,
        messages: userMsg('hi'),
        reasoning_effort: 'high',
      } as any);
      expect(lastSentTo(t.up, '/v1/messages').json.thinking).toMatchObject({ type: 'enabled' });
    }
    await oa.chat.completions.create({
      model: 'g/flash25',
      messages: userMsg('hi'),
      reasoning_effort: 'high',
    } as any);
    expect(t.up.requests.at(-1)!.json.generationConfig.thinkingConfig).toMatchObject({
      includeThoughts: true,
    });
  });

  it('provider.require_parameters skips them for reasoning', async () => {
    const body = {
      messages: userMsg('hi'),
      reasoning: { effort: 'low' },
      provider: { require_parameters: true },
    };
    const none = await t.c.gw.call('POST', '/v1/chat/completions', {
      token: t.c.key,
      body: { ...body, model: 'a/haiku35' },
    });
    expect(none.status).toBe(503);
    const served = await t.c.gw.call('POST', '/v1/chat/completions', {
      token: t.c.key,
      body: { ...body, model: 'g/flash20', models: ['g/flash25'] },
    });
    expect(served.status).toBe(200);
    expect(served.body.model).toBe('g/flash25');
  });
});
