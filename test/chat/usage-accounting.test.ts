import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countPromptTokens } from '../../src/gateway/chat/tokens.js';
import { type FakeAnswer, type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { text } from '../helpers/texts.js';
import {
  type ChatGateway,
  model,
  oaChunk,
  oaCompletion,
  rawStream,
  requestLogs,
  sse,
  startChatGateway,
  userMsg,
} from './chat-helpers.js';

/**
 * What a chat request is billed and told, against fake upstreams: usage the gateway counts
 * itself counts what was sent and generated, and `usage.cost` is the charged figure. The fake
 * answers by the last message's text.
 */
let oa: FakeUpstream;
let c: ChatGateway;
const SHORT_CONTEXT = 8_000;

/** The OpenAI-compatible fake's answer to `word`, streamed or not. */
function answerTo(word: string, stream: boolean): FakeAnswer {
  if (word === 'priced') {
    const usage = { prompt_tokens: 7, completion_tokens: 8 };
    if (!stream) return { json: oaCompletion('ok', usage) };
    const last = { ...oaChunk({}), choices: [], usage: { ...usage, total_tokens: 15 } };
    return { sse: sse([oaChunk({ role: 'assistant', content: 'ok' }), oaChunk({}, 'stop'), last]) };
  }
  if (word === 'plain') {
    // No usage, so the gateway counts it.
    if (!stream) return { json: { ...oaCompletion('ok'), usage: undefined } };
    return { sse: sse([oaChunk({ role: 'assistant', content: 'ok' }), oaChunk({}, 'stop')]) };
  }
  if (word === 'reason') {
    // ~360 tokens of reasoning and a one-token answer, no usage.
    const thought = text(1_600, false, 5);
    if (!stream) {
      const json = oaCompletion('ok');
      json.choices[0]!.message = { ...json.choices[0]!.message, reasoning_content: thought } as any;
      return { json: { ...json, usage: undefined } };
    }
    const pieces = [thought.slice(0, 800), thought.slice(800)];
    return {
      sse: sse([
        oaChunk({ role: 'assistant', reasoning_content: pieces[0] }),
        oaChunk({ reasoning_content: pieces[1] }),
        oaChunk({ content: 'ok' }),
        oaChunk({}, 'stop'),
      ]),
    };
  }
  if (word === 'tools') {
    // Two tool calls and no text, no usage.
    const calls = [
      { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      {
        id: 'call_2',
        type: 'function',
        function: { name: 'get_time', arguments: '{"zone":"Europe/Paris"}' },
      },
    ];
    if (!stream) {
      const json = oaCompletion('');
      json.choices[0] = {
        index: 0,
        message: { role: 'assistant', content: null, tool_calls: calls },
        finish_reason: 'tool_calls',
      } as any;
      return { json: { ...json, usage: undefined } };
    }
    const deltas = calls.flatMap((t, index) => [
      oaChunk({
        tool_calls: [
          { index, id: t.id, type: 'function', function: { name: t.function.name, arguments: '' } },
        ],
      }),
      oaChunk({ tool_calls: [{ index, function: { arguments: t.function.arguments.slice(0, 5) } }] }),
      oaChunk({ tool_calls: [{ index, function: { arguments: t.function.arguments.slice(5) } }] }),
    ]);
    return {
      sse: sse([oaChunk({ role: 'assistant', content: null }), ...deltas, oaChunk({}, 'tool_calls')]),
    };
  }
  return { status: 400, json: { error: { message: `no answer scripted for ${word}` } } };
}

beforeAll(async () => {
  oa = await startFakeUpstream({
    'POST /v1/chat/completions': (req) =>
      answerTo(String(req.json.messages.at(-1).content), req.json.stream === true),
  });
  c = await startChatGateway({
    channels: [
      {
        name: 'oa',
        kind: 'openai-compatible',
        base_url: `${oa.url}/v1`,
        keys: ['k'],
        models: ['acme/m', 'acme/short'],
      },
    ],
    models: [
      // gpt-4o-mini's prices: $0.15 / $0.60 per million tokens, fractions of a micro-USD per token.
      model('acme/m', { pricing: { prompt: '0.00000015', completion: '0.0000006' } }),
      model('acme/short', { context_length: SHORT_CONTEXT, max_completion_tokens: 1000 }),
    ],
    gateway: { retry_base_ms: 1, first_byte_timeout_ms: 2000, max_attempts: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await oa?.close();
});

const chat = (body: Record<string, unknown>) =>
  c.gw.call('POST', '/v1/chat/completions', { token: c.key, body });
const spent = async () => {
  await c.gw.services.requestLogs.flush();
  return (await c.gw.call('GET', '/api/key', { cookie: c.cookie })).body.data[0].quota_used as number;
};

describe('usage.cost', () => {
  it('is what was charged and logged, to the micro-USD, streamed and not', async () => {
    const before = await spent();
    const body = { model: 'acme/m', messages: userMsg('priced'), usage: { include: true } };
    // 7 x $0.15/M + 8 x $0.60/M = 5.85 micro-USD, charged as 6 (nearest).
    const r = await chat(body);
    expect(r.body.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 8, cost: 0.000006 });
    expect((await requestLogs(c))[0]).toMatchObject({
      prompt_tokens: 7,
      completion_tokens: 8,
      cost: 0.000006,
    });
    const s = await rawStream(c, body);
    expect(s.chunks.at(-1).usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 8, cost: 0.000006 });
    expect((await requestLogs(c))[0]).toMatchObject({ stream: true, cost: 0.000006 });
    expect(Math.round((await spent()) * 1e6 - before * 1e6)).toBe(12);
  });
});

describe('usage the gateway counts (the upstream reported none)', () => {
  it('bills the prompt middle-out sent, not the one the client sent, streamed and not', async () => {
    const messages = [
      { role: 'user', content: text(400_000, false, 3) },
      { role: 'assistant', content: 'noted' },
      { role: 'user', content: 'plain' },
    ];
    const body = { model: 'acme/short', messages, transforms: ['middle-out'], usage: { include: true } };
    const r = await chat(body);
    expect(r.status).toBe(200);
    const sent = oa.requests.at(-1)!.json;
    // The client's prompt is ~100 K tokens; what the upstream got fits the 8 K context.
    expect(r.body.usage.prompt_tokens).toBe(countPromptTokens(sent));
    expect(r.body.usage.prompt_tokens).toBeLessThanOrEqual(SHORT_CONTEXT);
    expect((await requestLogs(c))[0].prompt_tokens).toBe(r.body.usage.prompt_tokens);
    const s = await rawStream(c, body);
    expect(s.chunks.at(-1).usage.prompt_tokens).toBe(countPromptTokens(oa.requests.at(-1)!.json));
    expect((await requestLogs(c))[0].prompt_tokens).toBe(s.chunks.at(-1).usage.prompt_tokens);
  });
});

describe('usage the gateway counts: reasoning', () => {
  it('reasoning.exclude hides the reasoning but bills it, streamed and not', async () => {
    const body = { model: 'acme/m', messages: userMsg('reason'), usage: { include: true } };
    const excluded = { ...body, reasoning: { exclude: true } };
    const shown = await chat(body);
    expect(shown.body.choices[0].message.reasoning.length).toBeGreaterThan(1000);
    const billed = shown.body.usage.completion_tokens;
    expect(billed).toBeGreaterThan(250);
    const hidden = await chat(excluded);
    expect(hidden.body.choices[0].message.reasoning).toBeUndefined();
    expect(hidden.body.usage.completion_tokens).toBe(billed);
    expect((await requestLogs(c))[0].completion_tokens).toBe(billed);
    for (const b of [body, excluded]) {
      const s = await rawStream(c, b);
      expect(s.chunks.some((ch) => ch.choices[0]?.delta?.reasoning)).toBe(b === body);
      expect(s.chunks.at(-1).usage.completion_tokens).toBe(billed);
      expect((await requestLogs(c))[0].completion_tokens).toBe(billed);
    }
  });
});

describe('usage the gateway counts: tool calls', () => {
  it('counts tool calls (names and arguments) alike, streamed and not', async () => {
    const body = { model: 'acme/m', messages: userMsg('tools'), usage: { include: true } };
    const r = await chat(body);
    expect(r.body.choices[0].message.tool_calls).toHaveLength(2);
    const billed = r.body.usage.completion_tokens;
    // get_weather{"city":"Paris"}get_time{"zone":"Europe/Paris"}
    expect(billed).toBeGreaterThan(10);
    expect((await requestLogs(c))[0].completion_tokens).toBe(billed);
    const s = await rawStream(c, body);
    expect(s.chunks.at(-1).usage.completion_tokens).toBe(billed);
    expect((await requestLogs(c))[0].completion_tokens).toBe(billed);
  });
});
