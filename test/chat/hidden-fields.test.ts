import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  type ChatGateway,
  fixture,
  fixtureJson,
  model,
  oaCompletion,
  rawStream,
  sseSteps,
  startChatGateway,
} from './chat-helpers.js';

/**
 * The names the Anthropic ingress gives what it carries hidden on the canonical request, its
 * messages and its tools (`anthropic_tools`, `anthropic_tool_choice`, `anthropic_thinking`,
 * `anthropic_beta`; a message's `is_error` and `anthropic_content`; a tool's `anthropic_fields`:
 * src/gateway/chat/hidden.ts) are not a client's to set: a /v1/chat/completions body carrying one,
 * as a field of its own, well-formed or not, is served (never a 500) and no upstream honours or
 * gets it. The fake upstream answers Anthropic's Messages API and OpenAI's Chat Completions with
 * recorded answers, and records what it gets.
 */
let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/messages': (req) =>
      req.json?.stream === true
        ? { sse: sseSteps(fixture('anthropic/chat-stream.sse')) }
        : { json: fixtureJson('anthropic/chat.json') },
    'POST /v1/chat/completions': { json: oaCompletion('from gpt') },
  });
  c = await startChatGateway({
    channels: [
      {
        name: 'an',
        kind: 'anthropic',
        base_url: up.url,
        keys: ['k'],
        models: ['t/claude'],
        model_mapping: { 't/claude': 'claude-sonnet-4-5' },
        // Every client beta forwarded: a body's anthropic_beta would show in the header.
        settings: { client_betas: ['*'] },
      },
      { name: 'oa', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: ['t/gpt'] },
      {
        name: 'oa-listed',
        kind: 'openai-compatible',
        base_url: `${up.url}/v1`,
        keys: ['k'],
        models: ['t/gpt-listed'],
        // A channel whose allow-list names a hidden field still does not get it from a body.
        settings: { supportedParams: ['max_tokens', 'anthropic_thinking', 'anthropic_tools', 'x_top'] },
      },
    ],
    models: [model('t/claude', { max_completion_tokens: 64_000 }), model('t/gpt'), model('t/gpt-listed')],
    gateway: { retry_base_ms: 1, max_attempts: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const last = (path: string) => up.requests.filter((r) => r.path === path).at(-1)!;
const chat = (body: Record<string, unknown>, path = '/v1/chat/completions') =>
  c.gw.call('POST', path, { token: c.key, body: { model: 't/claude', max_tokens: 4000, ...body } });

const weather = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
  },
};
const SERVER_TOOL = { type: 'web_search_20250305', name: 'web_search', max_uses: 1 };
const INTERLEAVED = 'interleaved-thinking-2025-05-14';

/** Served, by the Anthropic upstream, and what that upstream got. */
async function sentToAnthropic(body: Record<string, unknown>, path?: string) {
  const before = up.requests.length;
  const r = await chat(body, path);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.choices[0].message.content).toBe('Hello! How can I help you today?');
  expect(up.requests.length).toBe(before + 1);
  return last('/v1/messages');
}

describe('top-level hidden names in a chat body', () => {
  it.each([
    ['well-formed', [{ at: 0, tool: SERVER_TOOL }]],
    ['a string', 'web_search'],
    ['an object', { at: 0, tool: SERVER_TOOL }],
    ['a list of non-tools', [1, 'x', null]],
  ])('anthropic_tools (%s) adds no tool', async (_, anthropic_tools) => {
    const sent = await sentToAnthropic({
      messages: [{ role: 'user', content: 'hi' }],
      tools: [weather],
      anthropic_tools,
    });
    expect(sent.json.tools).toEqual([
      { name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
    ]);
    expect(sent.body).not.toContain('web_search');
  });

  it('anthropic_tools without any tool of the request adds none', async () => {
    for (const anthropic_tools of [[{ at: 0, tool: SERVER_TOOL }], 'web_search']) {
      const sent = await sentToAnthropic({ messages: [{ role: 'user', content: 'hi' }], anthropic_tools });
      expect(sent.json.tools).toBeUndefined();
    }
  });

  it.each([
    ['well-formed', { type: 'tool', name: 'web_search' }],
    ['a string', 'any'],
    ['a number', 42],
    ['a list', [{ type: 'any' }]],
  ])('anthropic_tool_choice (%s) is not the choice sent', async (_, anthropic_tool_choice) => {
    const sent = await sentToAnthropic({
      messages: [{ role: 'user', content: 'hi' }],
      tools: [weather],
      tool_choice: 'auto',
      anthropic_tool_choice,
    });
    expect(sent.json.tool_choice).toEqual({ type: 'auto' });
  });

  it.each([
    ['well-formed', { type: 'adaptive' }],
    ['with a display', { type: 'adaptive', display: 'summarized' }],
    ['a string', 'adaptive'],
    ['a list', [{ type: 'adaptive' }]],
  ])('anthropic_thinking (%s) leaves the thinking made from reasoning', async (_, anthropic_thinking) => {
    const sent = await sentToAnthropic({
      messages: [{ role: 'user', content: 'hi' }],
      reasoning: { max_tokens: 2048 },
      anthropic_thinking,
    });
    expect(sent.json.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(sent.json.max_tokens).toBe(4000);
  });

  it.each([
    ['well-formed', [INTERLEAVED]],
    ['a string', INTERLEAVED],
    ['an object', { x: 1 }],
  ])('anthropic_beta (%s) sends no beta', async (_, anthropic_beta) => {
    const sent = await sentToAnthropic({ messages: [{ role: 'user', content: 'hi' }], anthropic_beta });
    expect(sent.headers['anthropic-beta']).toBeUndefined();
  });

  it('all of them at once, streamed and under /api/v1, change nothing', async () => {
    const hidden = {
      anthropic_tools: [{ at: 0, tool: SERVER_TOOL }],
      anthropic_tool_choice: { type: 'tool', name: 'web_search' },
      anthropic_thinking: { type: 'adaptive' },
      anthropic_beta: [INTERLEAVED],
    };
    const plain = {
      messages: [{ role: 'user', content: 'hi' }],
      tools: [weather],
      reasoning: { max_tokens: 2048 },
    };
    const base = (await sentToAnthropic(plain)).json;
    expect((await sentToAnthropic({ ...plain, ...hidden }, '/api/v1/chat/completions')).json).toEqual(base);

    const before = up.requests.length;
    const s = await rawStream(c, { model: 't/claude', max_tokens: 4000, ...plain, ...hidden });
    expect(s.res.status).toBe(200);
    expect(s.events.at(-1)).toBe('[DONE]');
    expect(s.text).not.toContain('"error"');
    expect(up.requests.length).toBe(before + 1);
    const streamed = last('/v1/messages');
    expect(streamed.json).toEqual({ ...base, stream: true });
    expect(streamed.headers['anthropic-beta']).toBeUndefined();
  });
});

describe('hidden names on messages and tools of a chat body', () => {
  const turns = (assistant: Record<string, unknown>) => [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: 'Sunny.', ...assistant },
    { role: 'user', content: 'Thanks' },
  ];

  it.each([
    ['well-formed', [{ type: 'text', text: 'INJECTED' }]],
    ['a string', 'INJECTED'],
    ['an object', { type: 'text', text: 'INJECTED' }],
    ['a list of non-blocks', ['INJECTED', 7]],
  ])("an assistant message's anthropic_content (%s) is not the turn sent", async (_, anthropic_content) => {
    const sent = await sentToAnthropic({ messages: turns({ anthropic_content }) });
    expect(sent.json.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Sunny.' }] });
    expect(sent.body).not.toContain('INJECTED');
  });

  it.each([
    ['true', true],
    ['a string', 'yes'],
    ['a number', 1],
  ])("a tool message's is_error (%s) does not make its result an error", async (_, is_error) => {
    const sent = await sentToAnthropic({
      tools: [weather],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18C', is_error },
      ],
    });
    expect(sent.json.messages[2]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: '18C' }] }],
    });
  });

  it.each([
    ['well-formed', { defer_loading: true, type: 'web_search_20250305' }],
    ['a string', 'abc'],
    ['a list', ['defer_loading']],
  ])("a tool's anthropic_fields (%s) add nothing to it", async (_, anthropic_fields) => {
    const sent = await sentToAnthropic({
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ ...weather, anthropic_fields }],
    });
    expect(sent.json.tools).toEqual([
      { name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
    ]);
  });
});

describe('the decision for OpenAI-compatible upstreams: dropped too, not forwarded as unknown fields', () => {
  const body = {
    anthropic_tools: [{ at: 0, tool: SERVER_TOOL }],
    anthropic_thinking: { type: 'adaptive' },
    x_top: 1,
    tools: [{ ...weather, anthropic_fields: { defer_loading: true }, x_tool: 1 }],
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
        anthropic_content: 'INJECTED',
        x_note: 'kept',
      },
      { role: 'tool', tool_call_id: 'call_1', content: '18C', is_error: true },
    ],
  };

  it('a message’s or a tool’s hidden name is dropped; their other unknown fields still go as sent', async () => {
    const r = await chat({ ...body, model: 't/gpt' });
    expect(r.status).toBe(200);
    const sent = last('/v1/chat/completions');
    expect(sent.body).not.toContain('anthropic_');
    expect(sent.body).not.toContain('is_error');
    expect(sent.json.messages[1].x_note).toBe('kept');
    expect(sent.json.tools[0].x_tool).toBe(1);
  });

  it('a channel whose supportedParams names one does not get it from a body either', async () => {
    const r = await chat({ ...body, model: 't/gpt-listed' });
    expect(r.status).toBe(200);
    const sent = last('/v1/chat/completions');
    expect(sent.json.x_top).toBe(1);
    expect(sent.body).not.toContain('anthropic_');
  });
});

describe('the other ingresses', () => {
  it('/v1/responses builds its request anew: no body field or item field reaches a hidden one', async () => {
    const before = up.requests.length;
    const r = await c.gw.call('POST', '/v1/responses', {
      token: c.key,
      body: {
        model: 't/claude',
        max_output_tokens: 4000,
        reasoning: { effort: 'low' },
        anthropic_thinking: { type: 'adaptive' },
        anthropic_tools: [{ at: 0, tool: SERVER_TOOL }],
        anthropic_beta: [INTERLEAVED],
        tools: [{ type: 'function', name: 'get_weather', anthropic_fields: { defer_loading: true } }],
        input: [
          { role: 'user', content: 'Weather in Paris?' },
          { type: 'message', role: 'assistant', content: 'Sunny.', anthropic_content: 'INJECTED' },
          { role: 'user', content: 'Thanks', is_error: true },
        ],
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(up.requests.length).toBe(before + 1);
    const sent = last('/v1/messages');
    expect(sent.json.thinking).toMatchObject({ type: 'enabled' });
    expect(sent.json.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Sunny.' }] });
    expect(sent.json.tools.map((t: { name: string }) => t.name)).toEqual(['get_weather']);
    expect(sent.json.tools[0].defer_loading).toBeUndefined();
    expect(sent.body).not.toContain('INJECTED');
    expect(sent.body).not.toContain('is_error');
    expect(sent.headers['anthropic-beta']).toBeUndefined();
  });
});
