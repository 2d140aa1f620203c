import { OpenRouter } from '@openrouter/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  type ChatGateway,
  fixture,
  fixtureJson,
  model,
  rawStream,
  sseSteps,
  startChatGateway,
  userMsg,
} from './chat-helpers.js';

/** The official clients in front of fake Anthropic and Gemini upstreams replaying recorded answers. */
const pick = (req: { json: any }) => {
  const m = req.json?.messages ?? req.json?.contents;
  const last = m?.at(-1);
  const text =
    typeof last?.content === 'string' ? last.content : (last?.content?.[0]?.text ?? last?.parts?.[0]?.text);
  return String(text ?? 'text');
};

let an: FakeUpstream;
let ge: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  const anth = (req: any) => {
    const s = pick(req);
    const stream = req.json.stream === true;
    if (s.startsWith('tools'))
      return stream
        ? { sse: sseSteps(fixture('anthropic/tools-stream.sse')) }
        : { json: fixtureJson('anthropic/tools.json') };
    if (s.startsWith('reason'))
      return stream
        ? { sse: sseSteps(fixture('anthropic/reasoning-stream.sse')) }
        : { json: fixtureJson('anthropic/reasoning.json') };
    if (s === 'overloaded') return { status: 529, json: fixtureJson('anthropic/error-529.json') };
    return stream
      ? { sse: sseSteps(fixture('anthropic/chat-stream.sse')) }
      : { json: fixtureJson('anthropic/chat.json') };
  };
  an = await startFakeUpstream({ 'POST /v1/messages': anth });
  const gem = (stream: boolean) => (req: any) => {
    const s = pick(req);
    if (s.startsWith('tools'))
      return stream
        ? { sse: sseSteps(fixture('gemini/tools-stream.sse')) }
        : { json: fixtureJson('gemini/tools.json') };
    if (s.startsWith('reason'))
      return stream
        ? { sse: sseSteps(fixture('gemini/reasoning-stream.sse')) }
        : { json: fixtureJson('gemini/reasoning.json') };
    if (s === 'blocked') return { json: fixtureJson('gemini/blocked.json') };
    return stream
      ? { sse: sseSteps(fixture('gemini/chat-stream.sse')) }
      : { json: fixtureJson('gemini/chat.json') };
  };
  ge = await startFakeUpstream({
    'POST /v1beta/models/gemini-2.5-flash:generateContent': gem(false),
    'POST /v1beta/models/gemini-2.5-flash:streamGenerateContent': gem(true),
  });
  c = await startChatGateway({
    channels: [
      {
        name: 'claude',
        kind: 'anthropic',
        base_url: an.url,
        keys: ['sk-ant'],
        models: ['anthropic/claude-x'],
        model_mapping: { 'anthropic/claude-x': 'claude-sonnet-4-5' },
      },
      {
        name: 'google',
        kind: 'gemini',
        base_url: ge.url,
        keys: ['AIza'],
        models: ['google/gem'],
        model_mapping: { 'google/gem': 'gemini-2.5-flash' },
      },
    ],
    models: [model('anthropic/claude-x'), model('google/gem')],
    gateway: { retry_base_ms: 1, first_byte_timeout_ms: 2000, max_attempts: 1 },
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
const oa = () => new OpenAI({ baseURL: `${c.gw.url}/v1`, apiKey: c.key, maxRetries: 0 });
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
});
