import { OpenRouter } from '@openrouter/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, type SseStep, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  anthropicChannel,
  type ChatGateway,
  fixture,
  fixtureJson,
  geminiChannel,
  model,
  ONE_ATTEMPT,
  rawStream,
  recordedAnswer,
  sseSteps,
  startChatGateway,
  userMsg,
} from './chat-helpers.js';
import { openaiClient } from './sdk-clients.js';

/** The official clients in front of fake Anthropic and Gemini upstreams replaying recorded answers. */
const pick = (req: { json: any }) => {
  const m = req.json?.messages ?? req.json?.contents;
  const last = m?.at(-1);
  const text =
    typeof last?.content === 'string' ? last.content : (last?.content?.[0]?.text ?? last?.parts?.[0]?.text);
  return String(text ?? 'text');
};

/**
 * The recorded events with a pause before the last one (the error event): the content before it
 * has reached the client by then, so the failure can only be reported in-band.
 */
const afterFirstChunk = (steps: string[]): SseStep[] => [
  ...steps.slice(0, -1),
  { delayMs: 100 },
  steps.at(-1)!,
];

let an: FakeUpstream;
let ge: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  const anth = (req: any) => {
    const s = pick(req);
    const stream = req.json.stream === true;
    if (s.startsWith('tools')) return recordedAnswer('anthropic/tools', stream);
    if (s.startsWith('reason')) return recordedAnswer('anthropic/reasoning', stream);
    if (s === 'overloaded') return { status: 529, json: fixtureJson('anthropic/error-529.json') };
    if (s === 'error-after-200')
      return { sse: afterFirstChunk(sseSteps(fixture('anthropic/error-after-200.sse'))) };
    return recordedAnswer('anthropic/chat', stream);
  };
  an = await startFakeUpstream({ 'POST /v1/messages': anth });
  const gem = (stream: boolean) => (req: any) => {
    const s = pick(req);
    if (s.startsWith('tools')) return recordedAnswer('gemini/tools', stream);
    if (s.startsWith('reason')) return recordedAnswer('gemini/reasoning', stream);
    if (s === 'blocked')
      return stream
        ? { sse: [fixture('gemini/blocked-stream.sse')] }
        : { json: fixtureJson('gemini/blocked.json') };
    // Gemini's events end in CRLF pairs.
    if (s === 'error-after-200')
      return { sse: afterFirstChunk(fixture('gemini/error-after-200.sse').split(/(?<=\r\n\r\n)/)) };
    return recordedAnswer('gemini/chat', stream);
  };
  ge = await startFakeUpstream({
    'POST /v1beta/models/gemini-2.5-flash:generateContent': gem(false),
    'POST /v1beta/models/gemini-2.5-flash:streamGenerateContent': gem(true),
  });
  c = await startChatGateway({
    channels: [
      anthropicChannel('claude', an, { 'anthropic/claude-x': 'claude-sonnet-4-5' }),
      geminiChannel('google', ge, { 'google/gem': 'gemini-2.5-flash' }),
    ],
    models: [model('anthropic/claude-x'), model('google/gem')],
    gateway: ONE_ATTEMPT,
  });
});
afterAll(async () => {
  await c?.gw.close();
  await an?.close();
  await ge?.close();
});

const TOOLS = [
  {
    type: 'function' as const,
    function: {
      name: 'get_weather',
      parameters: { type: 'object', properties: { location: { type: 'string' } } },
    },
  },
];
const oa = () => openaiClient(c);
const or = () =>
  new OpenRouter({ apiKey: c.key, serverURL: `${c.gw.url}/api/v1`, retryConfig: { strategy: 'none' } });

it('@openrouter/sdk lists the models beside chat, under /api/v1', async () => {
  const r = (await or().models.list()) as any;
  const data = r.data ?? r.result?.data;
  expect(data.map((m: { id: string }) => m.id).sort()).toEqual(['anthropic/claude-x', 'google/gem']);
  expect(data[0].contextLength ?? data[0].context_length).toBeGreaterThan(0);
});

describe.each([
  ['anthropic/claude-x', () => an],
  ['google/gem', () => ge],
])('%s', (id, upstream) => {
  it('text: create, stream, and the @openrouter/sdk strict checks', async () => {
    const r = await oa().chat.completions.create({ model: id, messages: userMsg('text'), max_tokens: 100 });
    expect(r.choices[0]!.message.content!.length).toBeGreaterThan(0);
    expect(r.choices[0]!.finish_reason).toBe('stop');
    expect(r.usage!.prompt_tokens).toBeGreaterThan(0);
    const s = (await or().chat.send({
      chatRequest: { model: id, messages: userMsg('text'), stream: true },
    })) as AsyncIterable<any>;
    let text = '';
    for await (const ch of s) text += ch.choices[0]?.delta?.content ?? '';
    expect(text.length).toBeGreaterThan(0);
    const sent = upstream().requests.at(-1)!;
    if (id.startsWith('anthropic')) {
      expect(sent.headers['x-api-key'] ?? sent.headers.authorization).toBeTruthy();
      expect(sent.headers['anthropic-version']).toBeTruthy();
      expect(sent.json.model).toBe('claude-sonnet-4-5');
      expect(typeof sent.json.max_tokens).toBe('number');
    } else {
      expect(sent.headers['x-goog-api-key'] ?? sent.path).toBeTruthy();
      expect(sent.path).toContain('alt=sse');
      expect(sent.json.contents[0].parts[0].text).toBe('text');
    }
  });

  it('tools, streamed and not, with stable indices', async () => {
    const r = await oa().chat.completions.create({ model: id, messages: userMsg('tools'), tools: TOOLS });
    expect(r.choices[0]!.finish_reason).toBe('tool_calls');
    const call = r.choices[0]!.message.tool_calls![0]! as any;
    expect(call.type).toBe('function');
    expect(() => JSON.parse(call.function.arguments)).not.toThrow();
    const raw = await rawStream(c, { model: id, messages: userMsg('tools'), tools: TOOLS });
    const args: Record<number, string> = {};
    for (const ch of raw.chunks)
      for (const tc of ch.choices[0]?.delta?.tool_calls ?? [])
        args[tc.index] = (args[tc.index] ?? '') + (tc.function?.arguments ?? '');
    expect(Object.keys(args).length).toBeGreaterThan(0);
    for (const a of Object.values(args)) expect(() => JSON.parse(a)).not.toThrow();
    const or2 = (await or().chat.send({
      chatRequest: { model: id, messages: userMsg('tools'), tools: TOOLS as any },
    })) as any;
    expect(or2.choices[0].message.toolCalls[0].id).toBeTruthy();
  });

  it('reasoning comes back as reasoning, and reasoning.exclude removes it', async () => {
    const body = {
      model: id,
      messages: userMsg('reason'),
      reasoning: { max_tokens: 1024 },
      max_tokens: 4000,
    };
    const r = await c.gw.call('POST', '/v1/chat/completions', { token: c.key, body });
    expect(r.status).toBe(200);
    expect(r.body.choices[0].message.reasoning?.length).toBeGreaterThan(0);
    const sent = upstream().requests.at(-1)!.json;
    if (id.startsWith('anthropic'))
      expect(sent.thinking).toMatchObject({ type: 'enabled', budget_tokens: 1024 });
    else expect(sent.generationConfig.thinkingConfig).toMatchObject({ thinkingBudget: 1024 });
    const ex = await c.gw.call('POST', '/v1/chat/completions', {
      token: c.key,
      body: { ...body, reasoning: { max_tokens: 1024, exclude: true } },
    });
    expect(ex.body.choices[0].message.reasoning ?? null).toBeNull();
    const raw = await rawStream(c, { ...body, reasoning: { max_tokens: 1024, exclude: true } });
    expect(raw.chunks.some((ch) => ch.choices[0]?.delta?.reasoning)).toBe(false);
  });

  it('an error event after the first content chunk ends the stream in-band: error chunk, finish_reason error, [DONE]', async () => {
    const raw = await rawStream(c, { model: id, messages: userMsg('error-after-200') });
    expect(raw.res.status).toBe(200);
    expect(raw.events.at(-1)).toBe('[DONE]');
    expect(raw.chunks.map((ch) => ch.choices[0]?.delta?.content ?? '').join('')).toBe('Hel');
    // Exactly one error chunk, the last: Anthropic's overloaded_error (529 by its type) and
    // Gemini's 503 UNAVAILABLE are both an overloaded upstream, a 503 for the client.
    const anthropic = id.startsWith('anthropic');
    expect(raw.chunks.filter((ch) => ch.error)).toHaveLength(1);
    const last = raw.chunks.at(-1);
    expect(last.error).toEqual({
      code: 503,
      message: anthropic
        ? 'upstream overloaded: Overloaded'
        : 'upstream overloaded: The model is overloaded. Please try again later.',
      metadata: {
        error_type: 'service_unavailable',
        upstream_kind: 'overloaded',
        upstream_status: anthropic ? 529 : 503,
      },
    });
    expect(last.choices).toEqual([{ index: 0, delta: { content: '' }, finish_reason: 'error' }]);
    // The content came before the error, in chunks of their own.
    const first = raw.chunks.findIndex((ch) => ch.choices[0]?.delta?.content === 'Hel');
    expect(first).toBeGreaterThanOrEqual(0);
    expect(first).toBeLessThan(raw.chunks.length - 1);

    // With usage asked for: the usage chunk comes after the error chunk, then [DONE].
    const withUsage = await rawStream(c, {
      model: id,
      messages: userMsg('error-after-200'),
      stream_options: { include_usage: true },
    });
    expect(withUsage.events.at(-1)).toBe('[DONE]');
    const [errorChunk, usageChunk] = withUsage.chunks.slice(-2);
    expect(errorChunk.error.code).toBe(503);
    expect(usageChunk.choices).toEqual([]);
    // The prompt as the upstream counted it (message_start's input_tokens, Gemini's
    // promptTokenCount); the completion ("Hel") counted by the gateway.
    expect(usageChunk.usage).toMatchObject(
      anthropic
        ? { prompt_tokens: 25, completion_tokens: 1, total_tokens: 26 }
        : { prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 },
    );

    // The openai SDK surfaces it as an error, after the text.
    const stream = await oa().chat.completions.create({
      model: id,
      messages: userMsg('error-after-200'),
      stream: true,
    });
    let text = '';
    await expect(
      (async () => {
        for await (const ch of stream) text += ch.choices[0]?.delta?.content ?? '';
      })(),
    ).rejects.toThrow(/upstream overloaded/);
    expect(text).toBe('Hel');
  });
});

describe('provider errors', () => {
  it('Anthropic 529 overloaded is a 503 with an integer code; Gemini safety block is content_filter', async () => {
    const r = await c.gw.call('POST', '/v1/chat/completions', {
      token: c.key,
      body: { model: 'anthropic/claude-x', messages: userMsg('overloaded') },
    });
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe(503);
    const b = await oa()
      .chat.completions.create({ model: 'google/gem', messages: userMsg('blocked') })
      .catch((e) => e);
    const finish = b?.choices?.[0]?.finish_reason ?? b?.status;
    expect(['content_filter', 400]).toContain(finish);
  });

  it('Gemini: a prompt blocked in a stream, before any content, is a 400 naming the filter (no 200, no fallback)', async () => {
    const raw = await rawStream(c, { model: 'google/gem', messages: userMsg('blocked') });
    expect(raw.res.status).toBe(400);
    const body = JSON.parse(raw.text);
    expect(body.error.code).toBe(400);
    expect(body.error.message).toBe(
      "blocked by the provider's content filter: prompt blocked (PROHIBITED_CONTENT)",
    );
    expect(body.error.metadata).toMatchObject({ upstream_kind: 'content_filter' });
  });
});
