import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { type ChatGateway, fixture, fixtureJson, model, sseSteps, startChatGateway } from './chat-helpers.js';

/**
 * Interleaved thinking through the Anthropic Messages ingress (/v1/messages), with the official
 * @anthropic-ai/sdk: an Anthropic answer whose thinking comes between its text and tool calls keeps
 * its blocks in order (and their signatures), the client's `anthropic-beta` reaches an Anthropic
 * upstream (merged with the channel's) and no other, and `budget_tokens` may exceed `max_tokens`
 * when the interleaved-thinking beta is on. The fake Anthropic upstream records what it gets.
 */

/** An interleaved answer as Anthropic gives it: thinking between text and tool calls. */
const INTERLEAVED = {
  id: 'msg_01InterleavedMixed',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5-20250929',
  content: [
    { type: 'thinking', thinking: 'The user wants Paris and London.', signature: 'EqQBCgIYAhIMsigA' },
    { type: 'text', text: "I'll check Paris first." },
    { type: 'tool_use', id: 'toolu_01Paris', name: 'get_weather', input: { city: 'Paris' } },
    { type: 'thinking', thinking: 'Now London, in parallel.', signature: 'EqQBCgIYAhIMsigB' },
    { type: 'text', text: 'And London.' },
    { type: 'tool_use', id: 'toolu_01London', name: 'get_weather', input: { city: 'London' } },
  ],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: {
    input_tokens: 412,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: 210,
  },
};

const WEATHER: Anthropic.Tool = {
  name: 'get_weather',
  description: 'Weather of a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/messages': (req) => {
      if (req.json?.stream === true) return { sse: sseSteps(fixture('anthropic/chat-stream.sse')) };
      return JSON.stringify(req.json?.messages ?? []).includes('weather')
        ? { json: INTERLEAVED }
        : { json: fixtureJson('anthropic/chat.json') };
    },
    'POST /v1/chat/completions': { json: fixtureJson('openai/reasoning.json') },
  });
  c = await startChatGateway({
    channels: [
      {
        name: 'claude',
        kind: 'anthropic',
        base_url: up.url,
        keys: ['sk-ant'],
        models: ['acme/claude'],
        model_mapping: { 'acme/claude': 'claude-sonnet-4-5' },
      },
      {
        name: 'claude-beta',
        kind: 'anthropic',
        base_url: up.url,
        keys: ['sk-ant'],
        models: ['acme/claude-beta'],
        model_mapping: { 'acme/claude-beta': 'claude-sonnet-4-5' },
        settings: { beta: 'context-1m-2025-08-07, interleaved-thinking-2025-05-14' },
      },
      {
        name: 'claude-open',
        kind: 'anthropic',
        base_url: up.url,
        keys: ['sk-ant'],
        models: ['acme/claude-open'],
        model_mapping: { 'acme/claude-open': 'claude-sonnet-4-5' },
        settings: { client_betas: ['*'] },
      },
      {
        name: 'claude-closed',
        kind: 'anthropic',
        base_url: up.url,
        keys: ['sk-ant'],
        models: ['acme/claude-closed'],
        model_mapping: { 'acme/claude-closed': 'claude-sonnet-4-5' },
        settings: { client_betas: [] },
      },
      {
        // The channel's own anthropic-beta header, which replaces the merged one.
        name: 'claude-header',
        kind: 'anthropic',
        base_url: up.url,
        keys: ['sk-ant'],
        models: ['acme/claude-header'],
        model_mapping: { 'acme/claude-header': 'claude-sonnet-4-5' },
        settings: { client_betas: [], headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' } },
      },
      {
        name: 'claude-header-without',
        kind: 'anthropic',
        base_url: up.url,
        keys: ['sk-ant'],
        models: ['acme/claude-header-without'],
        model_mapping: { 'acme/claude-header-without': 'claude-sonnet-4-5' },
        settings: { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } },
      },
      {
        name: 'oa',
        kind: 'openai-compatible',
        base_url: `${up.url}/v1`,
        keys: ['up-key'],
        models: ['acme/gpt'],
      },
    ],
    models: [
      model('acme/claude', { max_completion_tokens: 64_000 }),
      model('acme/claude-beta', { max_completion_tokens: 64_000 }),
      model('acme/claude-open', { max_completion_tokens: 64_000 }),
      model('acme/claude-closed', { max_completion_tokens: 64_000 }),
      model('acme/claude-header', { max_completion_tokens: 64_000 }),
      model('acme/claude-header-without', { max_completion_tokens: 64_000 }),
      model('acme/gpt'),
    ],
    gateway: { retry_base_ms: 1, first_byte_timeout_ms: 2000 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const client = (o: Partial<ConstructorParameters<typeof Anthropic>[0]> = {}) =>
  new Anthropic({ baseURL: c.gw.url, apiKey: c.key, maxRetries: 0, ...o });
const sentTo = (path: string) => up.requests.filter((r) => r.path === path).at(-1)!;
const user = (content: any) => [{ role: 'user' as const, content }];

describe('interleaved thinking in a non-streamed answer', () => {
  it('keeps an Anthropic answer’s blocks in order, with their signatures', async () => {
    const answer = await client().messages.create({
      model: 'acme/claude',
      max_tokens: 8000,
      thinking: { type: 'enabled', budget_tokens: 2000 },
      tools: [WEATHER],
      messages: user('weather in Paris and London?'),
    });
    expect(answer.content).toEqual(INTERLEAVED.content);
    expect(answer.stop_reason).toBe('tool_use');
  });

  it('sends the interleaved turn back to Anthropic as it was, in order', async () => {
    await client().messages.create({
      model: 'acme/claude',
      max_tokens: 8000,
      thinking: { type: 'enabled', budget_tokens: 2000 },
      tools: [WEATHER],
      messages: [
        ...user('weather in Paris and London?'),
        { role: 'assistant', content: INTERLEAVED.content as Anthropic.ContentBlockParam[] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_01Paris', content: '18°C' },
            { type: 'tool_result', tool_use_id: 'toolu_01London', content: '12°C' },
          ],
        },
      ],
    });
    expect(sentTo('/v1/messages').json.messages[1]).toEqual({
      role: 'assistant',
      content: INTERLEAVED.content,
    });
  });

  it('leaves unsigned thinking out of a turn sent back, interleaved or not (Anthropic refuses it)', async () => {
    await client().messages.create({
      model: 'acme/claude',
      max_tokens: 100,
      messages: [
        ...user('weather?'),
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Looking.' },
            { type: 'thinking', thinking: 'another model’s reasoning', signature: '' },
            { type: 'text', text: 'Sunny.' },
          ],
        },
        ...user('thanks'),
      ],
    });
    expect(sentTo('/v1/messages').json.messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'Looking.\nSunny.' }],
    });
  });

  it('puts an OpenAI-compatible upstream’s reasoning first: its order is not known', async () => {
    const answer = await client().messages.create({
      model: 'acme/gpt',
      max_tokens: 100,
      messages: user('reason: 2+2'),
    });
    expect(answer.content).toEqual([
      { type: 'thinking', thinking: 'The user asks 2+2. That is 4.', signature: '' },
      { type: 'text', text: '2 + 2 = 4.' },
    ]);
  });
});

describe('the client’s anthropic-beta header', () => {
  const BETAS = 'interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14';
  const params = { max_tokens: 100, messages: user('hello') };

  it('reaches an Anthropic upstream (the SDK’s beta API, as Claude Code sends it)', async () => {
    await client().beta.messages.create({
      ...params,
      model: 'acme/claude',
      betas: ['interleaved-thinking-2025-05-14', 'fine-grained-tool-streaming-2025-05-14'],
    });
    const sent = sentTo('/v1/messages');
    expect(sent.headers['anthropic-beta']).toBe(BETAS);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
  });

  it('is merged with the channel’s beta, comma-joined and without duplicates, streamed too', async () => {
    await client().messages.create(
      { ...params, model: 'acme/claude-beta' },
      { headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14, token-efficient-tools-2025-02-19' } },
    );
    const merged = 'context-1m-2025-08-07,interleaved-thinking-2025-05-14,token-efficient-tools-2025-02-19';
    expect(sentTo('/v1/messages').headers['anthropic-beta']).toBe(merged);

    const streamed = await client()
      .messages.stream(
        { ...params, model: 'acme/claude-beta' },
        { headers: { 'anthropic-beta': 'token-efficient-tools-2025-02-19' } },
      )
      .finalMessage();
    expect(streamed.stop_reason).toBe('end_turn');
    expect(sentTo('/v1/messages').json.stream).toBe(true);
    expect(sentTo('/v1/messages').headers['anthropic-beta']).toBe(
      'context-1m-2025-08-07,interleaved-thinking-2025-05-14,token-efficient-tools-2025-02-19',
    );
  });

  it('forwards only the betas billed by tokens, unless the channel’s client_betas says otherwise', async () => {
    // Long-context rates, the account's files: not for any key holder to turn on.
    const asked = 'context-1m-2025-08-07,files-api-2025-04-14,interleaved-thinking-2025-05-14';
    const send = (model: string) =>
      client().messages.create({ ...params, model }, { headers: { 'anthropic-beta': asked } });
    await send('acme/claude');
    expect(sentTo('/v1/messages').headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
    await send('acme/claude-open');
    expect(sentTo('/v1/messages').headers['anthropic-beta']).toBe(asked);
    await send('acme/claude-closed');
    expect(sentTo('/v1/messages').headers['anthropic-beta']).toBeUndefined();
  });

  it('leaves a channel’s beta as configured when the client sends none', async () => {
    await client().messages.create({ ...params, model: 'acme/claude-beta' });
    expect(sentTo('/v1/messages').headers['anthropic-beta']).toBe(
      'context-1m-2025-08-07, interleaved-thinking-2025-05-14',
    );
    await client().messages.create({ ...params, model: 'acme/claude' });
    expect(sentTo('/v1/messages').headers['anthropic-beta']).toBeUndefined();
  });

  it('never reaches an OpenAI-compatible upstream, nor is read on /v1/chat/completions (x-anthropic-beta is)', async () => {
    await client().messages.create(
      { ...params, model: 'acme/gpt' },
      { headers: { 'anthropic-beta': BETAS } },
    );
    expect(sentTo('/v1/chat/completions').headers['anthropic-beta']).toBeUndefined();

    const res = await fetch(`${c.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${c.key}`,
        'content-type': 'application/json',
        'anthropic-beta': BETAS,
      },
      body: JSON.stringify({ model: 'acme/claude', max_tokens: 100, messages: user('hello') }),
    });
    expect(res.status).toBe(200);
    expect(sentTo('/v1/messages').headers['anthropic-beta']).toBeUndefined();
  });
});

describe('thinking.budget_tokens at or past max_tokens', () => {
  const INTERLEAVED_BETA = 'interleaved-thinking-2025-05-14';
  const params = (budget: number, maxTokens: number) => ({
    model: 'acme/claude',
    max_tokens: maxTokens,
    thinking: { type: 'enabled' as const, budget_tokens: budget },
    tools: [WEATHER],
    messages: user('weather in Paris and London?'),
  });

  it('is a 400 in Anthropic’s shape without the interleaved-thinking beta', async () => {
    for (const headers of [{}, { 'anthropic-beta': 'fine-grained-tool-streaming-2025-05-14' }]) {
      const before = up.requests.length;
      const err = await client()
        .messages.create(params(8000, 8000), { headers })
        .catch((e) => e);
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      expect(err.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      expect(err.error.error.message).toContain('thinking.budget_tokens');
      expect(up.requests.length).toBe(before);
    }
  });

  it('is taken with it, and reaches Anthropic as sent (the budget spans the turn’s thinking blocks)', async () => {
    const answer = await client().beta.messages.create({
      ...params(20_000, 8000),
      betas: [INTERLEAVED_BETA],
    });
    expect(answer.content).toEqual(INTERLEAVED.content);
    const sent = sentTo('/v1/messages');
    expect(sent.headers['anthropic-beta']).toBe(INTERLEAVED_BETA);
    expect(sent.json.thinking).toEqual({ type: 'enabled', budget_tokens: 20_000 });
    expect(sent.json.max_tokens).toBe(8000);

    // Past the 128,000 the gateway caps a budget it makes itself: the client's is the client's.
    await client().messages.create(params(150_000, 16_000), {
      headers: { 'anthropic-beta': INTERLEAVED_BETA },
    });
    expect(sentTo('/v1/messages').json.thinking).toEqual({ type: 'enabled', budget_tokens: 150_000 });
    expect(sentTo('/v1/messages').json.max_tokens).toBe(16_000);
  });

  it('goes within a max_tokens raised to hold it where the channel does not forward the beta', async () => {
    // Sent as asked without the beta, Anthropic would refuse it (budget_tokens must be below
    // max_tokens): the budget is part of max_tokens, as for a client without the beta.
    const answer = await client().messages.create(
      { ...params(20_000, 8000), model: 'acme/claude-closed' },
      { headers: { 'anthropic-beta': INTERLEAVED_BETA } },
    );
    expect(answer.stop_reason).toBe('tool_use');
    const sent = sentTo('/v1/messages');
    expect(sent.headers['anthropic-beta']).toBeUndefined();
    expect(sent.json.thinking).toEqual({ type: 'enabled', budget_tokens: 20_000 });
    expect(sent.json.max_tokens).toBe(28_000);
  });

  it('follows the anthropic-beta header sent, which a channel’s settings.headers entry replaces', async () => {
    // The channel's header names the beta (its client_betas forwards none): sent as asked.
    await client().messages.create(
      { ...params(20_000, 8000), model: 'acme/claude-header' },
      { headers: { 'anthropic-beta': INTERLEAVED_BETA } },
    );
    let sent = sentTo('/v1/messages');
    expect(sent.headers['anthropic-beta']).toBe(INTERLEAVED_BETA);
    expect(sent.json.thinking).toEqual({ type: 'enabled', budget_tokens: 20_000 });
    expect(sent.json.max_tokens).toBe(8000);

    // Its header replaces the one that would have forwarded the client's beta: room is made.
    await client().messages.create(
      { ...params(20_000, 8000), model: 'acme/claude-header-without' },
      { headers: { 'anthropic-beta': INTERLEAVED_BETA } },
    );
    sent = sentTo('/v1/messages');
    expect(sent.headers['anthropic-beta']).toBe('context-1m-2025-08-07');
    expect(sent.json.thinking).toEqual({ type: 'enabled', budget_tokens: 20_000 });
    expect(sent.json.max_tokens).toBe(28_000);
  });

  it('is taken for a key with a tokens-per-minute limit too (its prompt estimate decodes the body)', async () => {
    const res = await c.gw.call('POST', '/api/key', {
      cookie: c.cookie,
      body: { name: 'tpm', tpm_limit: 60_000 },
    });
    const answer = await client({ apiKey: res.body.data.key }).messages.create(params(8000, 4000), {
      headers: { 'anthropic-beta': `${INTERLEAVED_BETA},fine-grained-tool-streaming-2025-05-14` },
    });
    expect(answer.stop_reason).toBe('tool_use');
    expect(sentTo('/v1/messages').json.thinking).toEqual({ type: 'enabled', budget_tokens: 8000 });
    expect(sentTo('/v1/messages').json.max_tokens).toBe(4000);
  });
});

describe('thinking.budget_tokens below 1024', () => {
  const params = (budget: number, maxTokens: number, model = 'acme/claude') => ({
    model,
    max_tokens: maxTokens,
    thinking: { type: 'enabled' as const, budget_tokens: budget },
    messages: user('hello'),
  });

  it('is a 400 in Anthropic’s shape before any call, as Anthropic answers, never raised to 1024', async () => {
    // A client capping its answer at 10 tokens was sent max_tokens 1034 and billed for it.
    const cases: Array<[number, number, Record<string, string>]> = [
      [5, 10, {}],
      [500, 3000, {}],
      [1023, 3000, {}],
      // Anthropic's minimum holds with the interleaved-thinking beta too.
      [500, 3000, { 'anthropic-beta': 'interleaved-thinking-2025-05-14' }],
    ];
    for (const [budget, maxTokens, headers] of cases) {
      const before = up.requests.length;
      const err = await client()
        .messages.create(params(budget, maxTokens), { headers })
        .catch((e) => e);
      expect(err, `${budget}/${maxTokens}`).toBeInstanceOf(Anthropic.BadRequestError);
      expect(err.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      expect(err.error.error.message).toBe('thinking.budget_tokens: must be at least 1024');
      expect(up.requests.length).toBe(before);
    }
  });

  it('is refused whatever upstream the model has (count_tokens too)', async () => {
    const err = await client()
      .messages.create(params(500, 3000, 'acme/gpt'))
      .catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    const count = await client()
      .messages.countTokens({
        model: 'acme/claude',
        thinking: { type: 'enabled', budget_tokens: 5 },
        messages: user('hi'),
      })
      .catch((e) => e);
    expect(count).toBeInstanceOf(Anthropic.BadRequestError);
  });

  it('1024 reaches Anthropic as sent, with the max_tokens asked', async () => {
    await client().messages.create(params(1024, 3000));
    const sent = sentTo('/v1/messages').json;
    expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(sent.max_tokens).toBe(3000);
  });
});
