/**
 * One contract, every chat adapter: each case runs against a fake upstream on loopback replaying
 * the provider's own wire format (test/fixtures/<provider>/), through the real upstream client.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ChatRequest, ChatStreamEvent, ToolCallDelta } from '../../src/gateway/chat/types.js';
import { UpstreamError } from '../../src/gateway/errors.js';
import { completeChat, fetchUpstreamModels, openChatStream } from '../../src/gateway/upstream/call-chat.js';
import { UpstreamClient } from '../../src/gateway/upstream/upstream-client.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { collect } from '../helpers/stream-events.js';
import { fixture, providerCases } from './contract-cases.js';

const client = new UpstreamClient({
  defaults: { connectTimeoutMs: 2000, firstByteTimeoutMs: 5000, idleTimeoutMs: 5000 },
});
afterAll(() => client.close());

const base: ChatRequest = {
  model: 'client-model',
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Hi' },
  ],
  temperature: 0.5,
  max_tokens: 100,
  models: ['fallback-model'],
  provider: { sort: 'price' },
  transforms: [],
  usage: { include: true },
};

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
};

const deltas = (events: ChatStreamEvent[]) =>
  events.flatMap((e) =>
    e.type === 'delta'
      ? e.choices.map((c) => ({ delta: c.delta, finish: c.finish_reason, native: c.native_finish_reason }))
      : [],
  );

describe.each(providerCases)('$name adapter contract', (pc) => {
  let up: FakeUpstream;
  beforeAll(async () => {
    up = await startFakeUpstream();
  });
  afterAll(() => up.close());
  afterEach(() => {
    up.requests.length = 0;
  });
  const target = (model = pc.model) => pc.target(up.url, model);
  const lastRequest = () => up.requests[up.requests.length - 1];
  const serveJson = (file: string, model = pc.model) =>
    up.on(pc.route(model, false), {
      body: fixture(pc.fixtures, file),
      headers: { 'content-type': 'application/json' },
    });
  const serveSse = (file: string, model = pc.model) =>
    up.on(pc.route(model, true), { sse: [fixture(pc.fixtures, file)] });

  it('plain chat: text, finish reason, usage; a valid request', async () => {
    serveJson('chat.json');
    const result = await completeChat(pc.adapter, base, target(), { client });
    expect(result.choices[0].message).toMatchObject({ role: 'assistant', content: pc.text });
    expect(result.choices[0].finish_reason).toBe('stop');
    expect(result.choices[0].native_finish_reason).toBe(pc.native.chat);
    expect(result.usage).toMatchObject({
      prompt_tokens: pc.usage.prompt,
      completion_tokens: pc.usage.completion,
      total_tokens: pc.usage.prompt + pc.usage.completion,
    });
    if (pc.usage.cached !== undefined)
      expect(result.usage?.prompt_tokens_details?.cached_tokens).toBe(pc.usage.cached);
    pc.validate(lastRequest(), false);
  });

  it('an answer without usage has none, so the gateway counts it instead of billing zero', async () => {
    const answer = JSON.parse(fixture(pc.fixtures, 'chat.json'));
    delete answer.usage;
    delete answer.usageMetadata;
    up.on(pc.route(pc.model, false), { json: answer });
    const result = await completeChat(pc.adapter, base, target(), { client });
    expect(result.choices[0].message.content).toBe(pc.text);
    expect(result.usage).toBeUndefined();
  });

  it('streaming: role first, text, one finish reason, then usage; chunked at every few bytes', async () => {
    const sse = fixture(pc.fixtures, 'chat-stream.sse');
    const pieces: string[] = [];
    for (let i = 0; i < sse.length; i += 7) pieces.push(sse.slice(i, i + 7));
    up.on(pc.route(pc.model, true), { sse: pieces });
    const events = await collect(await openChatStream(pc.adapter, base, target(), { client }));
    expect(events[0].type).toBe('delta');
    expect(deltas(events)[0].delta.role).toBe('assistant');
    expect(events.some((e) => e.type === 'error')).toBe(false);
    const ds = deltas(events);
    expect(ds.map((d) => d.delta.content ?? '').join('')).toBe(pc.streamText);
    const finishes = ds.filter((d) => d.finish !== null);
    expect(finishes.map((d) => d.finish)).toEqual(['stop']);
    // The provider's own value on the finishing delta, null on every other one.
    expect(finishes.map((d) => d.native)).toEqual([pc.native.chat]);
    expect(ds.filter((d) => d.finish === null).every((d) => d.native === null)).toBe(true);
    const finishAt = events.findIndex((e) => e.type === 'delta' && e.choices.some((c) => c.finish_reason));
    expect(events.slice(finishAt + 1).every((e) => e.type === 'usage')).toBe(true);
    const usage = events.filter((e) => e.type === 'usage').at(-1);
    expect(usage?.type === 'usage' && usage.usage).toMatchObject({
      prompt_tokens: pc.streamUsage.prompt,
      completion_tokens: pc.streamUsage.completion,
    });
    pc.validate(lastRequest(), true);
  });

  it('streamed tool calls: stable indices, id and name first, arguments reassemble', async () => {
    serveSse('tools-stream.sse');
    const req = { ...base, tools: [weatherTool] };
    const events = await collect(await openChatStream(pc.adapter, req, target(), { client }));
    const calls = new Map<number, { id?: string; name?: string; args: string; first: ToolCallDelta }>();
    for (const { delta } of deltas(events)) {
      for (const tc of delta.tool_calls ?? []) {
        const c = calls.get(tc.index);
        if (!c) {
          expect(tc.id).toBeTruthy();
          expect(tc.type).toBe('function');
          expect(tc.function?.name).toBeTruthy();
          calls.set(tc.index, {
            id: tc.id,
            name: tc.function?.name,
            args: tc.function?.arguments ?? '',
            first: tc,
          });
        } else {
          expect(tc.id === undefined || tc.id === c.id).toBe(true);
          c.args += tc.function?.arguments ?? '';
        }
      }
    }
    expect([...calls.keys()]).toEqual(pc.streamTools.map((_, i) => i));
    pc.streamTools.forEach((t, i) => {
      expect(calls.get(i)?.name).toBe(t.name);
      expect(JSON.parse(calls.get(i)?.args ?? '')).toEqual(t.args);
    });
    expect(new Set([...calls.values()].map((c) => c.id)).size).toBe(calls.size);
    expect(
      deltas(events)
        .filter((d) => d.finish)
        .map((d) => [d.finish, d.native]),
    ).toEqual([['tool_calls', pc.native.tools]]);
    pc.validate(lastRequest(), true);
  });

  it('tool-call round trip: a tool call, then its result, in the provider shape', async () => {
    serveJson('tools.json');
    const first = await completeChat(pc.adapter, { ...base, tools: [weatherTool] }, target(), { client });
    const call = first.choices[0].message.tool_calls?.[0];
    expect(call?.function.name).toBe(pc.jsonTool.name);
    expect(JSON.parse(call?.function.arguments ?? '')).toEqual(pc.jsonTool.args);
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    expect(first.choices[0].native_finish_reason).toBe(pc.native.tools);

    serveJson('chat.json');
    const req: ChatRequest = {
      ...base,
      tools: [weatherTool],
      tool_choice: 'required',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"location":"Paris"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c":18}' },
      ],
    };
    await completeChat(pc.adapter, req, target(), { client });
    pc.validate(lastRequest(), false);
    pc.checkToolRoundTrip(lastRequest().json);
  });

  it('images: data URL and https URL', async () => {
    serveJson('chat.json');
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
    const req: ChatRequest = {
      ...base,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in these images?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
          ],
        },
      ],
    };
    await completeChat(pc.adapter, req, target(), { client });
    pc.validate(lastRequest(), false);
    pc.checkImages(lastRequest().json);
  });

  it('reasoning: request mapping, streamed reasoning, signatures kept', async () => {
    serveSse('reasoning-stream.sse', pc.reasoningModel);
    const req: ChatRequest = { ...base, max_tokens: 2000, reasoning: { effort: 'high' } };
    const events = await collect(
      await openChatStream(pc.adapter, req, target(pc.reasoningModel), { client }),
    );
    pc.validate(lastRequest(), true);
    pc.checkReasoning(lastRequest().json);
    const ds = deltas(events);
    expect(ds[0].delta.role).toBe('assistant');
    expect(ds.map((d) => d.delta.reasoning ?? '').join('')).toBe(pc.reasoning.stream);
    expect(ds.map((d) => d.delta.content ?? '').join('')).toBe(pc.reasoning.streamContent);
    // Reported by Gemini, counted from the thinking text for Anthropic and for the OpenAI-compatible
    // fixture (a llama.cpp server, which reports no reasoning count).
    const usage = events.find((e) => e.type === 'usage');
    expect(
      usage?.type === 'usage' && usage.usage.completion_tokens_details?.reasoning_tokens,
    ).toBeGreaterThan(0);
    if (pc.reasoning.signature) {
      const details = ds.flatMap((d) => d.delta.reasoning_details ?? []);
      expect(details.map((d) => d.signature ?? d.data ?? '').join('')).toContain(pc.reasoning.signature);
    }
  });

  it('reasoning: non-stream result, then the assistant message sent back carries it', async () => {
    serveJson('reasoning.json', pc.reasoningModel);
    const r = await completeChat(pc.adapter, base, target(pc.reasoningModel), { client });
    expect(r.choices[0].message.reasoning).toBe(pc.reasoning.json);

    serveJson(pc.replayFixture);
    const src = await completeChat(pc.adapter, base, target(), { client });
    const msg = src.choices[0].message;
    const details = msg.reasoning_details ?? r.choices[0].message.reasoning_details ?? [];
    const calls = msg.tool_calls ?? [
      {
        id: 'call_1',
        type: 'function' as const,
        function: { name: 'get_weather', arguments: '{"location":"Paris"}' },
      },
    ];
    serveJson('chat.json');
    const req: ChatRequest = {
      ...base,
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: msg.content,
          reasoning: msg.reasoning ?? null,
          reasoning_details: details,
          tool_calls: calls,
        },
        { role: 'tool', tool_call_id: calls[0].id, content: '{"temp_c":18}' },
      ],
    };
    await completeChat(pc.adapter, req, target(), { client });
    pc.validate(lastRequest(), false);
    pc.checkReplay(lastRequest().json, details);
  });

  describe.each(pc.errors)('error $name', (ec) => {
    it('is classified for a plain call and for a stream', async () => {
      for (const stream of [false, true]) {
        up.on(pc.route(pc.model, stream), {
          status: ec.status,
          body: fixture(pc.fixtures, ec.file),
          headers: { 'content-type': 'application/json', ...ec.headers },
        });
        const call = stream
          ? openChatStream(pc.adapter, base, target(), { client })
          : completeChat(pc.adapter, base, target(), { client });
        const err = await call.then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(UpstreamError);
        expect((err as UpstreamError).kind).toBe(ec.kind);
        expect((err as UpstreamError).upstreamStatus).toBe(ec.status);
        if (ec.retryAfterMs !== undefined) expect((err as UpstreamError).retryAfterMs).toBe(ec.retryAfterMs);
      }
    });
  });

  it('an error event after a 200 ends the stream with a classified error', async () => {
    serveSse('error-after-200.sse');
    const events = await collect(await openChatStream(pc.adapter, base, target(), { client }));
    expect(
      deltas(events)
        .map((d) => d.delta.content ?? '')
        .join(''),
    ).toBe('Hel');
    const last = events.at(-1);
    expect(last?.type).toBe('error');
    expect(last?.type === 'error' && last.error.kind).toBe(pc.streamErrorKind);
    expect(events.filter((e) => e.type === 'error')).toHaveLength(1);
  });

  it('a stream cut without its end is reported, not taken as complete', async () => {
    const sse = fixture(pc.fixtures, 'chat-stream.sse');
    up.on(pc.route(pc.model, true), { sse: [sse.slice(0, Math.floor(sse.length / 2))] });
    const events = await collect(await openChatStream(pc.adapter, base, target(), { client }));
    const last = events.at(-1);
    expect(last?.type === 'error' && last.error.kind).toBe('connection');
  });

  it('abort: a client disconnect closes the upstream connection', async () => {
    const sse = fixture(pc.fixtures, 'chat-stream.sse');
    const end = /\r?\n\r?\n/.exec(sse);
    const firstEvent = sse.slice(0, (end?.index ?? 0) + (end?.[0].length ?? 0));
    up.on(pc.route(pc.model, true), { sse: [firstEvent, 'hang'] });
    const ac = new AbortController();
    const stream = await openChatStream(pc.adapter, base, target(), { client, signal: ac.signal });
    const it = stream[Symbol.asyncIterator]();
    const first = await it.next();
    expect(first.done).toBe(false);
    const pending = it.next();
    ac.abort();
    await expect(pending).rejects.toThrow();
    const seen = await up.requests[up.requests.length - 1].closed;
    expect(seen.completed).toBe(false);
  });

  it('lists upstream models', async () => {
    const path = pc.adapter.listModels?.request(target()).url.replace(up.url, '').split('?')[0];
    up.on(`GET ${path}`, {
      body: fixture(pc.fixtures, 'models.json'),
      headers: { 'content-type': 'application/json' },
    });
    expect(await fetchUpstreamModels(pc.adapter, target(), { client })).toEqual(pc.models);
  });
});
