import type Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  type ChatGateway,
  fixture,
  lastText,
  model,
  sse,
  sseSteps,
  startChatGateway,
} from './chat-helpers.js';
import { anthropicClient, openaiClient } from './sdk-clients.js';

/**
 * Streamed tool calls from OpenAI-compatible servers that do not number them as OpenAI does, through
 * every ingress with its official client's stream helper: LM Studio / older Ollama style deltas
 * without `index`, and servers that send each call whole with index 0. Two calls must stay two
 * calls, with their own arguments, and an OpenAI client must get an `index` on every delta.
 * The last user text picks the upstream's answer.
 */
const head = { id: 'chatcmpl-q', object: 'chat.completion.chunk', created: 1700000000, model: 'qwen2.5-7b' };
const chunk = (delta: object, finish: string | null = null) => ({
  ...head,
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
});
const call = (id: string, name: string, args: string, index?: number) => ({
  ...(index === undefined ? {} : { index }),
  id,
  type: 'function',
  function: { name, arguments: args },
});
const usage = { ...head, choices: [], usage: { prompt_tokens: 40, completion_tokens: 30, total_tokens: 70 } };

const STREAMS: Record<string, string[]> = {
  // No index anywhere: a call starts with its id, its argument fragments carry neither.
  'no-index': sse([
    chunk({ role: 'assistant', content: null, tool_calls: [call('412398744', 'get_weather', '')] }),
    chunk({ tool_calls: [{ function: { arguments: '{"location":' } }] }),
    chunk({ tool_calls: [{ function: { arguments: ' "Paris, France"}' } }] }),
    chunk({ tool_calls: [call('830495142', 'get_time', '')] }),
    chunk({ tool_calls: [{ function: { arguments: '{"tz":"Europe/Paris"}' } }] }),
    chunk({}, 'tool_calls'),
    usage,
  ]),
  // Each call whole in one chunk, each at index 0.
  'index-zero': sse([
    chunk({ role: 'assistant', content: '' }),
    chunk({ tool_calls: [call('call_w1', 'get_weather', '{"location": "Paris, France"}', 0)] }),
    chunk({ tool_calls: [call('call_t2', 'get_time', '{"tz":"Europe/Paris"}', 0)] }),
    chunk({}, 'tool_calls'),
    usage,
  ]),
  // No index and no type (the openai SDK's helper throws "tool call snapshot missing `type`").
  'no-type': sse([
    chunk({
      role: 'assistant',
      tool_calls: [{ id: 'c1', function: { name: 'get_weather', arguments: '' } }],
    }),
    chunk({ tool_calls: [{ function: { arguments: '{"location": "Paris, France"}' } }] }),
    chunk({ tool_calls: [{ id: 'c2', function: { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' } }] }),
    chunk({}, 'tool_calls'),
    usage,
  ]),
  // Neither id nor index (a server that numbers nothing): a name starts the next call.
  'no-id-no-index': sse([
    chunk({
      role: 'assistant',
      tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: '' } }],
    }),
    chunk({ tool_calls: [{ function: { arguments: '{"location":' } }] }),
    chunk({ tool_calls: [{ function: { arguments: ' "Paris, France"}' } }] }),
    chunk({ tool_calls: [{ type: 'function', function: { name: 'get_time', arguments: '{"tz":' } }] }),
    chunk({ tool_calls: [{ function: { arguments: '"Europe/Paris"}' } }] }),
    chunk({}, 'tool_calls'),
    usage,
  ]),
  // A new id on every fragment of a call, at its index (Poolside, mlx-openai-server): the name
  // comes on a call's first fragment only, so a fragment without one goes on with its call.
  'unstable-id': sse([
    chunk({ role: 'assistant', content: null, tool_calls: [call('call_w1', 'get_weather', '', 0)] }),
    chunk({ tool_calls: [{ index: 0, id: 'call_w2', function: { arguments: '{"location":' } }] }),
    chunk({ tool_calls: [{ index: 0, id: 'call_w3', function: { arguments: ' "Paris, France"}' } }] }),
    chunk({ tool_calls: [call('call_t1', 'get_time', '', 1)] }),
    chunk({ tool_calls: [{ index: 1, id: 'call_t2', function: { arguments: '{"tz":"Europe/Paris"}' } }] }),
    chunk({}, 'tool_calls'),
    usage,
  ]),
  // Each call whole in one chunk, each at index 0, and no ids at all.
  'index-zero-no-id': sse([
    chunk({ role: 'assistant', content: '' }),
    chunk({
      tool_calls: [
        { index: 0, function: { name: 'get_weather', arguments: '{"location": "Paris, France"}' } },
      ],
    }),
    chunk({ tool_calls: [{ index: 0, function: { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' } }] }),
    chunk({}, 'tool_calls'),
    usage,
  ]),
  // The same function twice that way: the name again, once the first call's arguments are whole.
  'same-function-no-id': sse([
    chunk({ role: 'assistant', content: '' }),
    chunk({ tool_calls: [{ index: 0, function: { name: 'get_weather', arguments: '{"location":' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: ' "Paris, France"}' } }] }),
    chunk({
      tool_calls: [{ index: 0, function: { name: 'get_weather', arguments: '{"location": "Tokyo"}' } }],
    }),
    chunk({}, 'tool_calls'),
    usage,
  ]),
  // The name on every fragment of a call (no ids): a fragment whose call's arguments are not whole
  // yet goes on with it.
  'repeated-name': sse([
    chunk({ role: 'assistant', content: '' }),
    chunk({ tool_calls: [{ index: 0, function: { name: 'get_weather', arguments: '{"location":' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { name: 'get_weather', arguments: ' "Paris, France"}' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { name: 'get_time', arguments: '{"tz":' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { name: 'get_time', arguments: '"Europe/Paris"}' } }] }),
    chunk({}, 'tool_calls'),
    usage,
  ]),
  // OpenAI's own shape (recorded): indexes 0 and 1, the id on the first fragment only.
  openai: sseSteps(fixture('openai/tools-stream.sse')),
  // Two parallel calls whose argument fragments alternate (both started first), and text that
  // comes between a call's fragments: an Anthropic stream runs one block at a time.
  interleaved: sse([
    chunk({ role: 'assistant', content: null, tool_calls: [call('call_A', 'get_weather', '', 0)] }),
    chunk({ tool_calls: [call('call_B', 'get_time', '', 1)] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"location":' } }] }),
    chunk({ tool_calls: [{ index: 1, function: { arguments: '{"tz":' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: ' "Paris, France"}' } }] }),
    chunk({ tool_calls: [{ index: 1, function: { arguments: '"Europe/Paris"}' } }] }),
    chunk({}, 'tool_calls'),
    usage,
  ]),
  'text-between': sse([
    chunk({
      role: 'assistant',
      content: null,
      tool_calls: [call('call_A', 'get_weather', '{"location":', 0)],
    }),
    chunk({ content: 'Checking ' }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: ' "Paris, France"}' } }] }),
    chunk({ content: 'both.', tool_calls: [call('call_B', 'get_time', '{"tz":', 1)] }),
    chunk({ tool_calls: [{ index: 1, function: { arguments: '"Europe/Paris"}' } }] }),
    chunk({}, 'tool_calls'),
    usage,
  ]),
};

/** The id the gateway (or the client's helper) gives a call the upstream sent without one. */
const NO_ID: string = expect.stringMatching(/^(call|toolu)_[\w-]+$/);
/** The calls each scenario must come out as: [id, name, arguments]. */
const EXPECTED: Record<string, [string, string, string][]> = {
  'no-index': [
    ['412398744', 'get_weather', '{"location": "Paris, France"}'],
    ['830495142', 'get_time', '{"tz":"Europe/Paris"}'],
  ],
  'index-zero': [
    ['call_w1', 'get_weather', '{"location": "Paris, France"}'],
    ['call_t2', 'get_time', '{"tz":"Europe/Paris"}'],
  ],
  'no-type': [
    ['c1', 'get_weather', '{"location": "Paris, France"}'],
    ['c2', 'get_time', '{"tz":"Europe/Paris"}'],
  ],
  'no-id-no-index': [
    [NO_ID, 'get_weather', '{"location": "Paris, France"}'],
    [NO_ID, 'get_time', '{"tz":"Europe/Paris"}'],
  ],
  'unstable-id': [
    ['call_w1', 'get_weather', '{"location": "Paris, France"}'],
    ['call_t1', 'get_time', '{"tz":"Europe/Paris"}'],
  ],
  'index-zero-no-id': [
    [NO_ID, 'get_weather', '{"location": "Paris, France"}'],
    [NO_ID, 'get_time', '{"tz":"Europe/Paris"}'],
  ],
  'same-function-no-id': [
    [NO_ID, 'get_weather', '{"location": "Paris, France"}'],
    [NO_ID, 'get_weather', '{"location": "Tokyo"}'],
  ],
  'repeated-name': [
    [NO_ID, 'get_weather', '{"location": "Paris, France"}'],
    [NO_ID, 'get_time', '{"tz":"Europe/Paris"}'],
  ],
  openai: [
    ['call_DdmO9pD3xa9XTPNJ32zg2hcA', 'get_weather', '{"location": "Paris, France"}'],
    ['call_ABaz42nVn1GXXq7HAYSmOkqB', 'get_time', '{"tz":"Europe/Paris"}'],
  ],
};
const SCENARIOS = Object.keys(EXPECTED);

/** A non-streamed answer whose tool calls have no id (older Ollama, LM Studio). */
const NO_ID_ANSWER = {
  id: 'chatcmpl-n',
  object: 'chat.completion',
  created: 1700000000,
  model: 'llama3.1',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: '',
        tool_calls: [
          { type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris, France"}' } },
          { type: 'function', function: { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' } },
        ],
      },
      finish_reason: 'tool_calls',
    },
  ],
  usage: { prompt_tokens: 40, completion_tokens: 30, total_tokens: 70 },
};

let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': (req) => {
      const s = lastText(req.json);
      if (s === 'no-id') return { json: NO_ID_ANSWER };
      return { sse: STREAMS[s]! };
    },
  });
  c = await startChatGateway({
    channels: [
      {
        name: 'local',
        kind: 'openai-compatible',
        base_url: `${up.url}/v1`,
        keys: ['k'],
        models: ['acme/local'],
      },
    ],
    models: [model('acme/local', { supported_parameters: ['tools', 'tool_choice', 'max_tokens'] })],
    gateway: { retry_base_ms: 1, first_byte_timeout_ms: 2000 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const openai = () => openaiClient(c);
const anthropic = () => anthropicClient(c);
const object = { type: 'object' as const, properties: {} };
const CHAT_TOOLS = ['get_weather', 'get_time'].map((name) => ({
  type: 'function' as const,
  function: { name, parameters: object },
}));

describe('/v1/chat/completions with the openai SDK stream helper', () => {
  it.each(SCENARIOS)('%s: every delta has an index, and the final completion has both calls', async (s) => {
    const stream = openai().chat.completions.stream({
      model: 'acme/local',
      messages: [{ role: 'user', content: s }],
      tools: CHAT_TOOLS,
    });
    const indexes: unknown[] = [];
    stream.on('chunk', (ch) => {
      for (const t of ch.choices[0]?.delta?.tool_calls ?? []) indexes.push(t.index);
    });
    const done = await stream.finalChatCompletion();
    expect(indexes.every((i) => typeof i === 'number')).toBe(true);
    const calls = done.choices[0]!.message.tool_calls!.map((t) =>
      t.type === 'function' ? [t.id, t.function.name, t.function.arguments] : [],
    );
    expect(calls).toEqual(EXPECTED[s]);
    expect(done.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('a streamed call that came without an id gets one on its first delta (a client answers it by tool_call_id)', async () => {
    const res = await fetch(`${c.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${c.key}` },
      body: JSON.stringify({
        model: 'acme/local',
        stream: true,
        messages: [{ role: 'user', content: 'no-id-no-index' }],
        tools: CHAT_TOOLS,
      }),
    });
    const deltas = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data: {'))
      .flatMap((l) => JSON.parse(l.slice(6)).choices[0]?.delta?.tool_calls ?? []);
    const firsts = deltas.filter((t: { function?: { name?: string } }) => t.function?.name);
    expect(firsts.map((t: { index: number }) => t.index)).toEqual([0, 1]);
    for (const t of firsts) expect(t.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(firsts[0].id).not.toBe(firsts[1].id);
    // Only the first delta of a call carries it, as OpenAI sends ids.
    expect(deltas.filter((t: { id?: string }) => t.id)).toHaveLength(2);
  });

  it('the OpenAI shape goes out with the upstream indexes untouched', async () => {
    const stream = openai().chat.completions.stream({
      model: 'acme/local',
      messages: [{ role: 'user', content: 'openai' }],
      tools: CHAT_TOOLS,
    });
    const sent: object[] = [];
    stream.on('chunk', (ch) => sent.push(...(ch.choices[0]?.delta?.tool_calls ?? [])));
    await stream.finalChatCompletion();
    const recorded = STREAMS.openai!.flatMap((e) =>
      e.startsWith('data: {') ? (JSON.parse(e.slice(6)).choices[0]?.delta?.tool_calls ?? []) : [],
    );
    expect(sent).toEqual(recorded);
  });

  it('a non-streamed tool call without an id gets one, distinct per call', async () => {
    const r = await openai().chat.completions.create({
      model: 'acme/local',
      messages: [{ role: 'user', content: 'no-id' }],
      tools: CHAT_TOOLS,
    });
    const ids = r.choices[0]!.message.tool_calls!.map((t) => t.id);
    expect(ids).toEqual([expect.stringMatching(/^call_\w+$/), expect.stringMatching(/^call_\w+$/)]);
    expect(ids[0]).not.toBe(ids[1]);
  });
});

describe('/v1/messages with the Anthropic SDK stream helper', () => {
  const params = (s: string) => ({
    model: 'acme/local',
    max_tokens: 100,
    tools: [
      { name: 'get_weather', input_schema: object },
      { name: 'get_time', input_schema: object },
    ],
    messages: [{ role: 'user' as const, content: s }],
  });

  it.each(SCENARIOS)('%s: two tool_use blocks, each with its own input', async (s) => {
    const final = await anthropic().messages.stream(params(s)).finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    const uses = final.content.flatMap((b) => (b.type === 'tool_use' ? [[b.id, b.name, b.input]] : []));
    expect(uses).toEqual(EXPECTED[s]!.map(([id, name, args]) => [id, name, JSON.parse(args)]));
  });

  it.each([
    ['interleaved', ['tool_use', 'tool_use']],
    ['text-between', ['tool_use', 'text', 'tool_use']],
  ])('%s: one block at a time, each call with its own arguments', async (s, types) => {
    const stream = anthropic().messages.stream(params(s));
    const events: Anthropic.RawMessageStreamEvent[] = [];
    const done: Anthropic.ContentBlock[] = [];
    stream.on('streamEvent', (e) => events.push(e));
    stream.on('contentBlock', (b) => done.push(b));
    const final = await stream.finalMessage();
    // Every delta and stop goes to the block open, and a block starts only when none is.
    let open = -1;
    const json: string[] = [];
    for (const e of events) {
      if (e.type === 'content_block_start') {
        expect([open, e.index]).toEqual([-1, json.length]);
        open = e.index;
        json.push('');
      } else if (e.type === 'content_block_delta') {
        expect(e.index).toBe(open);
        if (e.delta.type === 'input_json_delta') json[open] += e.delta.partial_json;
      } else if (e.type === 'content_block_stop') {
        expect(e.index).toBe(open);
        open = -1;
      }
    }
    expect(final.content.map((b) => b.type)).toEqual(types);
    const args = json.filter((_, i) => final.content[i]!.type === 'tool_use');
    expect(args).toEqual(EXPECTED.openai!.map(([, , a]) => a));
    // The blocks the SDK hands on as each stops carry their input.
    const uses = done.flatMap((b) => (b.type === 'tool_use' ? [[b.id, b.name, b.input]] : []));
    expect(uses).toEqual([
      ['call_A', 'get_weather', { location: 'Paris, France' }],
      ['call_B', 'get_time', { tz: 'Europe/Paris' }],
    ]);
    if (s === 'text-between') expect(done[1]).toMatchObject({ type: 'text', text: 'Checking both.' });
  });

  it('a non-streamed tool call without an id comes out as a tool_use with one', async () => {
    const r = await anthropic().messages.create(params('no-id'));
    const uses = r.content.filter((b) => b.type === 'tool_use');
    expect(uses.map((u) => u.name)).toEqual(['get_weather', 'get_time']);
    for (const u of uses) expect(u.id).toMatch(/^call_\w+$/);
  });
});

describe('/v1/responses with the openai SDK stream helper', () => {
  it.each(SCENARIOS)('%s: two function_call items, each with its own arguments', async (s) => {
    const stream = openai().responses.stream({
      model: 'acme/local',
      input: s,
      tools: ['get_weather', 'get_time'].map((name) => ({
        type: 'function' as const,
        name,
        parameters: object,
        strict: false,
      })),
    });
    const r = await stream.finalResponse();
    const items = r.output.flatMap((o) =>
      o.type === 'function_call' ? [[o.call_id, o.name, o.arguments]] : [],
    );
    expect(items).toEqual(EXPECTED[s]);
    expect(r.output.every((o) => o.type !== 'function_call' || o.status === 'completed')).toBe(true);
  });
});
