import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countPromptTokens, countTextTokens } from '../../src/gateway/chat/tokens.js';
import {
  type FakeAnswer,
  type FakeUpstream,
  type SseStep,
  startFakeUpstream,
} from '../helpers/fake-upstream.js';
import { text } from '../helpers/texts.js';
import {
  anthropicCachedAnswer,
  anthropicChannel,
  anthropicEvent,
  type ChatGateway,
  geminiChannel,
  model,
  ONE_ATTEMPT,
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
 * itself counts what was sent and generated, what an upstream reported before its stream ended
 * early is kept, and `usage.cost` is the charged figure. The fakes answer by the last message's
 * text.
 */
let oa: FakeUpstream;
let an: FakeUpstream;
let ge: FakeUpstream;
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

/** What the Anthropic and Gemini fakes stream before they stop ('reset': cut; 'hang': wait). */
const STREAMED = 'Hello there, this much was streamed before the stream stopped.';
const stop = (word: string): SseStep[] => [{ delayMs: 50 }, word.startsWith('leave') ? 'hang' : 'reset'];

/** Input 15 + 6 read from the cache: 21 prompt tokens, reported in message_start. */
function anthropicAnswer(word: string): FakeAnswer {
  const usage = {
    input_tokens: 15,
    cache_read_input_tokens: 6,
    cache_creation_input_tokens: 0,
    output_tokens: 1,
  };
  const message = { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'claude-x', usage };
  const steps: SseStep[] = [
    anthropicEvent('message_start', { message: { ...message, stop_reason: null, stop_sequence: null } }),
    anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: STREAMED } }),
  ];
  if (word === 'cut-after-count')
    steps.push(
      anthropicEvent('content_block_stop', { index: 0 }),
      anthropicEvent('message_delta', {
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: 40 },
      }),
    );
  return { sse: [...steps, ...stop(word)] };
}

const geminiChunk = (text: string, usageMetadata: object) =>
  `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text }], role: 'model' }, index: 0 }], usageMetadata })}\n\n`;
/** 13 prompt tokens on every chunk (with 500 thoughts, not streamed, for 'cut-thinking'). */
function geminiAnswer(word: string): FakeAnswer {
  const usage =
    word === 'cut-thinking'
      ? { promptTokenCount: 13, candidatesTokenCount: 3, thoughtsTokenCount: 500, totalTokenCount: 516 }
      : { promptTokenCount: 13, totalTokenCount: 13 };
  return {
    sse: [geminiChunk(STREAMED.slice(0, 12), usage), geminiChunk(STREAMED.slice(12), usage), ...stop(word)],
  };
}

/** The last message's text, whatever shape the adapter gave it. */
const lastText = (json: any): string => {
  const last = (json.messages ?? json.contents).at(-1);
  if (typeof last.content === 'string') return last.content;
  return String(last.content?.[0]?.text ?? last.parts?.[0]?.text);
};

beforeAll(async () => {
  oa = await startFakeUpstream({
    'POST /v1/chat/completions': (req) =>
      answerTo(String(req.json.messages.at(-1).content), req.json.stream === true),
  });
  an = await startFakeUpstream({
    'POST /v1/messages': (req) =>
      lastText(req.json) === 'cached-1h'
        ? anthropicCachedAnswer('claude-cached', 'msg_2', req.json.stream === true)
        : anthropicAnswer(lastText(req.json)),
  });
  ge = await startFakeUpstream({
    'POST /v1beta/models/gemini-2.5-flash:streamGenerateContent': (req) => geminiAnswer(lastText(req.json)),
  });
  c = await startChatGateway({
    channels: [
      anthropicChannel('claude', an, { 'anthropic/c': 'claude-x', 'anthropic/cached': 'claude-cached' }),
      geminiChannel('google', ge, { 'google/g': 'gemini-2.5-flash' }),
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
      model('anthropic/c'),
      // Claude Sonnet's prices: $3 per million prompt tokens, $0.30 read from the cache, $3.75
      // written for five minutes, $6 written for an hour; $15 per million completion tokens.
      model('anthropic/cached', {
        pricing: {
          prompt: '0.000003',
          completion: '0.000015',
          input_cache_read: '0.0000003',
          input_cache_write: '0.00000375',
          input_cache_write_1h: '0.000006',
        },
      }),
      model('google/g'),
    ],
    gateway: ONE_ATTEMPT,
  });
});
afterAll(async () => {
  await c?.gw.close();
  for (const u of [oa, an, ge]) await u?.close();
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

describe('Anthropic prompt caching: one-hour writes at their own price', () => {
  it('bills cache writes kept an hour at input_cache_write_1h, streamed and not', async () => {
    const before = await spent();
    const body = {
      model: 'anthropic/cached',
      messages: [
        {
          role: 'user',
          content: [{ type: 'text', text: 'cached-1h', cache_control: { type: 'ephemeral', ttl: '1h' } }],
        },
      ],
      usage: { include: true },
    };
    // 100 x $3 + 1000 read x $0.30 + 1000 five-minute writes x $3.75 + 2000 one-hour writes x $6
    // + 50 x $15 per million = 300 + 300 + 3750 + 12000 + 750 = 17,100 micro-USD (all 3000
    // writes at $3.75 would be 12,600).
    const usage = {
      prompt_tokens: 4100,
      completion_tokens: 50,
      prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 3000 },
      cost: 0.0171,
    };
    const r = await chat(body);
    expect(r.status).toBe(200);
    expect(r.body.usage).toMatchObject(usage);
    expect((await requestLogs(c))[0]).toMatchObject({ stream: false, prompt_tokens: 4100, cost: 0.0171 });
    const s = await rawStream(c, body);
    expect(s.chunks.at(-1).usage).toMatchObject(usage);
    expect((await requestLogs(c))[0]).toMatchObject({ stream: true, prompt_tokens: 4100, cost: 0.0171 });
    expect(Math.round((await spent()) * 1e6 - before * 1e6)).toBe(2 * 17_100);
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

/** Opens a stream, reads until STREAMED arrived, and leaves; returns the request's log. */
async function leave(body: Record<string, unknown>) {
  const before = (await requestLogs(c)).length;
  const abort = new AbortController();
  const res = await fetch(`${c.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
    signal: abort.signal,
  });
  const reader = res.body!.getReader();
  let seen = '';
  while (!seen.includes('stopped')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before the client left: ${seen}`);
    seen += new TextDecoder().decode(value);
  }
  abort.abort();
  for (let i = 0; i < 100; i++) {
    const logs = await requestLogs(c);
    if (logs.length > before) return logs[0];
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no request log');
}

describe.each([
  ['anthropic/c', 21, 6],
  ['google/g', 13, 0],
])('%s: a stream that ends before its usage', (id, prompt, cached) => {
  const completion = countTextTokens(STREAMED);

  it('cut: keeps the prompt counts the upstream reported, counts the completion streamed', async () => {
    const s = await rawStream(c, { model: id, messages: userMsg('cut'), usage: { include: true } });
    expect(s.chunks.at(-2).error.code).toBe(502);
    const u = s.chunks.at(-1).usage;
    expect(u).toMatchObject({ prompt_tokens: prompt, completion_tokens: completion });
    expect(u.prompt_tokens_details.cached_tokens).toBe(cached);
    const log = (await requestLogs(c))[0];
    expect(log).toMatchObject({ status: 502, prompt_tokens: prompt, completion_tokens: completion });
    expect(log.cost).toBe(u.cost);
  });

  it('the client leaves: the same', async () => {
    const log = await leave({ model: id, messages: userMsg('leave') });
    expect(log).toMatchObject({ status: 499, prompt_tokens: prompt, completion_tokens: completion });
  });
});

describe('a stream cut before its usage: counts the upstream reported for the completion', () => {
  it('Anthropic: the output count of message_delta is final', async () => {
    const s = await rawStream(c, {
      model: 'anthropic/c',
      messages: userMsg('cut-after-count'),
      usage: { include: true },
    });
    expect(s.chunks.at(-1).usage).toMatchObject({ prompt_tokens: 21, completion_tokens: 40 });
  });

  it('Gemini: the count so far (with thoughts it does not stream) is a floor for the completion', async () => {
    const s = await rawStream(c, {
      model: 'google/g',
      messages: userMsg('cut-thinking'),
      usage: { include: true },
    });
    expect(s.chunks.at(-1).usage).toMatchObject({ prompt_tokens: 13, completion_tokens: 503 });
    expect(s.chunks.at(-1).usage.completion_tokens_details.reasoning_tokens).toBe(500);
  });
});
