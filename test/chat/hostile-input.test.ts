import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { type ChatGateway, fixtureJson, model, oaCompletion, startChatGateway } from './chat-helpers.js';

/**
 * Whatever a client sends is a 400 naming the field or a served request, never a 500, on every
 * kind of upstream: the request builders translate what the schema let through, so every shape
 * the schema accepts must be one they can translate. And whatever an upstream answers is a
 * served request or a 502, never a 500.
 */
let up: FakeUpstream;
let c: ChatGateway;
type Answer = () => { status?: number; json?: unknown; body?: string };
let openaiAnswer: Answer = () => ({ json: oaCompletion('fine') });
const anthropicFixture: Answer = () => ({ json: fixtureJson('anthropic/chat.json') });
const geminiFixture: Answer = () => ({ json: fixtureJson('gemini/chat.json') });
let anthropicAnswer = anthropicFixture;
let geminiAnswer = geminiFixture;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': () => openaiAnswer(),
    'POST /v1/messages': () => anthropicAnswer(),
    'POST /v1beta/models/gemini-2.5-flash:generateContent': () => geminiAnswer(),
  });
  c = await startChatGateway({
    channels: [
      { name: 'oa', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: ['t/oa'] },
      {
        name: 'an',
        kind: 'anthropic',
        base_url: up.url,
        keys: ['k'],
        models: ['t/an'],
        model_mapping: { 't/an': 'claude-sonnet-4-5' },
      },
      {
        name: 'ge',
        kind: 'gemini',
        base_url: up.url,
        keys: ['k'],
        models: ['t/ge'],
        model_mapping: { 't/ge': 'gemini-2.5-flash' },
      },
    ],
    models: [model('t/oa'), model('t/an'), model('t/ge')],
    gateway: { retry_base_ms: 1, max_attempts: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const chat = (body: Record<string, unknown>) =>
  c.gw.call('POST', '/v1/chat/completions', { token: c.key, body });
const user = { role: 'user', content: 'x' };
const assistant = (extra: Record<string, unknown>) => ({ role: 'assistant', content: null, ...extra });
const call = (fn: unknown) => ({ id: 'call_1', type: 'function', function: fn });

describe.each(['t/oa', 't/an', 't/ge'])('%s', (id) => {
  it.each<[string, Record<string, unknown>, string]>([
    ['a tool call without a function', { messages: [user, assistant({ tool_calls: [{}] })] }, 'function'],
    ['a tool call without a name', { messages: [user, assistant({ tool_calls: [call({})] })] }, 'name'],
    [
      'tool call arguments that are a number',
      { messages: [user, assistant({ tool_calls: [call({ name: 'f', arguments: 5 })] })] },
      'arguments',
    ],
    [
      'reasoning_details that is an object',
      { messages: [user, assistant({ reasoning_details: {} })] },
      'reasoning_details',
    ],
    [
      'reasoning_details holding null',
      { messages: [user, assistant({ reasoning_details: [null] })] },
      'reasoning_details',
    ],
    ['a function tool without its function', { messages: [user], tools: [{ type: 'function' }] }, 'function'],
    [
      'a named tool_choice without the name',
      {
        messages: [user],
        tools: [{ type: 'function', function: { name: 'f' } }],
        tool_choice: { type: 'function' },
      },
      'tool_choice',
    ],
    [
      'file_data that is a number',
      { messages: [{ role: 'user', content: [{ type: 'file', file: { file_data: 5 } }] }] },
      'messages.0.content.0',
    ],
    [
      'json_schema without its schema object',
      { messages: [user], response_format: { type: 'json_schema' } },
      'json_schema',
    ],
    ['a logit_bias key that is not a token id', { messages: [user], logit_bias: { abc: 500 } }, 'logit_bias'],
    ['a sort that is not one', { messages: [user], provider: { sort: { by: 'bogus' } } }, 'sort'],
  ])('%s is a 400 naming the field', async (_name, body, field) => {
    const r = await chat({ model: id, ...body });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error.message).toContain(field);
    expect(r.body.error.metadata).toEqual(expect.any(Object));
  });

  it.each<[string, Record<string, unknown>]>([
    [
      'tool call arguments as an object',
      {
        messages: [
          user,
          assistant({ tool_calls: [call({ name: 'f', arguments: { a: 1 } })] }),
          { role: 'tool', tool_call_id: 'call_1', content: '1' },
        ],
      },
    ],
    [
      'a custom tool call in history',
      {
        messages: [
          user,
          assistant({ tool_calls: [{ id: 'c', type: 'custom', custom: { name: 'g', input: 'x' } }] }),
        ],
      },
    ],
    [
      'a custom tool',
      {
        messages: [user],
        tools: [
          { type: 'custom', custom: { name: 'g' } },
          { type: 'function', function: { name: 'f' } },
        ],
      },
    ],
    [
      'tool_choice allowed_tools',
      {
        messages: [user],
        tools: [{ type: 'function', function: { name: 'f' } }],
        tool_choice: {
          type: 'allowed_tools',
          allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'f' } }] },
        },
      },
    ],
    [
      'a named tool_choice',
      {
        messages: [user],
        tools: [{ type: 'function', function: { name: 'f' } }],
        tool_choice: { type: 'function', function: { name: 'f' } },
      },
    ],
    [
      'a price spelled ".5", and a sort object',
      {
        messages: [user],
        provider: { max_price: { request: '.5', prompt: '1000.' }, sort: { by: 'price' } },
      },
    ],
  ])('%s is served', async (_name, body) => {
    const r = await chat({ model: id, ...body });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  });

  it('explicit nulls for optional fields are "not given": served, and no null reaches the upstream', async () => {
    const before = up.requests.length;
    const r = await chat({
      model: id,
      messages: [
        { role: 'system', content: 's', name: null },
        user,
        // What a Python SDK message dumped back into the history looks like.
        assistant({ content: 'a', tool_calls: null, refusal: null, audio: null, function_call: null }),
        { role: 'user', content: 'y', tool_call_id: null, reasoning_details: null },
      ],
      temperature: null,
      top_p: null,
      max_tokens: null,
      max_completion_tokens: null,
      frequency_penalty: null,
      presence_penalty: null,
      seed: null,
      stop: null,
      n: null,
      logit_bias: null,
      logprobs: null,
      top_logprobs: null,
      tools: null,
      tool_choice: null,
      parallel_tool_calls: null,
      response_format: null,
      user: null,
      reasoning_effort: null,
      stream: null,
      stream_options: null,
      provider: { order: null, allow_fallbacks: null, sort: null },
      reasoning: { effort: null, max_tokens: null, exclude: null },
      usage: { include: null },
      models: null,
      transforms: null,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const sent = up.requests.slice(before).map((q) => q.body);
    expect(sent).toHaveLength(1);
    expect(sent[0]).not.toContain('null');
  });

  it('null stays a mistake for model and messages', async () => {
    const noModel = await chat({ model: null, messages: [user] });
    expect(noModel.status).toBe(400);
    expect(noModel.body.error.message).toContain('model');
    const noMessages = await chat({ model: id, messages: null });
    expect(noMessages.status).toBe(400);
    expect(noMessages.body.error.message).toContain('messages');
  });

  it('a body nested past 128 levels is a 400 naming where', async () => {
    // Written by hand: JSON.stringify itself cannot write what the gateway must refuse.
    const deep = `${'['.repeat(20_000)}1${']'.repeat(20_000)}`;
    const res = await fetch(`${c.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
      body: `{"model":"${id}","messages":[{"role":"user","content":"x"}],"metadata":{"x":${deep}}}`,
    });
    const r = { status: res.status, body: (await res.json()) as any };
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/^metadata\.x(\.0)+: nested more than 128 levels/);
    let ok: unknown = 1;
    for (let i = 0; i < 100; i++) ok = { a: ok };
    expect(
      (
        await chat({
          model: id,
          messages: [user],
          tools: [{ type: 'function', function: { name: 'f', parameters: ok } }],
        })
      ).status,
    ).toBe(200);
  });
});

describe('an upstream answer that is not a completion', () => {
  it.each([
    ['a choice without a message', { choices: [{ index: 0, finish_reason: 'stop' }] }],
    ['a null choice', { choices: [null] }],
    ['a null message', { choices: [{ index: 0, message: null, finish_reason: 'stop' }] }],
  ])('%s is a 502', async (_name, json) => {
    openaiAnswer = () => ({ json });
    try {
      const r = await chat({ model: 't/oa', messages: [user] });
      expect(r.status).toBe(502);
      expect(r.body.error.code).toBe(502);
    } finally {
      openaiAnswer = () => ({ json: oaCompletion('fine') });
    }
  });

  // The translating parsers meet shapes their providers never send (a proxy in between, a broken
  // upstream): what they did not foresee is garbage from the upstream, a 502 and the next route.
  const anthropicMessage = (content: unknown) => ({
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content,
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 3, output_tokens: 1 },
  });
  it.each([
    ['Anthropic: a null content block', 't/an', anthropicMessage([null])],
    ['Gemini: a null candidate', 't/ge', { candidates: [null] }],
    ['Gemini: a null part', 't/ge', { candidates: [{ content: { parts: [null] }, finishReason: 'STOP' }] }],
    [
      'Gemini: parts that are not a list',
      't/ge',
      { candidates: [{ content: { parts: 'hi' }, finishReason: 'STOP' }] },
    ],
  ])('%s is a 502', async (_name, id, json) => {
    if (id === 't/an') anthropicAnswer = () => ({ json });
    else geminiAnswer = () => ({ json });
    try {
      const r = await chat({ model: id, messages: [user] });
      expect(r.status).toBe(502);
      expect(r.body.error.code).toBe(502);
      expect(r.body.error.message).toMatch(/unreadable upstream answer/);
    } finally {
      anthropicAnswer = anthropicFixture;
      geminiAnswer = geminiFixture;
    }
  });
});

describe('an assistant turn replayed from an earlier refusal', () => {
  const refusal = { type: 'refusal', refusal: "I can't help with that." };
  const history = [
    user,
    { role: 'assistant', content: [{ type: 'text', text: 'Sorry.' }, refusal] },
    { role: 'user', content: 'y' },
  ];
  const sentFor = async (id: string) => {
    const before = up.requests.length;
    const r = await chat({ model: id, messages: history });
    expect(r.status, `${id}: ${JSON.stringify(r.body)}`).toBe(200);
    const sent = up.requests.slice(before);
    expect(sent).toHaveLength(1);
    return sent[0]!.json;
  };

  it('reaches an OpenAI-compatible upstream as sent (valid OpenAI input)', async () => {
    expect((await sentFor('t/oa')).messages[1]).toEqual(history[1]);
  });

  it('reaches Anthropic and Gemini as text, which have no refusal part', async () => {
    expect((await sentFor('t/an')).messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Sorry.' },
        { type: 'text', text: "I can't help with that." },
      ],
    });
    expect((await sentFor('t/ge')).contents[1]).toEqual({
      role: 'model',
      parts: [{ text: 'Sorry.' }, { text: "I can't help with that." }],
    });
  });

  it.each(['user', 'system', 'tool'])('in a %s message is a 400 naming the part type', async (role) => {
    const r = await chat({
      model: 't/oa',
      messages: [{ role, content: [refusal], ...(role === 'tool' ? { tool_call_id: 'c' } : {}) }],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error.param).toBe('messages.0.content.0.type');
    expect(r.body.error.message).toContain('"text"');
  });

  // OpenAI's own shape of a refusal answer, sent back in the history as it came.
  const refused = { role: 'assistant', content: null, refusal: "I can't help with that." };
  const withTurn = (turn: Record<string, unknown>) => [user, turn, { role: 'user', content: 'y' }];
  const sentWith = async (id: string, turn: Record<string, unknown>) => {
    const before = up.requests.length;
    const r = await chat({ model: id, messages: withTurn(turn) });
    expect(r.status, `${id}: ${JSON.stringify(r.body)}`).toBe(200);
    const sent = up.requests.slice(before);
    expect(sent).toHaveLength(1);
    return sent[0]!.json;
  };

  it('at the message level reaches an OpenAI-compatible upstream as sent', async () => {
    expect((await sentWith('t/oa', refused)).messages[1]).toEqual(refused);
  });

  it('at the message level reaches Anthropic and Gemini as text, not dropped', async () => {
    expect((await sentWith('t/an', refused)).messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: "I can't help with that." }],
    });
    expect((await sentWith('t/ge', refused)).contents[1]).toEqual({
      role: 'model',
      parts: [{ text: "I can't help with that." }],
    });
  });

  it('beside content: both are sent, the refusal after; a refusal the content repeats is sent once', async () => {
    const both = { ...refused, content: 'Sorry.' };
    expect((await sentWith('t/an', both)).messages[1].content).toEqual([
      { type: 'text', text: 'Sorry.' },
      { type: 'text', text: "I can't help with that." },
    ]);
    expect((await sentWith('t/ge', both)).contents[1].parts).toEqual([
      { text: 'Sorry.' },
      { text: "I can't help with that." },
    ]);
    const copied = { ...refused, content: [{ type: 'text', text: "I can't help with that." }] };
    expect((await sentWith('t/an', copied)).messages[1].content).toEqual([
      { type: 'text', text: "I can't help with that." },
    ]);
    expect((await sentWith('t/ge', copied)).contents[1].parts).toEqual([{ text: "I can't help with that." }]);
  });

  it('at the message level, not a string, is a 400 naming it', async () => {
    const r = await chat({ model: 't/an', messages: withTurn({ ...refused, refusal: 42 }) });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error.param).toBe('messages.1.refusal');
  });

  it('without its refusal text is a 400 naming the part', async () => {
    const r = await chat({
      model: 't/oa',
      messages: [user, { role: 'assistant', content: [{ type: 'refusal' }] }],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error.message).toContain('messages.1.content.0');
  });
});
