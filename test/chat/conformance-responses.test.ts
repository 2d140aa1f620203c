import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  anthropicChannel,
  type ChatGateway,
  fixture,
  fixtureJson,
  geminiChannel,
  lastSentTo,
  model,
  oaChunk,
  oaCompletion,
  openaiChannel,
  recordedAnswer,
  requestLogs,
  sse,
  sseSteps,
  startChatGateway,
} from './chat-helpers.js';

/**
 * The OpenAI Responses ingress (/v1/responses) with the official `openai` SDK
 * (`client.responses.create` / `.stream`) against a started gateway, in front of a fake
 * OpenAI-compatible upstream (recorded chat answers, translated both ways) and a fake Anthropic one
 * (reasoning with signatures, carried in encrypted_content). The last user text picks the scenario.
 */
const lastText = (json: any): string => {
  const last = json?.messages?.filter((m: any) => m.role === 'user').at(-1);
  if (typeof last?.content === 'string') return last.content;
  const text = (last?.content ?? []).find((b: any) => b.type === 'text');
  return text?.text ?? '';
};

/** An answer cut by the length limit, as OpenAI sends it. */
const LONG = { ...oaCompletion('Once upon a', { prompt_tokens: 8, completion_tokens: 3 }) };
LONG.choices = [{ ...LONG.choices[0]!, finish_reason: 'length' }];

/** Codex's apply_patch input, with the newlines and quotes a JSON string escapes. */
const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+say "hi"\n*** End Patch\n';
/** A chat answer calling tools, as OpenAI sends it (the custom tool is a function upstream). */
const toolAnswer = (calls: { id: string; name: string; arguments: string }[]) => {
  const answer: any = oaCompletion('', { prompt_tokens: 30, completion_tokens: 20 });
  answer.choices[0].message = {
    role: 'assistant',
    content: null,
    tool_calls: calls.map(({ id, name, arguments: args }) => ({
      id,
      type: 'function',
      function: { name, arguments: args },
    })),
  };
  answer.choices[0].finish_reason = 'tool_calls';
  return answer;
};

let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  const openai = (req: any) => {
    const s = lastText(req.json);
    const stream = req.json.stream === true;
    if (s.startsWith('tools')) return recordedAnswer('openai/tools', stream);
    if (s.startsWith('reason')) return recordedAnswer('openai/reasoning', stream);
    if (s === 'long')
      return stream
        ? {
            sse: sse([
              oaChunk({ role: 'assistant', content: 'Once' }),
              oaChunk({ content: ' upon a' }),
              oaChunk({}, 'length'),
              {
                ...oaChunk({}),
                choices: [],
                usage: { prompt_tokens: 8, completion_tokens: 3, total_tokens: 11 },
              },
            ]),
          }
        : { json: LONG };
    if (s === 'cached')
      return {
        json: {
          ...oaCompletion('ok', { prompt_tokens: 100, completion_tokens: 40 }),
          usage: {
            prompt_tokens: 100,
            completion_tokens: 40,
            total_tokens: 140,
            prompt_tokens_details: { cached_tokens: 64 },
            completion_tokens_details: { reasoning_tokens: 30 },
          },
        },
      };
    if (s === 'long calls' && stream)
      return {
        sse: sse([
          oaChunk({
            role: 'assistant',
            tool_calls: [
              { index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } },
            ],
          }),
          oaChunk({ tool_calls: [{ index: 0, function: { arguments: '{"location":"Oslo"}' } }] }),
          oaChunk({
            tool_calls: [
              {
                index: 1,
                id: 'call_b',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"locat' },
              },
            ],
          }),
          oaChunk({}, 'length'),
        ]),
      };
    if (s === 'long calls') {
      // Cut by the length limit in the second call's arguments.
      const answer: any = oaCompletion('', { prompt_tokens: 9, completion_tokens: 20 });
      answer.choices[0].message = {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_a',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"location":"Oslo"}' },
          },
          { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"locat' } },
        ],
      };
      answer.choices[0].finish_reason = 'length';
      return { json: answer };
    }
    if (s === 'cut') return { sse: sseSteps(fixture('openai/error-after-200.sse')) };
    if (s === 'too long') return { status: 400, json: fixtureJson('openai/error-400-context.json') };
    if (s === 'patch raw')
      return { json: toolAnswer([{ id: 'call_raw1', name: 'apply_patch', arguments: PATCH }]) };
    if (s.startsWith('patch')) {
      if (!stream)
        return {
          json: toolAnswer([
            { id: 'call_patch1', name: 'apply_patch', arguments: JSON.stringify({ input: PATCH }) },
          ]),
        };
      // The arguments in pieces, cut inside an escape, then a function call of the same answer.
      const args = JSON.stringify({ input: PATCH });
      const call = (index: number, fn: object, id?: string) =>
        oaChunk({ tool_calls: [{ index, ...(id ? { id, type: 'function' } : {}), function: fn }] });
      return {
        sse: sse([
          oaChunk({ role: 'assistant', content: null }),
          call(0, { name: 'apply_patch', arguments: '' }, 'call_patch2'),
          call(0, { arguments: args.slice(0, 20) }),
          call(0, { arguments: args.slice(20, args.indexOf('\\n') + 1) }),
          call(0, { arguments: args.slice(args.indexOf('\\n') + 1) }),
          call(1, { name: 'get_weather', arguments: '{"location":"Oslo"}' }, 'call_w2'),
          oaChunk({}, 'tool_calls'),
          {
            ...oaChunk({}),
            choices: [],
            usage: { prompt_tokens: 30, completion_tokens: 20, total_tokens: 50 },
          },
        ]),
      };
    }
    if (s === 'no call id') {
      // Some OpenAI-compatible servers send tool calls without an id.
      const answer: any = oaCompletion('', { prompt_tokens: 9, completion_tokens: 4 });
      answer.choices[0].message = {
        role: 'assistant',
        content: null,
        tool_calls: [
          { type: 'function', function: { name: 'get_weather', arguments: '{"location":"Oslo"}' } },
        ],
      };
      answer.choices[0].finish_reason = 'tool_calls';
      return { json: answer };
    }
    return recordedAnswer('openai/chat', stream);
  };
  const anthropic = (req: any) =>
    req.json.stream === true
      ? { sse: sseSteps(fixture('anthropic/reasoning-stream.sse')) }
      : { json: fixtureJson('anthropic/reasoning.json') };
  // Gemini signs the last text part of an answer: the signature comes with the answer's last words.
  const gemChunk = (parts: object[], finishReason?: string) => ({
    candidates: [{ content: { parts, role: 'model' }, index: 0, ...(finishReason ? { finishReason } : {}) }],
    usageMetadata: {
      promptTokenCount: 6,
      candidatesTokenCount: 3,
      thoughtsTokenCount: 4,
      totalTokenCount: 13,
    },
    modelVersion: 'gemini-2.5-flash',
  });
  const gemini = {
    sse: sse(
      [
        gemChunk([{ text: 'Greeting the user.', thought: true }]),
        gemChunk([{ text: 'Hello ' }]),
        gemChunk([{ text: 'world', thoughtSignature: 'EpMCCpACAdHtim9T' }], 'STOP'),
      ],
      false,
    ),
  };
  up = await startFakeUpstream({
    'POST /v1/messages': anthropic,
    'POST /v1/chat/completions': openai,
    'POST /v1beta/models/gemini-2.5-flash:streamGenerateContent': gemini,
    'POST /v1beta/models/gemini-2.5-flash:generateContent': { json: fixtureJson('gemini/chat.json') },
  });
  c = await startChatGateway({
    channels: [
      anthropicChannel('claude', up, { 'acme/claude': 'claude-sonnet-4-5' }),
      geminiChannel('google', up, { 'acme/gemini': 'gemini-2.5-flash' }),
      openaiChannel('oa', up, ['acme/gpt']),
    ],
    models: [
      model('acme/claude', { max_completion_tokens: 64_000 }),
      model('acme/gpt'),
      model('acme/gemini'),
    ],
    gateway: { retry_base_ms: 1, first_byte_timeout_ms: 2000 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const client = (o: Partial<ConstructorParameters<typeof OpenAI>[0]> = {}) =>
  new OpenAI({ baseURL: `${c.gw.url}/v1`, apiKey: c.key, maxRetries: 0, ...o });
const sentTo = (path: string) => lastSentTo(up, path);
const sentChat = () => sentTo('/v1/chat/completions').json;

const WEATHER = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather of a place',
  parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  strict: false,
};

describe('openai SDK responses.create', () => {
  it('answers a text input with a Response: output message, output_text, usage, echoed settings', async () => {
    const r = await client().responses.create({ model: 'acme/gpt', input: 'hello' });
    expect(r.id).toMatch(/^resp_/);
    expect(r.object).toBe('response');
    expect(r.status).toBe('completed');
    expect(r.model).toBe('acme/gpt');
    expect(typeof r.created_at).toBe('number');
    expect(r.error).toBeNull();
    expect(r.incomplete_details).toBeNull();
    expect(r.output).toEqual([
      {
        id: expect.stringMatching(/^msg_/),
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [
          { type: 'output_text', text: 'Hello! How can I assist you today?', annotations: [], logprobs: [] },
        ],
      },
    ]);
    // Computed by the SDK from output.
    expect(r.output_text).toBe('Hello! How can I assist you today?');
    expect(r.usage).toEqual({
      input_tokens: 19,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 10,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 29,
    });
    expect(r).toMatchObject({
      instructions: null,
      tools: [],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      temperature: null,
      top_p: null,
      metadata: {},
      text: { format: { type: 'text' } },
      store: false,
    });
    expect(sentChat()).toMatchObject({ model: 'acme/gpt', messages: [{ role: 'user', content: 'hello' }] });
  });

  it('maps instructions, multi-turn items and parameters into the chat request', async () => {
    const r = await client().responses.create({
      model: 'acme/gpt',
      instructions: 'Be terse.',
      input: [
        { role: 'developer', content: [{ type: 'input_text', text: 'Answer in English.' }] },
        { role: 'user', content: 'first question' },
        {
          type: 'message',
          role: 'assistant',
          id: 'msg_1',
          status: 'completed',
          content: [{ type: 'output_text', text: 'first answer', annotations: [] }],
        },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'what is this?' },
            { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'low' },
          ],
        },
      ],
      temperature: 0.3,
      top_p: 0.9,
      max_output_tokens: 200,
      metadata: { run: 'r1' },
      user: 'u-42',
    });
    expect(sentChat()).toMatchObject({
      model: 'acme/gpt',
      messages: [
        { role: 'system', content: 'Be terse.' },
        // A developer message (the OpenAI-compatible adapter sends it as system, as for chat).
        { role: 'system', content: [{ type: 'text', text: 'Answer in English.' }] },
        { role: 'user', content: 'first question' },
        { role: 'assistant', content: 'first answer' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
          ],
        },
      ],
      temperature: 0.3,
      top_p: 0.9,
      user: 'u-42',
    });
    const sent = sentChat();
    expect(sent.max_tokens ?? sent.max_completion_tokens).toBe(200);
    expect(r).toMatchObject({
      instructions: 'Be terse.',
      temperature: 0.3,
      top_p: 0.9,
      max_output_tokens: 200,
      metadata: { run: 'r1' },
      user: 'u-42',
    });
  });

  it('runs a function calling round trip: function_call out, function_call_output back', async () => {
    const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'tools: weather in Boston?' }];
    const r = await client().responses.create({
      model: 'acme/gpt',
      input,
      tools: [WEATHER],
      tool_choice: 'required',
    });
    expect(r.status).toBe('completed');
    expect(r.output).toEqual([
      {
        id: expect.stringMatching(/^fc_/),
        type: 'function_call',
        status: 'completed',
        call_id: 'call_abc123',
        name: 'get_weather',
        arguments: '{\n"location": "Boston, MA"\n}',
      },
    ]);
    expect(r.tools).toEqual([WEATHER]);
    expect(r.tool_choice).toBe('required');
    expect(sentChat()).toMatchObject({
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather of a place',
            parameters: WEATHER.parameters,
            strict: false,
          },
        },
      ],
      tool_choice: 'required',
    });

    await client().responses.create({
      model: 'acme/gpt',
      input: [
        ...input,
        ...(r.output as OpenAI.Responses.ResponseInputItem[]),
        { type: 'function_call_output', call_id: 'call_abc123', output: '{"temp":20}' },
      ],
      tools: [WEATHER],
    });
    expect(sentChat().messages).toEqual([
      { role: 'user', content: 'tools: weather in Boston?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_abc123',
            type: 'function',
            function: { name: 'get_weather', arguments: '{\n"location": "Boston, MA"\n}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_abc123', content: '{"temp":20}' },
    ]);
  });

  it('gives a function call a call_id when the upstream gave its tool call no id', async () => {
    const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'no call id' }];
    const r = await client().responses.create({ model: 'acme/gpt', input, tools: [WEATHER] });
    const call = r.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).toMatchObject({
      type: 'function_call',
      name: 'get_weather',
      call_id: expect.stringMatching(/^call_/),
    });
    await client().responses.create({
      model: 'acme/gpt',
      input: [...input, call, { type: 'function_call_output', call_id: call.call_id, output: 'sunny' }],
      tools: [WEATHER],
    });
    const [, assistant, tool] = sentChat().messages;
    expect(assistant.tool_calls[0].id).toBe(call.call_id);
    expect(tool).toEqual({ role: 'tool', tool_call_id: call.call_id, content: 'sunny' });
  });

  it('leaves out an assistant turn that is only reasoning (a turn cut short), which chat upstreams refuse', async () => {
    await client().responses.create({
      model: 'acme/gpt',
      input: [
        { role: 'user', content: 'first' },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Thinking it over.' }] },
        { role: 'user', content: 'never mind, second' },
      ],
    });
    expect(sentChat().messages).toEqual([
      { role: 'user', content: 'first' },
      { role: 'user', content: 'never mind, second' },
    ]);
  });

  it('sends a json_schema text format as response_format', async () => {
    const schema = {
      type: 'object',
      properties: { n: { type: 'integer' } },
      required: ['n'],
      additionalProperties: false,
    };
    const r = await client().responses.create({
      model: 'acme/gpt',
      input: 'a number',
      text: { format: { type: 'json_schema', name: 'num', schema, strict: true } },
    });
    expect(sentChat().response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'num', schema, strict: true },
    });
    expect(r.text).toEqual({ format: { type: 'json_schema', name: 'num', schema, strict: true } });
  });

  it('reports cached and reasoning tokens in usage', async () => {
    const r = await client().responses.create({ model: 'acme/gpt', input: 'cached' });
    expect(r.usage).toEqual({
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 64 },
      output_tokens: 40,
      output_tokens_details: { reasoning_tokens: 30 },
      total_tokens: 140,
    });
  });

  it('is incomplete with reason max_output_tokens when the answer hit the limit', async () => {
    const r = await client().responses.create({ model: 'acme/gpt', input: 'long', max_output_tokens: 3 });
    expect(r.status).toBe('incomplete');
    expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(r.output[0]).toMatchObject({ type: 'message', status: 'incomplete' });
    expect(r.output_text).toBe('Once upon a');
  });

  it('marks a function call cut mid-arguments by the length limit incomplete, the calls before it completed', async () => {
    const r = await client().responses.create({
      model: 'acme/gpt',
      input: 'long calls',
      tools: [WEATHER],
      max_output_tokens: 20,
    });
    expect(r.status).toBe('incomplete');
    expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(r.output.map((o) => [o.type, (o as { status?: string }).status])).toEqual([
      ['function_call', 'completed'],
      ['function_call', 'incomplete'],
    ]);
    expect(r.output[1]).toMatchObject({ call_id: 'call_b', arguments: '{"locat' });

    // Streamed alike: the item done events and the final response say so too.
    const stream = client().responses.stream({
      model: 'acme/gpt',
      input: 'long calls',
      tools: [WEATHER],
      max_output_tokens: 20,
    });
    const done: [string, string][] = [];
    stream.on('response.output_item.done', (e) =>
      done.push([e.item.type, (e.item as { status: string }).status]),
    );
    const final = await stream.finalResponse();
    expect(final.status).toBe('incomplete');
    const statuses = final.output.map((o) => [o.type, (o as { status?: string }).status]);
    expect(statuses).toEqual([
      ['function_call', 'completed'],
      ['function_call', 'incomplete'],
    ]);
    expect(done).toEqual(statuses);
  });

  it('returns reasoning as a reasoning item, and takes its encrypted_content back with the signature', async () => {
    const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'reason: primes?' }];
    const r = await client().responses.create({
      model: 'acme/claude',
      input,
      max_output_tokens: 2000,
      reasoning: { effort: 'high', summary: 'auto' },
      include: ['reasoning.encrypted_content'],
    });
    const reasoning = r.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning).toMatchObject({
      type: 'reasoning',
      summary: [
        {
          type: 'summary_text',
          text: "To approach this, let's think about what we know about prime numbers...",
        },
      ],
    });
    expect(reasoning.encrypted_content).toEqual(expect.any(String));
    expect(r.output[1]).toMatchObject({ type: 'message' });
    expect(r.output_text).toBe('Yes, there are infinitely many prime numbers such that...');

    await client().responses.create({
      model: 'acme/claude',
      input: [
        ...input,
        ...(r.output as OpenAI.Responses.ResponseInputItem[]),
        { role: 'user', content: 'and twin primes?' },
      ],
      max_output_tokens: 2000,
    });
    const sent = sentTo('/v1/messages').json;
    expect(sent.messages[1]).toEqual({
      role: 'assistant',
      content: [
        {
          type: 'thinking',
          thinking: "To approach this, let's think about what we know about prime numbers...",
          signature: fixtureJson('anthropic/reasoning.json').content[0].signature,
        },
        { type: 'redacted_thinking', data: fixtureJson('anthropic/reasoning.json').content[1].data },
        { type: 'text', text: 'Yes, there are infinitely many prime numbers such that...' },
      ],
    });
  });

  it('leaves encrypted_content out unless include asks for it', async () => {
    const r = await client().responses.create({
      model: 'acme/claude',
      input: 'reason',
      max_output_tokens: 2000,
    });
    expect(r.output[0]).toMatchObject({ type: 'reasoning' });
    expect(r.output[0]).not.toHaveProperty('encrypted_content');
  });

  it('serves /api/v1/responses (OpenRouter path) too', async () => {
    const r = await client({ baseURL: `${c.gw.url}/api/v1` }).responses.create({
      model: 'acme/gpt',
      input: 'hi',
    });
    expect(r.output_text).toBe('Hello! How can I assist you today?');
  });

  it('logs each request with endpoint responses and its tokens', async () => {
    await client().responses.create({ model: 'acme/gpt', input: 'cached', metadata: { tag: 'log-check' } });
    const row = (await requestLogs(c)).find((l) => l.endpoint === 'responses' && l.prompt_tokens === 100);
    expect(row).toMatchObject({
      endpoint: 'responses',
      model: 'acme/gpt',
      prompt_tokens: 100,
      completion_tokens: 40,
    });
  });
});

describe('openai SDK responses.stream', () => {
  it('streams the documented events with increasing sequence numbers, and finalResponse() has the answer and usage', async () => {
    const stream = client().responses.stream({ model: 'acme/gpt', input: 'hello' });
    const deltas: string[] = [];
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    for await (const e of stream) events.push(e);
    const r = await stream.finalResponse();
    expect(deltas.join('')).toBe('Hello! How can I assist you today?');
    expect(r.output_text).toBe('Hello! How can I assist you today?');
    expect(r.status).toBe('completed');
    expect(r.usage).toEqual({
      input_tokens: 19,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 10,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 29,
    });
    const types = events.map((e) => e.type).filter((t) => t !== 'response.output_text.delta');
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const delta = events.find((e) => e.type === 'response.output_text.delta') as any;
    const added = events.find((e) => e.type === 'response.output_item.added') as any;
    expect(delta).toMatchObject({ item_id: added.item.id, output_index: 0, content_index: 0 });
  });

  it('writes an event: line naming each event, as OpenAI does', async () => {
    const res = await fetch(`${c.gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'acme/gpt', input: 'hello', stream: true }),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const blocks = (await res.text()).split('\n\n').filter((b) => b.startsWith('event: '));
    expect(blocks.length).toBeGreaterThan(8);
    for (const b of blocks) {
      const [event, data] = b.split('\n');
      expect(JSON.parse(data!.slice('data: '.length)).type).toBe(event!.slice('event: '.length));
    }
  });

  it('streams function calls with their argument deltas', async () => {
    const stream = client().responses.stream({
      model: 'acme/gpt',
      input: 'tools: weather and time',
      tools: [WEATHER, { ...WEATHER, name: 'get_time' }],
    });
    const argDeltas: string[] = [];
    stream.on('response.function_call_arguments.delta', (e) => argDeltas.push(e.delta));
    const r = await stream.finalResponse();
    expect(r.output).toEqual([
      expect.objectContaining({
        type: 'function_call',
        call_id: 'call_DdmO9pD3xa9XTPNJ32zg2hcA',
        name: 'get_weather',
        arguments: '{"location": "Paris, France"}',
        status: 'completed',
      }),
      expect.objectContaining({
        type: 'function_call',
        call_id: 'call_ABaz42nVn1GXXq7HAYSmOkqB',
        name: 'get_time',
        arguments: '{"tz":"Europe/Paris"}',
      }),
    ]);
    expect(argDeltas.join('')).toBe('{"location": "Paris, France"}{"tz":"Europe/Paris"}');
  });

  it('streams reasoning as summary events ahead of the message', async () => {
    const stream = client().responses.stream({ model: 'acme/gpt', input: 'reason it' });
    const summary: string[] = [];
    stream.on('response.reasoning_summary_text.delta', (e) => summary.push(e.delta));
    const r = await stream.finalResponse();
    expect(summary.join('')).toBe('The user asks 2+2. That is 4.');
    expect(r.output.map((o) => o.type)).toEqual(['reasoning', 'message']);
    expect(r.output[0]).toMatchObject({
      summary: [{ type: 'summary_text', text: 'The user asks 2+2. That is 4.' }],
    });
    expect(r.output_text).toBe('2 + 2 = 4.');
  });

  it('streams an Anthropic reasoning item whose encrypted_content carries the signature back', async () => {
    const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'reason: gcd?' }];
    const stream = client().responses.stream({
      model: 'acme/claude',
      input,
      max_output_tokens: 2000,
      include: ['reasoning.encrypted_content'],
    });
    const r = await stream.finalResponse();
    expect(r.output.map((o) => o.type)).toEqual(['reasoning', 'message']);
    expect((r.output[0] as OpenAI.Responses.ResponseReasoningItem).encrypted_content).toEqual(
      expect.any(String),
    );
    await client().responses.create({
      model: 'acme/claude',
      input: [
        ...input,
        ...(r.output as OpenAI.Responses.ResponseInputItem[]),
        { role: 'user', content: 'thanks' },
      ],
      max_output_tokens: 2000,
    });
    const thinking = sentTo('/v1/messages').json.messages[1].content[0];
    expect(thinking).toEqual({
      type: 'thinking',
      thinking:
        'I need to find the GCD of 1071 and 462 using the Euclidean algorithm.\n\n1071 = 2 \u00d7 462 + 147\n462 = 3 \u00d7 147 + 21\n147 = 7 \u00d7 21 + 0\n\nSo GCD(1071, 462) = 21',
      signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds...',
    });
  });

  it('keeps a Gemini answer one message when its signature comes with the last words', async () => {
    const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'greet me' }];
    const stream = client().responses.stream({
      model: 'acme/gemini',
      input,
      include: ['reasoning.encrypted_content'],
    });
    const r = await stream.finalResponse();
    // The signature came after the message began: it follows the message in a reasoning item of
    // its own, rather than splitting the message in two.
    expect(r.output.map((o) => o.type)).toEqual(['reasoning', 'message', 'reasoning']);
    expect(r.output[1]).toMatchObject({
      content: [{ type: 'output_text', text: 'Hello world' }],
      status: 'completed',
    });
    expect(r.output_text).toBe('Hello world');
    await client().responses.create({
      model: 'acme/gemini',
      input: [
        ...input,
        ...(r.output as OpenAI.Responses.ResponseInputItem[]),
        { role: 'user', content: 'thanks' },
      ],
    });
    const sent = sentTo('/v1beta/models/gemini-2.5-flash:generateContent').json;
    expect(sent.contents[1]).toEqual({
      role: 'model',
      parts: [{ text: 'Hello world', thoughtSignature: 'EpMCCpACAdHtim9T' }],
    });
  });

  it('ends with response.incomplete when the answer hit max_output_tokens', async () => {
    const stream = client().responses.stream({ model: 'acme/gpt', input: 'long', max_output_tokens: 3 });
    const types: string[] = [];
    for await (const e of stream) types.push(e.type);
    const r = await stream.finalResponse();
    expect(types.at(-1)).toBe('response.incomplete');
    expect(r.status).toBe('incomplete');
    expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(r.output_text).toBe('Once upon a');
  });

  it('ends with response.failed carrying the error when the upstream fails mid-stream', async () => {
    const stream = client().responses.stream({ model: 'acme/gpt', input: 'cut' });
    const types: string[] = [];
    for await (const e of stream) types.push(e.type);
    const r = await stream.finalResponse();
    expect(types.at(-1)).toBe('response.failed');
    expect(r.status).toBe('failed');
    expect(r.error).toEqual({ code: 'server_error', message: expect.any(String) });
    expect(r.output_text).toBe('Hel');
  });
});

describe('custom (freeform) tools, as Codex sends apply_patch', () => {
  const GRAMMAR = 'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF\n';
  const APPLY_PATCH = {
    type: 'custom' as const,
    name: 'apply_patch',
    description: 'Use the `apply_patch` tool to edit files.',
    format: { type: 'grammar' as const, syntax: 'lark' as const, definition: GRAMMAR },
  };
  const INPUT_SCHEMA = {
    type: 'object',
    properties: { input: { type: 'string' } },
    required: ['input'],
    additionalProperties: false,
  };

  it('sends a custom tool as a function taking {input} and answers its call with a custom_tool_call item', async () => {
    const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'patch: add hello.txt' }];
    const r = await client().responses.create({ model: 'acme/gpt', input, tools: [WEATHER, APPLY_PATCH] });
    expect(sentChat().tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather of a place',
          parameters: WEATHER.parameters,
          strict: false,
        },
      },
      {
        type: 'function',
        function: {
          name: 'apply_patch',
          description: `Use the \`apply_patch\` tool to edit files.\n\nInput: free text following this lark grammar:\n${GRAMMAR}`,
          parameters: INPUT_SCHEMA,
        },
      },
    ]);
    expect(r.status).toBe('completed');
    expect(r.output).toEqual([
      {
        id: expect.stringMatching(/^ctc_/),
        type: 'custom_tool_call',
        status: 'completed',
        call_id: 'call_patch1',
        name: 'apply_patch',
        input: PATCH,
      },
    ]);
    expect(r.tools).toEqual([WEATHER, APPLY_PATCH]);

    // The call and its output go back as the assistant's tool call and a tool message.
    await client().responses.create({
      model: 'acme/gpt',
      input: [
        ...input,
        ...(r.output as OpenAI.Responses.ResponseInputItem[]),
        { type: 'custom_tool_call_output', call_id: 'call_patch1', output: 'Success. Updated hello.txt' },
      ],
      tools: [WEATHER, APPLY_PATCH],
    });
    expect(sentChat().messages).toEqual([
      { role: 'user', content: 'patch: add hello.txt' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_patch1',
            type: 'function',
            function: { name: 'apply_patch', arguments: JSON.stringify({ input: PATCH }) },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_patch1', content: 'Success. Updated hello.txt' },
    ]);
  });

  it('refuses history items whose strings are not strings, naming the field, instead of sending them on empty', async () => {
    const cases: Array<[unknown[], string]> = [
      [
        [
          { role: 'user', content: 'x' },
          { type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: 42 },
        ],
        'input.1.input',
      ],
      [
        [
          { role: 'user', content: 'x' },
          { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: null }] },
        ],
        'input.1.summary.0.text',
      ],
      [
        [
          { role: 'user', content: 'x' },
          { type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 7 }] },
        ],
        'input.1.content.0.refusal',
      ],
    ];
    for (const [input, field] of cases) {
      const err = await client()
        .responses.create({ model: 'acme/gpt', input: input as never, tools: [APPLY_PATCH] })
        .catch((e) => e);
      expect(err, field).toBeInstanceOf(OpenAI.BadRequestError);
      expect(err.message).toContain(field);
    }
  });

  it('takes arguments that are not {"input": ...} as the input itself', async () => {
    const r = await client().responses.create({
      model: 'acme/gpt',
      input: 'patch raw',
      tools: [APPLY_PATCH],
    });
    expect(r.output).toEqual([expect.objectContaining({ type: 'custom_tool_call', input: PATCH })]);
  });

  it('maps tool_choice {type: "custom", name} to the function, and adds no note for a text format', async () => {
    const plain = { type: 'custom' as const, name: 'notes', format: { type: 'text' as const } };
    const r = await client().responses.create({
      model: 'acme/gpt',
      input: 'patch: now',
      tools: [APPLY_PATCH, plain],
      tool_choice: { type: 'custom', name: 'apply_patch' },
    });
    expect(sentChat().tool_choice).toEqual({ type: 'function', function: { name: 'apply_patch' } });
    expect(sentChat().tools[1]).toEqual({
      type: 'function',
      function: { name: 'notes', parameters: INPUT_SCHEMA },
    });
    expect(r.tool_choice).toEqual({ type: 'custom', name: 'apply_patch' });
  });

  it('cuts a long grammar in the description', async () => {
    const long = { ...APPLY_PATCH, format: { ...APPLY_PATCH.format, definition: 'x'.repeat(20_000) } };
    await client().responses.create({ model: 'acme/gpt', input: 'patch: long', tools: [long] });
    const description: string = sentChat().tools[0].function.description;
    expect(description.length).toBeLessThan(9000);
    expect(description).toMatch(/x\n\.\.\. \(grammar truncated\)$/);
  });

  it('refuses a custom tool whose name another tool has', async () => {
    const err = await client()
      .responses.create({
        model: 'acme/gpt',
        input: 'hi',
        tools: [APPLY_PATCH, { ...WEATHER, name: 'apply_patch' }],
      })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.error).toMatchObject({ param: 'tools.1.name' });
  });

  it('streams a custom_tool_call with its input events, beside a function call, and finalResponse() has both', async () => {
    const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'patch: streamed' }];
    const stream = client().responses.stream({ model: 'acme/gpt', input, tools: [WEATHER, APPLY_PATCH] });
    const deltas: string[] = [];
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    stream.on('response.custom_tool_call_input.delta', (e) => deltas.push(e.delta));
    for await (const e of stream) events.push(e);
    const r = await stream.finalResponse();
    expect(deltas.join('')).toBe(PATCH);
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.done',
      'response.output_item.done',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const added = events[2] as OpenAI.Responses.ResponseOutputItemAddedEvent;
    expect(added.item).toMatchObject({
      type: 'custom_tool_call',
      call_id: 'call_patch2',
      name: 'apply_patch',
      input: '',
    });
    const done = events[6] as OpenAI.Responses.ResponseCustomToolCallInputDoneEvent;
    expect(done).toMatchObject({ item_id: added.item.id, output_index: 0, input: PATCH });
    expect(r.output).toEqual([
      {
        id: added.item.id,
        type: 'custom_tool_call',
        status: 'completed',
        call_id: 'call_patch2',
        name: 'apply_patch',
        input: PATCH,
      },
      expect.objectContaining({
        type: 'function_call',
        call_id: 'call_w2',
        arguments: '{"location":"Oslo"}',
      }),
    ]);

    await client().responses.create({
      model: 'acme/gpt',
      input: [
        ...input,
        ...(r.output as OpenAI.Responses.ResponseInputItem[]),
        { type: 'custom_tool_call_output', call_id: 'call_patch2', output: 'Done' },
        { type: 'function_call_output', call_id: 'call_w2', output: 'sunny' },
      ],
      tools: [WEATHER, APPLY_PATCH],
    });
    const [, assistant, ...tools] = sentChat().messages;
    expect(assistant.tool_calls.map((t: any) => t.function)).toEqual([
      { name: 'apply_patch', arguments: JSON.stringify({ input: PATCH }) },
      { name: 'get_weather', arguments: '{"location":"Oslo"}' },
    ]);
    expect(tools).toEqual([
      { role: 'tool', tool_call_id: 'call_patch2', content: 'Done' },
      { role: 'tool', tool_call_id: 'call_w2', content: 'sunny' },
    ]);
  });
});

describe('refusals', () => {
  it('refuses previous_response_id with a 400 naming it (nothing is stored)', async () => {
    const err = await client()
      .responses.create({ model: 'acme/gpt', input: 'hi', previous_response_id: 'resp_123' })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({ param: 'previous_response_id', type: 'invalid_request_error' });
    expect(err.message).toMatch(/stores no responses/);
  });

  it('takes previous_response_id: null as not given', async () => {
    const r = await client().responses.create({ model: 'acme/gpt', input: 'hi', previous_response_id: null });
    expect(r.status).toBe('completed');
  });

  it('takes the null settings OpenAI types allow as not given', async () => {
    const r = await client().responses.create({
      model: 'acme/gpt',
      input: 'hi',
      text: { verbosity: null },
      reasoning: { effort: null, summary: null },
    });
    expect(r.status).toBe('completed');
    expect(r.text).toEqual({ format: { type: 'text' } });
    expect(sentChat()).not.toHaveProperty('verbosity');
  });

  it('takes every reasoning effort the openai SDK types list, max included, as chat does', async () => {
    const r = await client().responses.create({
      model: 'acme/gpt',
      input: 'hi',
      reasoning: { effort: 'max' },
    });
    expect(r.status).toBe('completed');
    expect(r.reasoning).toMatchObject({ effort: 'max' });
  });

  it('refuses a built-in tool with a 400 naming it', async () => {
    const err = await client()
      .responses.create({ model: 'acme/gpt', input: 'hi', tools: [{ type: 'web_search' }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.error).toMatchObject({ param: 'tools.0.type' });
    expect(err.message).toMatch(/built-in tool "web_search"/);
  });

  it('refuses conversation, background, an image by file_id and an unknown item type', async () => {
    const bad = [
      { conversation: 'conv_1' },
      { background: true },
      { input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1', detail: 'auto' }] }] },
      { input: [{ type: 'item_reference', id: 'msg_1' }] },
      { input: [{ type: 'computer_call_output', call_id: 'c', output: {} }] },
    ];
    for (const extra of bad) {
      const err = await client()
        .responses.create({ model: 'acme/gpt', input: 'hi', ...(extra as object) })
        .catch((e) => e);
      expect(err, JSON.stringify(extra)).toBeInstanceOf(OpenAI.BadRequestError);
    }
  });

  it('refuses input items with a field of the wrong type or empty, naming it, and sends nothing', async () => {
    const user = { role: 'user', content: 'weather?' };
    const fc = { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{}' };
    const cases: [object[], string, RegExp][] = [
      [[user, { ...fc, arguments: { location: 'Oslo' } }], 'input.1.arguments', /must be string/],
      [[user, { ...fc, arguments: undefined }], 'input.1.arguments', /is required/],
      [[user, { ...fc, name: '' }], 'input.1.name', /must not be empty/],
      [[user, { ...fc, call_id: 7 }], 'input.1.call_id', /must be string/],
      [
        [{ role: 'user', content: [{ type: 'input_text', text: { value: 'hi' } }] }],
        'input.0.content.0.text',
        /must be string/,
      ],
      [[{ role: 'user', content: [{ type: 'input_text' }] }], 'input.0.content.0.text', /is required/],
      [
        [user, { role: 'assistant', content: [{ type: 'output_text', text: 42 }] }],
        'input.1.content.0.text',
        /must be string/,
      ],
      [
        [
          user,
          fc,
          { type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_text', text: 1 }] },
        ],
        'input.2.output.0.text',
        /must be string/,
      ],
    ];
    const before = up.requests.length;
    for (const [input, param, message] of cases) {
      const r = await c.gw.call('POST', '/v1/responses', {
        token: c.key,
        body: { model: 'acme/gpt', input },
      });
      expect(r.status, param).toBe(400);
      expect(r.body.error, param).toMatchObject({ code: 400, type: 'invalid_request_error', param });
      expect(r.body.error.message, param).toMatch(new RegExp(`^${param}: ${message.source}`));
    }
    expect(up.requests.length).toBe(before);
  });

  it('refuses tools chat refuses: a repeated name, a tool_choice of no declared tool, parameters not an object', async () => {
    const fn = (name: string, parameters: unknown = { type: 'object' }) => ({
      type: 'function',
      name,
      parameters,
    });
    const cases: [object, string, RegExp][] = [
      [{ tools: [fn('f'), fn('g'), fn('f')] }, 'tools.2.name', /"f" is already the name of tools\.0/],
      [
        { tools: [fn('f')], tool_choice: { type: 'function', name: 'g' } },
        'tool_choice.name',
        /"g" is not the name of a tool in tools/,
      ],
      [{ tools: [fn('f', ['x'])] }, 'tools.0.parameters', /must be an object \(a JSON Schema\)/],
      [{ tools: [fn('f', '{"type":"object"}')] }, 'tools.0.parameters', /must be an object/],
    ];
    const before = up.requests.length;
    for (const [extra, param, message] of cases) {
      const err = await client()
        .responses.create({ model: 'acme/claude', input: 'hi', ...(extra as object) })
        .catch((e) => e);
      expect(err, param).toBeInstanceOf(OpenAI.BadRequestError);
      expect(err.error, param).toMatchObject({ param, type: 'invalid_request_error' });
      expect(err.message, param).toMatch(new RegExp(`^400 ${param}: ${message.source}`));
    }
    expect(up.requests.length).toBe(before);
    // A null parameters is not given, as chat takes it; a named choice of a declared tool is served.
    await client().responses.create({
      model: 'acme/claude',
      input: 'hi',
      tools: [fn('f', null) as never],
      tool_choice: { type: 'function', name: 'f' },
    });
    expect(sentTo('/v1/messages').json).toMatchObject({
      tools: [{ name: 'f' }],
      tool_choice: { type: 'tool', name: 'f' },
    });
  });

  it('names the input item of an image data URL that is not an image, and input for a prompt too long', async () => {
    const cases: [object[], string, RegExp][] = [
      [
        [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'what is this?' },
              { type: 'input_image', image_url: 'data:image/png;base64,' },
            ],
          },
        ],
        'input.0.content.1.image_url',
        /the data URL holds no data/,
      ],
      [
        [{ role: 'user', content: [{ type: 'input_image', image_url: 'data:application/pdf;base64,JVBE' }] }],
        'input.0.content.0.image_url',
        /application\/pdf is not an image \(send a PDF or other document as an input_file part\)/,
      ],
      [
        [
          { role: 'user', content: 'weather?' },
          { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{}' },
          {
            type: 'function_call_output',
            call_id: 'call_1',
            output: [{ type: 'input_image', image_url: 'data:image/png;base64,!!' }],
          },
        ],
        'input.2.output.0.image_url',
        /the data is not base64/,
      ],
    ];
    const before = up.requests.length;
    for (const [input, param, message] of cases) {
      const err = await client()
        .responses.create({ model: 'acme/gpt', instructions: 'Be brief.', input: input as never })
        .catch((e) => e);
      expect(err, param).toBeInstanceOf(OpenAI.BadRequestError);
      expect(err.error, param).toMatchObject({ param, type: 'invalid_request_error' });
      expect(err.message, param).toMatch(new RegExp(`^400 ${param}: ${message.source}$`));
    }
    expect(up.requests.length).toBe(before);
    // The upstream's context-length refusal names what this client sent the prompt in.
    const long = await client()
      .responses.create({ model: 'acme/gpt', input: 'too long' })
      .catch((e) => e);
    expect(long).toBeInstanceOf(OpenAI.BadRequestError);
    expect(long.error).toMatchObject({ param: 'input', metadata: { upstream_kind: 'context_length' } });
  });

  it("names the input item an upstream's adapter refuses (an empty turn, an image type), not the chat message", async () => {
    const svg = `data:image/svg+xml;base64,${Buffer.from('<svg/>').toString('base64')}`;
    const cases: [object, string, RegExp][] = [
      [{ input: '' }, 'input', /empty; Anthropic upstreams refuse an empty message/],
      [
        {
          input: [
            { role: 'user', content: 'hi' },
            { role: 'assistant', content: [{ type: 'output_text', text: 'Hello.' }] },
            { role: 'user', content: [{ type: 'input_text', text: '  ' }] },
          ],
        },
        'input.2.content',
        /empty; Anthropic upstreams refuse an empty message/,
      ],
      [
        {
          input: [
            {
              role: 'user',
              content: [
                { type: 'input_text', text: 'what is this?' },
                { type: 'input_image', image_url: svg },
              ],
            },
          ],
        },
        'input.0.content.1.image_url',
        /Anthropic upstreams do not take image\/svg\+xml images/,
      ],
    ];
    const before = up.requests.length;
    for (const [body, param, message] of cases) {
      const err = await client()
        .responses.create({ model: 'acme/claude', instructions: 'Be brief.', ...(body as object) })
        .catch((e) => e);
      expect(err, param).toBeInstanceOf(OpenAI.BadRequestError);
      expect(err.error, param).toMatchObject({ param, type: 'invalid_request_error' });
      expect(err.message, param).toMatch(new RegExp(`^400 ${param}: ${message.source}`));
    }
    expect(up.requests.length).toBe(before);
  });

  it('says an input item without a type or a role needs one, rather than calling its type "undefined"', async () => {
    const err = await client()
      .responses.create({ model: 'acme/gpt', input: [{ content: 'hi' }] as never })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.error).toMatchObject({ param: 'input.0.type' });
    expect(err.message).toBe(
      '400 input.0.type: is required (a message may give its role instead: {"role": "user", "content": ...})',
    );
  });

  it('names max_output_tokens, the field sent, when the limit is refused', async () => {
    const err = await client()
      .responses.create({ model: 'acme/gpt', input: 'hi', max_output_tokens: 1_000_000 })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.error).toMatchObject({ param: 'max_output_tokens' });
    expect(err.message).toMatch(/^400 max_output_tokens: must be below the context length of acme\/gpt/);
    // A quota refusal of a request without a limit says which field would get it through.
    const k = await c.gw.call('POST', '/api/key', {
      cookie: c.cookie,
      body: { name: 'r', quota_limit: 0.001 },
    });
    const refused = await client({ apiKey: k.body.data.key })
      .responses.create({ model: 'acme/gpt', input: 'hi' })
      .catch((e) => e);
    expect(refused.status).toBe(402);
    expect(refused.message).toMatch(/a lower max_output_tokens may fit$/);
    expect(refused.message).not.toMatch(/\bmax_tokens\b/);
  });

  it('refuses an input_image detail other than low, high, auto or original, naming it', async () => {
    const image = (detail: unknown) => ({
      model: 'acme/gpt',
      input: [
        { role: 'user', content: [{ type: 'input_image', image_url: 'https://example.com/a.png', detail }] },
      ],
    });
    const err = await client()
      .responses.create(image('ultra') as never)
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.error).toMatchObject({ param: 'input.0.content.0.detail' });
    expect(err.message).toMatch(/detail: must be one of low, high, auto, original/);
    await client().responses.create(image('original') as never);
    expect(sentChat().messages[0].content[0].image_url).toEqual({
      url: 'https://example.com/a.png',
      detail: 'original',
    });
  });

  it('answers 401 without a key, in the OpenAI error shape', async () => {
    const err = await client({ apiKey: 'sk-wrong' })
      .responses.create({ model: 'acme/gpt', input: 'hi' })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    const res = await fetch(`${c.gw.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'acme/gpt', input: 'hi' }),
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as any).error).toMatchObject({ code: 401, type: 'authentication_error' });
  });
});
