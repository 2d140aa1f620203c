import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  anthropicCachedAnswer,
  anthropicChannel,
  type ChatGateway,
  fixture,
  fixtureJson,
  lastSentTo,
  lastText,
  model,
  openaiChannel,
  recordedAnswer,
  requestLogs,
  sseSteps,
  startChatGateway,
  userContent,
} from './chat-helpers.js';
import { anthropicClient } from './sdk-clients.js';

/**
 * The Anthropic Messages ingress (/v1/messages) with the official @anthropic-ai/sdk against a
 * started gateway, in front of a fake Anthropic upstream (recorded answers: the request must
 * survive Anthropic -> canonical -> Anthropic) and a fake OpenAI-compatible one (translated
 * both ways). The last user text picks the upstream's scenario.
 */

/** 'cached-1h': ANTHROPIC_CACHED_USAGE, in the answer or streamed. */
let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  const anthropic = (req: any) => {
    const s = lastText(req.json);
    const stream = req.json.stream === true;
    if (s.startsWith('tools')) return recordedAnswer('anthropic/tools', stream);
    if (s.startsWith('reason')) return recordedAnswer('anthropic/reasoning', stream);
    if (s === 'overloaded') return { status: 529, json: fixtureJson('anthropic/error-529.json') };
    if (s === 'cut') return { sse: sseSteps(fixture('anthropic/error-after-200.sse')) };
    if (s === 'cached-1h') return anthropicCachedAnswer('claude-sonnet-4-5', 'msg_c', stream);
    return recordedAnswer('anthropic/chat', stream);
  };
  const openai = (req: any) => {
    const s = lastText(req.json);
    const stream = req.json.stream === true;
    if (s.startsWith('tools')) return recordedAnswer('openai/tools', stream);
    if (s.startsWith('reason')) return recordedAnswer('openai/reasoning', stream);
    return recordedAnswer('openai/chat', stream);
  };
  up = await startFakeUpstream({ 'POST /v1/messages': anthropic, 'POST /v1/chat/completions': openai });
  c = await startChatGateway({
    channels: [
      anthropicChannel('claude', up, { 'acme/claude': 'claude-sonnet-4-5' }),
      anthropicChannel('opus', up, { 'acme/opus': 'claude-opus-4-5-20251101' }),
      openaiChannel('oa', up, ['acme/gpt']),
    ],
    models: [
      model('acme/claude', { max_completion_tokens: 64_000 }),
      model('acme/opus', { max_completion_tokens: 64_000 }),
      model('acme/gpt'),
    ],
    gateway: { retry_base_ms: 1, first_byte_timeout_ms: 2000 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const client = (o: Parameters<typeof anthropicClient>[1] = {}) => anthropicClient(c, o);
const sentTo = (path: string) => lastSentTo(up, path);
const user = userContent;

describe('@anthropic-ai/sdk against an Anthropic upstream', () => {
  it('creates a message: text, stop reason, usage with cache counts, the request passed through', async () => {
    const r = await client().messages.create({
      model: 'acme/claude',
      max_tokens: 300,
      system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
      messages: user([{ type: 'text', text: 'hello', cache_control: { type: 'ephemeral', ttl: '1h' } }]),
      stop_sequences: ['END'],
      metadata: { user_id: 'u-42' },
      // Deprecated in the SDK's types, still sent by older clients.
      ...({ temperature: 0.5, top_k: 40 } as object),
    });
    expect(r.id).toMatch(/^msg_/);
    expect(r.type).toBe('message');
    expect(r.role).toBe('assistant');
    expect(r.model).toBe('acme/claude');
    expect(r.content).toEqual([{ type: 'text', text: 'Hello! How can I help you today?' }]);
    expect(r.stop_reason).toBe('end_turn');
    expect(r.stop_sequence).toBeNull();
    expect(r.usage).toEqual({
      input_tokens: 12,
      output_tokens: 10,
      cache_creation_input_tokens: 100,
      cache_read_input_tokens: 2000,
      // The upstream gave no TTL split: all its writes count (and are billed) as five-minute ones.
      cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 0 },
    });
    expect(r._request_id).toBeTruthy();
    expect(sentTo('/v1/messages').json).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 300,
      system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
      messages: user([{ type: 'text', text: 'hello', cache_control: { type: 'ephemeral', ttl: '1h' } }]),
      temperature: 0.5,
      top_k: 40,
      stop_sequences: ['END'],
      metadata: { user_id: 'u-42' },
    });
  });

  it('puts a top-level cache_control on the last block', async () => {
    await client().messages.create({
      model: 'acme/claude',
      max_tokens: 10,
      cache_control: { type: 'ephemeral' },
      messages: [...user('first'), { role: 'assistant', content: 'ok' }, ...user('second')],
    });
    const sent = sentTo('/v1/messages').json;
    expect(sent.messages.at(-1)).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'second', cache_control: { type: 'ephemeral' } }],
    });
    expect(sent).not.toHaveProperty('cache_control');
    expect(sent.messages[0]).toEqual({ role: 'user', content: [{ type: 'text', text: 'first' }] });
  });

  it('streams text (messages.stream, finalMessage) with Anthropic events in order', async () => {
    const stream = client().messages.stream({ model: 'acme/claude', max_tokens: 100, messages: user('hi') });
    let text = '';
    stream.on('text', (t) => {
      text += t;
    });
    const final = await stream.finalMessage();
    expect(text.length).toBeGreaterThan(0);
    expect(final.content).toEqual([{ type: 'text', text }]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.output_tokens).toBeGreaterThan(0);
    expect(final.usage.input_tokens).toBeGreaterThan(0);

    const res = await fetch(`${c.gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': c.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'acme/claude', max_tokens: 100, messages: user('hi'), stream: true }),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const starts: any[] = [];
    const events = (await res.text())
      .split('\n\n')
      .filter((e) => e.startsWith('event: '))
      .map((e) => {
        const [head, data] = e.split('\n');
        const name = head!.slice(7);
        const json = JSON.parse(data!.slice(6));
        expect(json.type).toBe(name);
        if (name === 'message_start') starts.push(json);
        return name;
      });
    const recordedInput = JSON.parse(
      fixture('anthropic/chat-stream.sse')
        .split('\n')
        .find((l) => l.startsWith('data: ') && l.includes('message_start'))!
        .slice(6),
    ).message.usage.input_tokens;
    expect(events[0]).toBe('message_start');
    // The input counts are in message_start already, as Anthropic's upstream reported them.
    expect(starts[0].message.usage).toMatchObject({ input_tokens: recordedInput });
    expect(events[1]).toBe('content_block_start');
    expect(events.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(new Set(events.slice(2, -3))).toEqual(new Set(['content_block_delta']));
  });

  it('reports the cache writes by TTL (cache_creation) as Anthropic does, streamed and not', async () => {
    const body = {
      model: 'acme/claude',
      max_tokens: 100,
      messages: user([{ type: 'text', text: 'cached-1h', cache_control: { type: 'ephemeral', ttl: '1h' } }]),
    } as const;
    const usage = {
      input_tokens: 100,
      output_tokens: 50,
      cache_creation_input_tokens: 3000,
      cache_read_input_tokens: 1000,
      cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 },
    };
    const r = await client().messages.create(body);
    expect(r.usage).toEqual(usage);

    const stream = client().messages.stream(body);
    const seen: Record<string, any> = {};
    stream.on('streamEvent', (ev) => {
      seen[ev.type] = structuredClone(ev);
    });
    const final = await stream.finalMessage();
    expect(final.usage).toEqual(usage);
    // The SDK's final usage takes cache_creation from message_start (message_delta has none).
    const { output_tokens: _, ...startCounts } = usage;
    expect(seen.message_start.message.usage).toMatchObject(startCounts);
    // message_delta has the final counts in Anthropic's MessageDeltaUsage shape: no TTL split.
    expect(seen.message_delta.usage).toEqual({
      input_tokens: 100,
      output_tokens: 50,
      cache_creation_input_tokens: 3000,
      cache_read_input_tokens: 1000,
    });
  });

  it('round-trips a tool call: ids, inputs, is_error and cache_control reach the upstream', async () => {
    const tools: Anthropic.Tool[] = [
      {
        name: 'get_weather',
        description: 'Weather at a place',
        input_schema: { type: 'object', properties: { location: { type: 'string' } } },
      },
      {
        name: 'get_time',
        input_schema: { type: 'object', properties: {} },
        cache_control: { type: 'ephemeral' },
        // Fields the chat tool has no name for come back on the tool as they were.
        strict: true,
        defer_loading: true,
        input_examples: [{}],
      } as Anthropic.Tool,
    ];
    const first = await client().messages.create({
      model: 'acme/claude',
      max_tokens: 500,
      tools,
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      messages: user('tools please'),
    });
    expect(first.stop_reason).toBe('tool_use');
    const uses = first.content.filter((b) => b.type === 'tool_use');
    const upstreamAnswer = fixtureJson('anthropic/tools.json');
    expect(uses).toEqual(upstreamAnswer.content.filter((b: any) => b.type === 'tool_use'));
    const sent1 = sentTo('/v1/messages').json;
    expect(sent1.tools).toEqual(tools);
    expect(sent1.tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });

    // A second call of the model's (the recorded answer has one) to send an error back for.
    const assistant: Anthropic.ContentBlockParam[] = [
      ...first.content,
      { type: 'tool_use', id: 'toolu_02time', name: 'get_time', input: {} },
    ];
    const calls = assistant.filter((b) => b.type === 'tool_use');
    const results: Anthropic.ToolResultBlockParam[] = calls.map((u, i) => ({
      type: 'tool_result',
      tool_use_id: u.id,
      content: i === 0 ? '68F, sunny' : [{ type: 'text', text: 'clock broke' }],
      ...(i === 0 ? {} : { is_error: true, cache_control: { type: 'ephemeral' as const } }),
    }));
    const second = await client().messages.create({
      model: 'acme/claude',
      max_tokens: 500,
      tools,
      messages: [
        ...user('tools please'),
        { role: 'assistant', content: assistant },
        { role: 'user', content: [...results, { type: 'text', text: 'thanks' }] },
      ],
    });
    expect(second.content[0]).toMatchObject({ type: 'text' });
    const sent2 = sentTo('/v1/messages').json;
    expect(sent2.messages[1]).toEqual({ role: 'assistant', content: assistant });
    expect(sent2.messages[2].content[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_01A09q90qw90lq917835lq9',
      content: [{ type: 'text', text: '68F, sunny' }],
    });
    expect(sent2.messages[2].content[1]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_02time',
      content: [{ type: 'text', text: 'clock broke' }],
      is_error: true,
      cache_control: { type: 'ephemeral' },
    });
    expect(sent2.messages[2].content[2]).toEqual({ type: 'text', text: 'thanks' });
  });

  it('streams tool calls: input_json_delta parsed into each tool_use input', async () => {
    const final = await client()
      .messages.stream({
        model: 'acme/claude',
        max_tokens: 500,
        tools: [{ name: 'get_weather', input_schema: { type: 'object' } }],
        messages: user('tools please'),
      })
      .finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    const uses = final.content.filter((b) => b.type === 'tool_use');
    expect(uses[0]).toMatchObject({
      id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
      name: 'get_weather',
      input: { location: 'San Francisco, CA', unit: 'fahrenheit' },
    });
    expect(final.content[0]).toEqual({
      type: 'text',
      text: "Okay, let's check the weather for San Francisco, CA:",
    });
  });

  it('thinking: the budget reaches the upstream; signed and redacted blocks come back and are replayed unchanged', async () => {
    const first = await client().messages.create({
      model: 'acme/claude',
      max_tokens: 8000,
      thinking: { type: 'enabled', budget_tokens: 2000 },
      messages: user('reason about primes'),
    });
    const sent1 = sentTo('/v1/messages').json;
    expect(sent1.thinking).toEqual({ type: 'enabled', budget_tokens: 2000 });
    expect(sent1.max_tokens).toBe(8000);
    const recorded = fixtureJson('anthropic/reasoning.json').content;
    expect(first.content).toEqual(recorded);

    await client().messages.create({
      model: 'acme/claude',
      max_tokens: 8000,
      thinking: { type: 'enabled', budget_tokens: 2000 },
      messages: [
        ...user('reason about primes'),
        { role: 'assistant', content: first.content },
        ...user('and again'),
      ],
    });
    expect(sentTo('/v1/messages').json.messages[1]).toEqual({ role: 'assistant', content: recorded });
  });

  it('output_config.effort reaches a model that takes effort as effort, and alone turns no thinking on', async () => {
    const effortOf = async (model: string, thinking?: Record<string, unknown>) => {
      await client().messages.create({
        model,
        max_tokens: 8000,
        ...(thinking ? { thinking } : {}),
        output_config: { effort: 'low' },
        messages: user('hello'),
      } as any);
      const sent = sentTo('/v1/messages').json;
      return { output_config: sent.output_config, thinking: sent.thinking };
    };
    expect(await effortOf('acme/opus')).toEqual({ output_config: { effort: 'low' }, thinking: undefined });
    // Sonnet 4.5 takes no effort: nothing sent, and still no thinking.
    expect(await effortOf('acme/claude')).toEqual({ output_config: undefined, thinking: undefined });
    // With adaptive thinking the effort is the thinking's effort too, and the thinking goes as
    // it came (newer Claude models take only adaptive), its display too, with no budget made.
    const adaptive = await effortOf('acme/opus', { type: 'adaptive', display: 'summarized' });
    expect(adaptive.output_config).toEqual({ effort: 'low' });
    expect(adaptive.thinking).toEqual({ type: 'adaptive', display: 'summarized' });
    expect(sentTo('/v1/messages').json.max_tokens).toBe(8000);
    // Adaptive without effort, to a model that takes no effort: adaptive all the same.
    expect((await effortOf('acme/claude', { type: 'adaptive' })).thinking).toEqual({ type: 'adaptive' });
  });

  it('streams thinking with its signature (thinking_delta, signature_delta)', async () => {
    const final = await client()
      .messages.stream({
        model: 'acme/claude',
        max_tokens: 8000,
        thinking: { type: 'enabled', budget_tokens: 2000 },
        messages: user('reason: gcd'),
      })
      .finalMessage();
    expect(final.content[0]).toMatchObject({
      type: 'thinking',
      signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds...',
    });
    expect((final.content[0] as Anthropic.ThinkingBlock).thinking).toContain('GCD(1071, 462) = 21');
    expect(final.content[1]).toEqual({
      type: 'text',
      text: 'The greatest common divisor of 1071 and 462 is **21**.',
    });
  });

  it('reports a failure after the 200 as an error event', async () => {
    const stream = client().messages.stream({ model: 'acme/claude', max_tokens: 100, messages: user('cut') });
    const err = await stream.finalMessage().then(
      () => undefined,
      (e) => e,
    );
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
  });

  it('falls back to OpenRouter-style fallbacks when the model fails', async () => {
    const r = await client().messages.create({
      model: 'acme/claude',
      max_tokens: 100,
      messages: user('overloaded'),
      // @ts-expect-error OpenRouter's Anthropic skin field
      fallbacks: [{ model: 'acme/gpt' }],
    });
    expect(r.model).toBe('acme/gpt');
    expect(r.content).toEqual([{ type: 'text', text: 'Hello! How can I assist you today?' }]);
  });
});

describe('@anthropic-ai/sdk against an OpenAI-compatible upstream', () => {
  it('translates the request to chat completions and the answer back', async () => {
    const r = await client().messages.create({
      model: 'acme/gpt',
      max_tokens: 200,
      system: 'Be brief.',
      messages: user([
        { type: 'text', text: 'tools: what is here?', cache_control: { type: 'ephemeral' } },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      ]),
      tools: [
        {
          name: 'get_weather',
          description: 'Weather',
          input_schema: { type: 'object', properties: {} },
          cache_control: { type: 'ephemeral' },
          defer_loading: true,
          strict: true,
        } as Anthropic.Tool,
      ],
      tool_choice: { type: 'any' },
      stop_sequences: ['STOP'],
      metadata: { user_id: 'u-1' },
    });
    const sent = sentTo('/v1/chat/completions').json;
    expect(sent).toMatchObject({
      model: 'acme/gpt',
      max_tokens: 200,
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'tools: what is here?', cache_control: { type: 'ephemeral' } },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather',
            parameters: { type: 'object', properties: {} },
          },
        },
      ],
      tool_choice: 'required',
      stop: ['STOP'],
      user: 'u-1',
    });
    // Anthropic-only fields stay out of an OpenAI request.
    expect(sent.tools[0]).not.toHaveProperty('cache_control');
    expect(sent.tools[0]).not.toHaveProperty('defer_loading');
    expect(sent.tools[0].function).not.toHaveProperty('defer_loading');
    expect(sent.tools[0].function).not.toHaveProperty('strict');
    expect(r.stop_reason).toBe('tool_use');
    expect(r.content).toEqual([
      { type: 'tool_use', id: 'call_abc123', name: 'get_weather', input: { location: 'Boston, MA' } },
    ]);
    expect(r.usage).toMatchObject({ input_tokens: 82, output_tokens: 17 });
  });

  it('sends a tool result back as a tool message (is_error left out)', async () => {
    await client().messages.create({
      model: 'acme/gpt',
      max_tokens: 200,
      messages: [
        ...user('weather?'),
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { location: 'Oslo' } },
          ],
        },
        ...user([{ type: 'tool_result', tool_use_id: 'call_1', content: 'no data', is_error: true }]),
      ],
    });
    const sent = sentTo('/v1/chat/completions').json;
    expect(sent.messages).toEqual([
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"location":"Oslo"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'no data' },
    ]);
  });

  it('streams the translated answer', async () => {
    const stream = client().messages.stream({ model: 'acme/gpt', max_tokens: 100, messages: user('hi') });
    let startUsage: Anthropic.Usage | undefined;
    stream.on('streamEvent', (ev) => {
      // A copy: the SDK's final message is this object, updated by message_delta.
      if (ev.type === 'message_start') startUsage = { ...ev.message.usage };
    });
    const final = await stream.finalMessage();
    // This upstream reports usage only at the end: message_start has the local estimate of the prompt.
    expect(startUsage!.input_tokens).toBeGreaterThan(0);
    expect(startUsage!.input_tokens).toBeLessThan(50);
    expect(final.content).toHaveLength(1);
    expect(final.content[0]).toMatchObject({ type: 'text' });
    expect((final.content[0] as Anthropic.TextBlock).text.length).toBeGreaterThan(0);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.model).toBe('acme/gpt');
  });

  it("gives the upstream's reasoning as a thinking block (unsigned), streamed or not", async () => {
    const params = { model: 'acme/gpt', max_tokens: 100, messages: user('reason: 2+2') };
    const expected = [
      { type: 'thinking', thinking: 'The user asks 2+2. That is 4.', signature: '' },
      { type: 'text', text: '2 + 2 = 4.' },
    ];
    expect((await client().messages.create(params)).content).toEqual(expected);
    expect((await client().messages.stream(params).finalMessage()).content).toEqual(expected);
  });

  it('streams tool calls from chat chunks as tool_use blocks', async () => {
    const final = await client()
      .messages.stream({
        model: 'acme/gpt',
        max_tokens: 100,
        tools: [
          { name: 'get_weather', input_schema: { type: 'object' } },
          { name: 'get_time', input_schema: { type: 'object' } },
        ],
        messages: user('tools'),
      })
      .finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    const uses = final.content.filter((b) => b.type === 'tool_use');
    expect(uses.length).toBeGreaterThan(0);
    for (const u of uses) {
      expect(u.id).toBeTruthy();
      expect(typeof u.input).toBe('object');
    }
  });
});

describe('errors in Anthropic shape', () => {
  it('401 for a bad key (x-api-key and Bearer) as AuthenticationError', async () => {
    for (const o of [{ apiKey: 'sk-nope' }, { apiKey: null, authToken: 'sk-nope' }]) {
      const err = await client(o)
        .messages.create({ model: 'acme/claude', max_tokens: 10, messages: user('hi') })
        .catch((e) => e);
      expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
      expect(err.status).toBe(401);
      expect(err.error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
      expect(err.requestID).toBeTruthy();
    }
  });

  it('401 without a key names x-api-key, the header Anthropic clients send; other endpoints keep Bearer', async () => {
    const body = { model: 'acme/claude', max_tokens: 10, messages: user('hi') };
    for (const path of ['/v1/messages', '/v1/messages/count_tokens', '/api/v1/messages']) {
      const r = await c.gw.call('POST', path, { body });
      expect(r.status, path).toBe(401);
      expect(r.body).toMatchObject({
        type: 'error',
        error: {
          type: 'authentication_error',
          message: 'missing API key: send x-api-key: sk-... (or Authorization: Bearer sk-...)',
        },
      });
    }
    const chat = await c.gw.call('POST', '/v1/chat/completions', { body });
    expect(chat.body.error.message).toBe('missing API key: send Authorization: Bearer sk-...');
  });

  it('404 for an unknown model as NotFoundError', async () => {
    const err = await client()
      .messages.create({ model: 'acme/nope', max_tokens: 10, messages: user('hi') })
      .catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    expect(err.error.error.message).toContain('acme/nope');
    // Refused by the plan: logged like a chat refusal, under this endpoint.
    const row = (await requestLogs(c)).find((l) => l.model === 'acme/nope');
    expect(row).toMatchObject({ endpoint: 'messages', status: 404 });
  });

  it('402 for an exhausted quota, as billing_error', async () => {
    const res = await c.gw.call('POST', '/api/key', {
      cookie: c.cookie,
      body: { name: 'poor', quota_limit: 0.000001 },
    });
    const err = await client({ apiKey: res.body.data.key })
      .messages.create({ model: 'acme/claude', max_tokens: 4000, messages: user('hi') })
      .catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err.status).toBe(402);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'billing_error' } });
  });

  it('400 for a missing max_tokens as BadRequestError naming it', async () => {
    const err = await client()
      .messages.create({ model: 'acme/claude', messages: user('hi') } as any)
      .catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(err.error.error.message).toContain('max_tokens');
  });

  it('takes a body past the 10 MiB of /api (a conversation of screenshots), up to 32 MiB, then 413', async () => {
    const png = 'iVBORw0KGgo'.repeat(1_100_000); // ~12 MB of base64
    const big = await c.gw.call('POST', '/v1/messages', {
      token: c.key,
      body: {
        model: 'acme/claude',
        max_tokens: 10,
        messages: user([
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
          { type: 'text', text: 'what is this?' },
        ]),
      },
    });
    expect(big.status).toBe(200);
    const tooBig = await c.gw.call('POST', '/v1/messages', {
      token: c.key,
      body: { model: 'acme/claude', max_tokens: 10, messages: user('x'.repeat(33 * 1024 * 1024)) },
    });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body).toMatchObject({ type: 'error', error: { type: 'request_too_large' } });
  });

  it('400 for a block type it cannot translate', async () => {
    const err = await client()
      .messages.create({
        model: 'acme/claude',
        max_tokens: 10,
        messages: user([{ type: 'container_upload', file_id: 'f' } as any]),
      })
      .catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.error.error.message).toContain('messages.0.content.0.type');
  });
});

describe('blocks without their text, and counting for a model not served', () => {
  it('a text block whose text is missing or not a string is a 400 naming it, on messages and count_tokens alike', async () => {
    const bodies = [
      [user([{ type: 'text' }]), 'messages.0.content.0.text'],
      [user([{ type: 'text', text: null }]), 'messages.0.content.0.text'],
      [
        [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 5 }] }],
          },
        ],
        'messages.2.content.0.content.0.text',
      ],
    ] as const;
    for (const [messages, field] of bodies) {
      for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
        const r = await c.gw.call('POST', path, {
          token: c.key,
          body: { model: 'acme/claude', max_tokens: 10, messages },
        });
        expect(r.status, `${path} ${field}`).toBe(400);
        expect(r.body.error).toMatchObject({ type: 'invalid_request_error' });
        expect(r.body.error.message).toContain(field);
      }
    }
    const system = await c.gw.call('POST', '/v1/messages/count_tokens', {
      token: c.key,
      body: { model: 'acme/claude', system: [{ type: 'text', text: 1 }], messages: user('hi') },
    });
    expect(system.status).toBe(400);
  });

  it('a tool_result content that is neither a string nor blocks, or a tool input_schema that is not an object, is a 400 naming it', async () => {
    // Anthropic refuses both; the gateway sent the result as empty and the tool without its schema.
    const results = (content: unknown) => [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content }] },
    ];
    const bodies = [
      [{ messages: results(5) }, 'messages.2.content.0.content'],
      [{ messages: results({ type: 'text', text: 'ok' }) }, 'messages.2.content.0.content'],
      [{ messages: user('q'), tools: [{ name: 'f', input_schema: 'object' }] }, 'tools.0.input_schema'],
    ] as const;
    const before = up.requests.length;
    for (const [body, field] of bodies) {
      for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
        const r = await c.gw.call('POST', path, {
          token: c.key,
          body: { model: 'acme/claude', max_tokens: 10, ...body },
        });
        expect(r.status, `${path} ${field}`).toBe(400);
        expect(r.body.error).toMatchObject({ type: 'invalid_request_error' });
        expect(r.body.error.message).toContain(field);
      }
    }
    expect(up.requests.length).toBe(before);
    // A result with no content at all stays one (Anthropic takes it).
    const none = await c.gw.call('POST', '/v1/messages', {
      token: c.key,
      body: {
        model: 'acme/claude',
        max_tokens: 10,
        messages: [
          ...results('x').slice(0, 2),
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1' }] },
        ],
      },
    });
    expect(none.status, JSON.stringify(none.body)).toBe(200);
  });

  it('count_tokens for a model the gateway does not serve is a 404, one the key may not use a 403', async () => {
    const err = await client()
      .messages.countTokens({ model: 'acme/nope', messages: user('hi') })
      .catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    const res = await c.gw.call('POST', '/api/key', {
      cookie: c.cookie,
      body: { name: 'gpt-only', allowed_models: ['acme/gpt'] },
    });
    const denied = await client({ apiKey: res.body.data.key })
      .messages.countTokens({ model: 'acme/claude', messages: user('hi') })
      .catch((e) => e);
    expect(denied).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect(
      (
        await client({ apiKey: res.body.data.key }).messages.countTokens({
          model: 'acme/gpt',
          messages: user('hi'),
        })
      ).input_tokens,
    ).toBeGreaterThan(0);
  });
});

describe('accounting', () => {
  it('logs a row with endpoint messages, tokens and cost', async () => {
    await client().messages.create({ model: 'acme/claude', max_tokens: 50, messages: user('log me') });
    const row = (await requestLogs(c)).find((l) => l.endpoint === 'messages' && l.model === 'acme/claude');
    expect(row).toMatchObject({ status: 200, provider: 'claude', stream: false });
    expect(row.prompt_tokens).toBe(2112);
    expect(row.completion_tokens).toBe(10);
    expect(row.cost).toBeGreaterThan(0);
  });

  it('charges a tokens-per-minute key the prompt as translated (system counted, blocks as their text)', async () => {
    const res = await c.gw.call('POST', '/api/key', {
      cookie: c.cookie,
      body: { name: 'tpm', tpm_limit: 60_000 },
    });
    const results = Array.from({ length: 30 }, (_, i) => ({
      type: 'tool_result' as const,
      tool_use_id: `toolu_${i}`,
      content: 'ok',
    }));
    const calls = results.map((r) => ({
      type: 'tool_use' as const,
      id: r.tool_use_id,
      name: 'f',
      input: {},
    }));
    const { response } = await client({ apiKey: res.body.data.key })
      .messages.create({
        model: 'acme/claude',
        max_tokens: 10,
        system: 'word '.repeat(3000),
        messages: [...user('go'), { role: 'assistant', content: calls }, { role: 'user', content: results }],
      })
      .withResponse();
    const charged = 60_000 - Number(response.headers.get('x-ratelimit-remaining-tokens'));
    // The system prompt's ~3,000 tokens, and the 60 blocks at their few tokens each (not a flat
    // 1,000 per block as parts the chat estimate does not know).
    expect(charged).toBeGreaterThan(3000);
    expect(charged).toBeLessThan(5000);
  });

  it('counts tokens locally: no upstream call, no log row', async () => {
    const before = up.requests.length;
    const logsBefore = (await requestLogs(c)).length;
    const small = await client().messages.countTokens({ model: 'acme/claude', messages: user('hi') });
    const big = await client().messages.countTokens({
      model: 'acme/claude',
      system: 'You are a helpful assistant. '.repeat(20),
      messages: user('hi there, how many tokens is this?'),
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: {} } }],
    });
    expect(Number.isInteger(small.input_tokens)).toBe(true);
    expect(small.input_tokens).toBeGreaterThan(0);
    expect(big.input_tokens).toBeGreaterThan(small.input_tokens + 100);
    expect(up.requests.length).toBe(before);
    expect((await requestLogs(c)).length).toBe(logsBefore);
  });

  it('counts tokens against requests per minute, not tokens per minute', async () => {
    const res = await c.gw.call('POST', '/api/key', {
      cookie: c.cookie,
      body: { name: 'tpm-count', tpm_limit: 1000, rpm_limit: 3 },
    });
    const keyed = client({ apiKey: res.body.data.key, maxRetries: 0 });
    const big = { model: 'acme/claude', system: 'word '.repeat(3000), messages: user('hi') };
    // Each estimate is ~3,000 tokens, over the key's 1,000 a minute: charged, the second would be
    // refused, and the message after them too.
    for (let i = 0; i < 2; i++)
      expect((await keyed.messages.countTokens(big)).input_tokens).toBeGreaterThan(2900);
    const { response } = await keyed.messages
      .create({ model: 'acme/claude', max_tokens: 10, messages: user('hi') })
      .withResponse();
    expect(Number(response.headers.get('x-ratelimit-remaining-tokens'))).toBeGreaterThan(900);
    // The fourth request of the minute is over the key's 3 requests per minute.
    await expect(keyed.messages.countTokens(big)).rejects.toMatchObject({ status: 429 });
  });

  it('serves OpenRouter\u2019s path /api/v1/messages', async () => {
    const r = await client({ baseURL: `${c.gw.url}/api` }).messages.create({
      model: 'acme/claude',
      max_tokens: 10,
      messages: user('hi'),
    });
    expect(r.content[0]).toMatchObject({ type: 'text' });
  });
});
