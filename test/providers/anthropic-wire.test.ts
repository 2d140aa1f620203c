/**
 * Anthropic wire details beyond the contract suite, against a loopback fake answering as the
 * Messages API does: error bodies the API really sends, and request fields its schema requires.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sampledTokens } from '../../src/gateway/chat/tokens.js';
import type { ChatRequest, ChatStreamEvent } from '../../src/gateway/chat/types.js';
import { UpstreamError } from '../../src/gateway/errors.js';
import { completeChat, openChatStream } from '../../src/gateway/upstream/call-chat.js';
import { UpstreamClient } from '../../src/gateway/upstream/upstream-client.js';
import { anthropicAdapter } from '../../src/providers/anthropic/anthropic-adapter.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { collect, deltaChoices } from '../helpers/stream-events.js';
import { fixture } from './contract-cases.js';

const client = new UpstreamClient({
  defaults: { connectTimeoutMs: 2000, firstByteTimeoutMs: 5000, idleTimeoutMs: 5000 },
});
let up: FakeUpstream;
beforeAll(async () => {
  up = await startFakeUpstream();
});
afterAll(async () => {
  await client.close();
  await up.close();
});
afterEach(() => {
  up.requests.length = 0;
});

const target = () => ({ baseUrl: up.url, apiKey: 'sk-ant-test', upstreamModel: 'claude-sonnet-4-5' });
const base: ChatRequest = { model: 'client-model', messages: [{ role: 'user', content: 'Hi' }] };
const serveChat = () =>
  up.on('POST /v1/messages', {
    body: fixture('anthropic', 'chat.json'),
    headers: { 'content-type': 'application/json' },
  });
const sent = () => up.requests[up.requests.length - 1].json;

describe('Anthropic errors', () => {
  it('"input length and `max_tokens` exceed context limit" is a context-length failure (a larger model may take it)', async () => {
    // The 400 Anthropic answers when the prompt fits but prompt + max_tokens does not.
    const body = {
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message:
          'input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, decrease input length or `max_tokens` and try again',
      },
      request_id: 'req_011CUB2XUHWkFnQzxcKBbjpF',
    };
    for (const stream of [false, true]) {
      up.on('POST /v1/messages', { status: 400, json: body });
      const call = stream
        ? openChatStream(anthropicAdapter, base, target(), { client })
        : completeChat(anthropicAdapter, base, target(), { client });
      const err = await call.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(UpstreamError);
      expect((err as UpstreamError).kind).toBe('context_length');
      expect((err as UpstreamError).upstreamStatus).toBe(400);
    }
  });
});

describe('Anthropic request schema', () => {
  it('a tool whose parameters lack `type` still gets input_schema.type "object" (required by the API)', async () => {
    serveChat();
    const req: ChatRequest = {
      ...base,
      tools: [
        { type: 'function', function: { name: 'now', parameters: {} } },
        {
          type: 'function',
          function: {
            name: 'lookup',
            parameters: { properties: { q: { type: 'string' } }, required: ['q'] },
          },
        },
        {
          type: 'function',
          function: { name: 'typed', parameters: { type: 'object', properties: { n: { type: 'integer' } } } },
        },
      ],
    };
    await completeChat(anthropicAdapter, req, target(), { client });
    const tools = sent().tools;
    expect(tools[0]).toEqual({ name: 'now', input_schema: { type: 'object' } });
    expect(tools[1].input_schema).toEqual({
      type: 'object',
      properties: { q: { type: 'string' } },
      required: ['q'],
    });
    expect(tools[2].input_schema).toEqual({ type: 'object', properties: { n: { type: 'integer' } } });
  });

  it('a data URL typed image/jpg is sent as image/jpeg (the only JPEG media_type Anthropic accepts)', async () => {
    serveChat();
    const req: ChatRequest = {
      ...base,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/jpg;base64,/9j/4AAQSkZJRg==' } },
            { type: 'image_url', image_url: { url: 'data:image/JPEG;base64,/9j/4AAQSkZJRg==' } },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
      ],
    };
    await completeChat(anthropicAdapter, req, target(), { client });
    const blocks = sent().messages[0].content;
    expect(blocks[1].source).toEqual({ type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQSkZJRg==' });
    expect(blocks[2].source.media_type).toBe('image/jpeg');
    expect(blocks[3].source.media_type).toBe('image/png');
  });

  it('tool call ids from other upstreams are rewritten to the pattern Anthropic requires, tool_use and tool_result alike', async () => {
    // Anthropic answers 400 when a tool_use.id or tool_result.tool_use_id has other characters.
    const pattern = /^[a-zA-Z0-9_-]+$/;
    up.on('POST /v1/messages', (r) => {
      for (const [i, m] of (r.json.messages as any[]).entries())
        for (const [j, b] of m.content.entries()) {
          const id = b.type === 'tool_use' ? b.id : b.type === 'tool_result' ? b.tool_use_id : undefined;
          if (id !== undefined && !pattern.test(id))
            return {
              status: 400,
              json: {
                type: 'error',
                error: {
                  type: 'invalid_request_error',
                  message: `messages.${i}.content.${j}.${b.type}.${b.type === 'tool_use' ? 'id' : 'tool_use_id'}: String should match pattern '^[a-zA-Z0-9_-]+$'`,
                },
              },
            };
        }
      return { body: fixture('anthropic', 'chat.json'), headers: { 'content-type': 'application/json' } };
    });
    const call = (id: string, city: string) => ({
      id,
      type: 'function' as const,
      function: { name: 'get_weather', arguments: JSON.stringify({ city }) },
    });
    const req: ChatRequest = {
      ...base,
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        // Ids as a Kimi model behind vLLM writes them, and one already valid.
        {
          role: 'assistant',
          content: null,
          tool_calls: [call('functions.get_weather:0', 'Paris'), call('functions.get_weather:1', 'Rome')],
        },
        { role: 'tool', tool_call_id: 'functions.get_weather:0', content: '18C' },
        { role: 'tool', tool_call_id: 'functions.get_weather:1', content: '24C' },
        { role: 'assistant', content: null, tool_calls: [call('toolu_01ABC-x', 'Oslo')] },
        { role: 'tool', tool_call_id: 'toolu_01ABC-x', content: '3C' },
      ],
    };
    const r = await completeChat(anthropicAdapter, req, target(), { client });
    expect(r.choices[0].message.content).toBeTruthy();
    const msgs = sent().messages;
    const uses = msgs[1].content.map((b: any) => b.id);
    const results = msgs[2].content.map((b: any) => b.tool_use_id);
    expect(results).toEqual(uses);
    expect(new Set(uses).size).toBe(2);
    expect(msgs[3].content[0].id).toBe('toolu_01ABC-x');
    expect(msgs[4].content[0].tool_use_id).toBe('toolu_01ABC-x');
  });

  it('a cache breakpoint on a part of a tool message goes on the tool_result (Anthropic refuses it inside)', async () => {
    // OpenRouter clients mark the latest tool result for caching on its text part; Anthropic
    // answers this 400 for a cache_control within tool_result.content.
    up.on('POST /v1/messages', (r) => {
      for (const [i, m] of (r.json.messages as any[]).entries())
        for (const [j, b] of m.content.entries())
          if (b.type === 'tool_result' && Array.isArray(b.content))
            for (const [k, inner] of b.content.entries())
              if (inner.cache_control !== undefined)
                return {
                  status: 400,
                  json: {
                    type: 'error',
                    error: {
                      type: 'invalid_request_error',
                      message: `messages.${i}.content.${j}.tool_result.content.${k}.cache_control: cache_control may not be specified within \`tool_result.content\`. Instead, place it directly on \`tool_result\``,
                    },
                  },
                };
      return { body: fixture('anthropic', 'chat.json'), headers: { 'content-type': 'application/json' } };
    });
    const cache = { type: 'ephemeral' as const };
    const part = { type: 'text' as const, text: '18C', cache_control: cache };
    const req: ChatRequest = {
      ...base,
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
      messages: [
        {
          role: 'user',
          content: [{ type: 'text', text: 'Weather in Paris and Rome?', cache_control: cache }],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'toolu_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
            {
              id: 'toolu_2',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Rome"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: [part] },
        { role: 'tool', tool_call_id: 'toolu_2', content: [{ type: 'text', text: '24C' }] },
      ],
    };
    const r = await completeChat(anthropicAdapter, req, target(), { client });
    expect(r.choices[0].message.content).toBeTruthy();
    const msgs = sent().messages;
    expect(msgs[0].content[0]).toEqual({
      type: 'text',
      text: 'Weather in Paris and Rome?',
      cache_control: cache,
    });
    expect(msgs[2].content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_1',
        content: [{ type: 'text', text: '18C' }],
        cache_control: cache,
      },
      { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: '24C' }] },
    ]);
    // The client's part keeps its breakpoint (a retry or a fallback sends the same request).
    expect(part.cache_control).toBe(cache);
  });
});

describe('Anthropic thinking in a tool loop', () => {
  // Anthropic's check: with thinking on, the last assistant turn holding tool_use starts with thinking.
  const serveThinkingCheck = () =>
    up.on('POST /v1/messages', (r) => {
      const msgs = r.json.messages as any[];
      const i = msgs.map((m) => m.role).lastIndexOf('assistant');
      const last = msgs[i];
      const first = last?.content[0]?.type;
      if (
        r.json.thinking?.type === 'enabled' &&
        (i === msgs.length - 1 || last?.content.some((b: any) => b.type === 'tool_use')) &&
        first !== 'thinking' &&
        first !== 'redacted_thinking'
      )
        return {
          status: 400,
          json: {
            type: 'error',
            error: {
              type: 'invalid_request_error',
              message: `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`,
            },
          },
        };
      return { body: fixture('anthropic', 'chat.json'), headers: { 'content-type': 'application/json' } };
    });
  const tools: ChatRequest['tools'] = [
    { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
  ];
  const call = {
    id: 'toolu_01',
    type: 'function' as const,
    function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
  };
  const loop = (reasoning_details?: any[]): ChatRequest['messages'] => [
    { role: 'user', content: 'Weather in Paris?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [call],
      ...(reasoning_details ? { reasoning_details } : {}),
    },
    { role: 'tool', tool_call_id: 'toolu_01', content: '18C' },
  ];

  it('a tool result sent back without the thinking blocks goes without thinking instead of failing', async () => {
    serveThinkingCheck();
    const req: ChatRequest = {
      ...base,
      tools,
      temperature: 0.3,
      max_tokens: 2000,
      reasoning: { effort: 'high' },
      messages: loop(),
    };
    const r = await completeChat(anthropicAdapter, req, target(), { client });
    expect(r.choices[0].message.content).toBeTruthy();
    expect(sent().thinking).toBeUndefined();
    expect(sent().temperature).toBe(0.3);
  });

  it('with the thinking blocks sent back, or outside a tool loop, thinking stays on', async () => {
    serveThinkingCheck();
    const details = [
      {
        type: 'reasoning.text',
        text: 'Look it up.',
        signature: 'EqQBCgIYAhIM',
        format: 'anthropic-claude-v1',
        index: 0,
      },
    ];
    const req: ChatRequest = { ...base, tools, reasoning: { effort: 'high' }, messages: loop(details) };
    await completeChat(anthropicAdapter, req, target(), { client });
    expect(sent().thinking).toMatchObject({ type: 'enabled' });
    expect(sent().messages[1].content[0]).toEqual({
      type: 'thinking',
      thinking: 'Look it up.',
      signature: 'EqQBCgIYAhIM',
    });

    const chat: ChatRequest = {
      ...base,
      reasoning: { effort: 'high' },
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello.' },
        { role: 'user', content: 'And 2+2?' },
      ],
    };
    await completeChat(anthropicAdapter, chat, target(), { client });
    expect(sent().thinking).toMatchObject({ type: 'enabled' });
  });

  it('an assistant prefill goes without thinking instead of failing', async () => {
    serveThinkingCheck();
    const req: ChatRequest = {
      ...base,
      reasoning: { effort: 'high' },
      messages: [
        { role: 'user', content: 'A colour as JSON.' },
        { role: 'assistant', content: '{"colour":' },
      ],
    };
    const r = await completeChat(anthropicAdapter, req, target(), { client });
    expect(r.choices[0].message.content).toBeTruthy();
    expect(sent().thinking).toBeUndefined();
    expect(sent().messages[1].content).toEqual([{ type: 'text', text: '{"colour":' }]);
  });
});

describe('Anthropic sampling parameters', () => {
  it('temperature and top_p together: top_p is dropped, which newer Claude models require', async () => {
    // claude-sonnet-4-5 and later answer this 400 when both are set.
    up.on('POST /v1/messages', (r) =>
      r.json.temperature !== undefined && r.json.top_p !== undefined
        ? {
            status: 400,
            json: {
              type: 'error',
              error: {
                type: 'invalid_request_error',
                message:
                  '`temperature` and `top_p` cannot both be specified for this model. Please use only one.',
              },
            },
          }
        : { body: fixture('anthropic', 'chat.json'), headers: { 'content-type': 'application/json' } },
    );
    const r = await completeChat(anthropicAdapter, { ...base, temperature: 0.7, top_p: 0.9 }, target(), {
      client,
    });
    expect(r.choices[0].message.content).toBeTruthy();
    expect(sent().temperature).toBe(0.7);
    expect(sent()).not.toHaveProperty('top_p');
    await completeChat(anthropicAdapter, { ...base, top_p: 0.9 }, target(), { client });
    expect(sent().top_p).toBe(0.9);
    // With thinking, temperature is not sent: a top_p of 0.95 or more stays.
    await completeChat(
      anthropicAdapter,
      { ...base, temperature: 0.7, top_p: 0.97, reasoning: { effort: 'low' } },
      target(),
      { client },
    );
    expect(sent()).not.toHaveProperty('temperature');
    expect(sent().top_p).toBe(0.97);
  });
});

describe('Anthropic text blocks', () => {
  it('whitespace-only text (a "\\n\\n" before tool calls, a blank system or user part) is left out instead of failing the request', async () => {
    // Anthropic answers 400 for an empty or whitespace-only text block.
    up.on('POST /v1/messages', (r) => {
      const blocks = [...(r.json.system ?? []), ...r.json.messages.flatMap((m: any) => m.content)];
      const bad = blocks.find((b: any) => b.type === 'text' && b.text.trim() === '');
      return bad
        ? {
            status: 400,
            json: {
              type: 'error',
              error: {
                type: 'invalid_request_error',
                message:
                  bad.text === ''
                    ? 'messages: text content blocks must be non-empty'
                    : 'messages: text content blocks must contain non-whitespace text',
              },
            },
          }
        : { body: fixture('anthropic', 'chat.json'), headers: { 'content-type': 'application/json' } };
    });
    const req: ChatRequest = {
      ...base,
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
      messages: [
        {
          role: 'system',
          content: [
            { type: 'text', text: 'Be brief.' },
            { type: 'text', text: ' ' },
          ],
        },
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: '\n\n',
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: '18C' },
        {
          role: 'user',
          content: [
            { type: 'text', text: '\t' },
            { type: 'text', text: 'Thanks!' },
          ],
        },
      ],
    };
    const r = await completeChat(anthropicAdapter, req, target(), { client });
    expect(r.choices[0].message.content).toBeTruthy();
    const body = sent();
    expect(body.system).toEqual([{ type: 'text', text: 'Be brief.' }]);
    expect(body.messages[1].content.map((b: any) => b.type)).toEqual(['tool_use']);
    expect(body.messages[2].content.map((b: any) => b.type)).toEqual(['tool_result', 'text']);
    expect(body.messages[2].content[1].text).toBe('Thanks!');
  });

  it('a final assistant turn (prefill) is sent without trailing whitespace; earlier turns are untouched', async () => {
    up.on('POST /v1/messages', (r) => {
      const last = r.json.messages.at(-1);
      const tail = last.content.at(-1);
      return last.role === 'assistant' && tail.type === 'text' && /\s$/.test(tail.text)
        ? {
            status: 400,
            json: {
              type: 'error',
              error: {
                type: 'invalid_request_error',
                message: 'messages: final assistant content cannot end with trailing whitespace',
              },
            },
          }
        : { body: fixture('anthropic', 'chat.json'), headers: { 'content-type': 'application/json' } };
    });
    const req: ChatRequest = {
      ...base,
      messages: [
        { role: 'user', content: 'Name a colour.' },
        { role: 'assistant', content: 'Blue. \n' },
        { role: 'user', content: 'As JSON.' },
        { role: 'assistant', content: '{"colour": ' },
      ],
    };
    const r = await completeChat(anthropicAdapter, req, target(), { client });
    expect(r.choices[0].message.content).toBeTruthy();
    expect(sent().messages[1].content[0].text).toBe('Blue. \n');
    expect(sent().messages[3].content).toEqual([{ type: 'text', text: '{"colour":' }]);
  });
});

describe('Anthropic system media', () => {
  it('images and documents in system/developer messages go to the start of the first user turn; their text stays in system', async () => {
    // `system` takes text blocks only; anything else is a 400 naming the block.
    up.on('POST /v1/messages', (r) => {
      const at = (r.json.system ?? []).findIndex((b: any) => b.type !== 'text');
      return at !== -1
        ? {
            status: 400,
            json: {
              type: 'error',
              error: { type: 'invalid_request_error', message: `system.${at}.type: Input should be 'text'` },
            },
          }
        : { body: fixture('anthropic', 'chat.json'), headers: { 'content-type': 'application/json' } };
    });
    const req: ChatRequest = {
      ...base,
      messages: [
        {
          role: 'system',
          content: [
            { type: 'text', text: 'Answer in the style of this chart.' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
        {
          role: 'developer',
          content: [
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/logo.png' } },
          ],
        },
        { role: 'user', content: 'Sales for Q3?' },
        { role: 'assistant', content: 'Up 4%.' },
        { role: 'user', content: 'And Q4?' },
      ],
    };
    const r = await completeChat(anthropicAdapter, req, target(), { client });
    expect(r.choices[0].message.content).toBeTruthy();
    const body = sent();
    expect(body.system).toEqual([{ type: 'text', text: 'Answer in the style of this chart.' }]);
    expect(body.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(body.messages[0].content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/logo.png' } },
      { type: 'text', text: 'Sales for Q3?' },
    ]);
    expect(body.messages[2].content).toEqual([{ type: 'text', text: 'And Q4?' }]);
  });

  it('with no user turn, the media make one; a system message of media alone sends no empty system', async () => {
    up.on('POST /v1/messages', (r) =>
      (r.json.system ?? []).some((b: any) => b.type !== 'text') || r.json.messages[0]?.role !== 'user'
        ? { status: 400, json: { type: 'error', error: { type: 'invalid_request_error', message: 'bad' } } }
        : { body: fixture('anthropic', 'chat.json'), headers: { 'content-type': 'application/json' } },
    );
    const req: ChatRequest = {
      ...base,
      messages: [
        {
          role: 'system',
          content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }],
        },
        { role: 'assistant', content: 'The chart shows' },
      ],
    };
    await completeChat(anthropicAdapter, req, target(), { client });
    const body = sent();
    expect(body.system).toBeUndefined();
    expect(body.messages[0]).toEqual({
      role: 'user',
      content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }],
    });
    expect(body.messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'The chart shows' }],
    });
  });
});

describe('Anthropic thinking within the model output limit', () => {
  // Anthropic's two checks on these fields, with the messages it answers.
  const serveLimitCheck = (model: string, limit: number) =>
    up.on('POST /v1/messages', (r) => {
      const max = r.json.max_tokens as number;
      const budget = r.json.thinking?.budget_tokens as number | undefined;
      const refuse = (message: string) => ({
        status: 400,
        json: { type: 'error', error: { type: 'invalid_request_error', message } },
      });
      if (max > limit)
        return refuse(
          `max_tokens: ${max} > ${limit}, which is the maximum allowed number of output tokens for ${model}`,
        );
      if (budget !== undefined && budget >= max)
        return refuse(
          '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size',
        );
      return { body: fixture('anthropic', 'chat.json'), headers: { 'content-type': 'application/json' } };
    });
  const limited = (maxOutputTokens: number) => ({
    ...target(),
    upstreamModel: 'claude-opus-4-1',
    maxOutputTokens,
  });

  it('a budget that would raise max_tokens past the limit is cut; the answer keeps the length asked for', async () => {
    serveLimitCheck('claude-opus-4-1', 32_000);
    for (const [req, max, budget] of [
      // budget 30000 + the 4096 default answer would be 34096
      [{ ...base, reasoning: { max_tokens: 30_000 } }, 32_000, 32_000 - 4096],
      // the client's own answer length stays: 60000 + 2000 -> 32000 with 30000 to think
      [{ ...base, max_tokens: 2000, reasoning: { max_tokens: 60_000 } }, 32_000, 30_000],
      // an answer length near the limit leaves the minimum budget
      [{ ...base, max_tokens: 31_500, reasoning: { max_tokens: 40_000 } }, 32_000, 1024],
    ] as const) {
      const r = await completeChat(anthropicAdapter, req, limited(32_000), { client });
      expect(r.choices[0].message.content).toBeTruthy();
      expect(sent().max_tokens).toBe(max);
      expect(sent().thinking).toEqual({ type: 'enabled', budget_tokens: budget });
    }
  });

  it('a max_tokens above the limit (Anthropic refuses it) is sent as the limit, when the registry knows it', async () => {
    serveLimitCheck('claude-opus-4-1', 32_000);
    for (const [req, extra, max] of [
      [{ ...base, max_tokens: 64_000 }, {}, 32_000],
      [{ ...base, max_completion_tokens: 100_000, max_tokens: 10 }, {}, 32_000],
      // an operator's default above the model's limit alike
      [base, { defaultMaxTokens: 50_000 }, 32_000],
      [{ ...base, max_tokens: 32_000 }, {}, 32_000],
      [{ ...base, max_tokens: 1000 }, {}, 1000],
    ] as const) {
      const r = await completeChat(anthropicAdapter, req, { ...limited(32_000), extra }, { client });
      expect(r.choices[0].message.content).toBeTruthy();
      expect(sent().max_tokens, JSON.stringify(req)).toBe(max);
      expect(sent().thinking).toBeUndefined();
    }
    // With thinking, the budget comes from the length that is sent: high effort is 0.8 of it.
    await completeChat(
      anthropicAdapter,
      { ...base, max_tokens: 64_000, reasoning: { effort: 'high' } },
      limited(32_000),
      { client },
    );
    expect(sent().max_tokens).toBe(32_000);
    expect(sent().thinking).toEqual({ type: 'enabled', budget_tokens: 25_600 });
    // A limit the registry does not know: sent as asked (Anthropic decides).
    serveChat();
    await completeChat(anthropicAdapter, { ...base, max_tokens: 64_000 }, target(), { client });
    expect(sent().max_tokens).toBe(64_000);
  });

  it('within the limit nothing changes; a limit with no room for the minimum budget sends no thinking', async () => {
    serveLimitCheck('claude-opus-4-1', 64_000);
    await completeChat(anthropicAdapter, { ...base, reasoning: { max_tokens: 30_000 } }, limited(64_000), {
      client,
    });
    expect(sent().max_tokens).toBe(34_096);
    expect(sent().thinking.budget_tokens).toBe(30_000);

    serveLimitCheck('claude-opus-4-1', 1024);
    const r = await completeChat(
      anthropicAdapter,
      { ...base, max_tokens: 500, temperature: 0.2, reasoning: { effort: 'high' } },
      limited(1024),
      { client },
    );
    expect(r.choices[0].message.content).toBeTruthy();
    expect(sent().max_tokens).toBe(500);
    expect(sent().thinking).toBeUndefined();
    expect(sent().temperature).toBe(0.2);
  });
});

/**
 * A fake Messages API with structured outputs as Anthropic's docs describe them: only Claude 4.5
 * and later take `output_config.format`; every object needs `additionalProperties: false`; numeric
 * and length constraints, recursive schemas and a format beside a prefill are a 400. The answer is
 * a text block holding the JSON.
 */
describe('Anthropic structured outputs (response_format json_schema)', () => {
  const FORMAT_MODELS = /^claude-(opus-4-[5-9]|sonnet-4-[5-9]|haiku-4-[5-9])/;
  const ANSWER = '{"city":"Paris","days":[{"n":1}]}';
  const refuse = (message: string) => ({
    status: 400,
    json: { type: 'error', error: { type: 'invalid_request_error', message } },
  });
  /** What Anthropic would refuse in a schema, or undefined. */
  const schemaFault = (node: any, path: string, seen = new Set<string>()): string | undefined => {
    if (node === null || typeof node !== 'object') return undefined;
    if (node.type === 'object' && node.additionalProperties !== false)
      return `${path}: For 'object' type, 'additionalProperties' must be explicitly set to false`;
    for (const k of ['minimum', 'maximum', 'minLength', 'maxLength', 'maxItems', 'oneOf', '$schema'])
      if (k in node) return `${path}: property '${k}' is not supported`;
    if (typeof node.$ref === 'string') {
      if (seen.has(node.$ref)) return 'Too many recursive definitions in schema';
      seen = new Set([...seen, node.$ref]);
    }
    for (const [k, v] of Object.entries(node)) {
      const fault = schemaFault(v, `${path}.${k}`, seen);
      if (fault) return fault;
    }
    return undefined;
  };
  const structured = (stream: boolean) =>
    up.on('POST /v1/messages', (r) => {
      const format = r.json.output_config?.format;
      if (format) {
        if (!FORMAT_MODELS.test(r.json.model))
          return refuse(`'${r.json.model}' does not support output_config.format.`);
        if (r.json.messages.at(-1).role === 'assistant')
          return refuse('Prefilling assistant messages is not supported when using structured outputs.');
        const fault = schemaFault(format.schema, 'output_config.format.schema');
        if (fault) return refuse(fault);
      }
      if (!stream)
        return {
          json: {
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            model: r.json.model,
            content: [{ type: 'text', text: format ? ANSWER : 'Paris, for a day or two.' }],
            stop_reason: 'end_turn',
            stop_sequence: null,
            usage: { input_tokens: 30, output_tokens: 12 },
          },
        };
      const ev = (type: string, data: object) =>
        `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
      return {
        sse: [
          ev('message_start', {
            message: {
              id: 'msg_2',
              type: 'message',
              role: 'assistant',
              content: [],
              model: r.json.model,
              usage: { input_tokens: 30, output_tokens: 1 },
            },
          }),
          ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
          ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: ANSWER.slice(0, 12) } }),
          ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: ANSWER.slice(12) } }),
          ev('content_block_stop', { index: 0 }),
          ev('message_delta', {
            delta: { stop_reason: 'end_turn', stop_sequence: null },
            usage: { output_tokens: 12 },
          }),
          ev('message_stop', {}),
        ],
      };
    });
  /** A schema as OpenAI clients write it (Pydantic, zod): no additionalProperties on nested objects, constraints. */
  const trip = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: {
      city: { type: 'string', minLength: 1, maxLength: 80, description: 'City name' },
      days: { type: 'array', items: { $ref: '#/$defs/Day' }, minItems: 1, maxItems: 14 },
      budget: { oneOf: [{ type: 'number', minimum: 0 }, { type: 'null' }] },
      hotel: { allOf: [{ $ref: '#/$defs/Hotel' }], description: 'Where to stay' },
    },
    required: ['city', 'days'],
    additionalProperties: false,
    $defs: {
      Day: { type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] },
      Hotel: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    },
  };
  const adapted = {
    type: 'object',
    properties: {
      city: { type: 'string', description: 'City name (minLength: 1, maxLength: 80)' },
      days: { type: 'array', items: { $ref: '#/$defs/Day' }, minItems: 1, description: '(maxItems: 14)' },
      budget: { anyOf: [{ type: 'number', description: '(minimum: 0)' }, { type: 'null' }] },
      hotel: {
        allOf: [
          {
            type: 'object',
            properties: { name: { type: 'string' } },
            required: ['name'],
            additionalProperties: false,
          },
        ],
        description: 'Where to stay',
      },
    },
    required: ['city', 'days'],
    additionalProperties: false,
    $defs: {
      Day: {
        type: 'object',
        properties: { n: { type: 'integer', description: '(minimum: 1)' } },
        required: ['n'],
        additionalProperties: false,
      },
      Hotel: {
        type: 'object',
        properties: { name: { type: 'string' } },
        required: ['name'],
        additionalProperties: false,
      },
    },
    description: 'A trip plan',
  };
  const asking = (schema: Record<string, unknown>, strict = true): ChatRequest => ({
    ...base,
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'trip', description: 'A trip plan', schema, strict },
    },
  });
  const on = (upstreamModel: string, extra?: Record<string, unknown>) => ({
    ...target(),
    upstreamModel,
    extra,
  });

  it('Claude 4.5 and later get output_config.format with the schema adapted; older models, which refuse it, get none', async () => {
    structured(false);
    for (const model of [
      'claude-sonnet-4-5',
      'claude-opus-4-5-20251101',
      'claude-haiku-4-5-20251001',
      'claude-sonnet-4-6',
      'claude-opus-4-7',
    ]) {
      const res = await completeChat(anthropicAdapter, asking(trip), on(model), { client });
      expect(sent().output_config, model).toEqual({ format: { type: 'json_schema', schema: adapted } });
      expect(JSON.parse(res.choices[0].message.content as string)).toEqual(JSON.parse(ANSWER));
    }
    for (const model of [
      'claude-opus-4-1-20250805',
      'claude-opus-4-20250514',
      'claude-sonnet-4-20250514',
      'claude-3-7-sonnet-20250219',
      'claude-3-5-haiku-20241022',
    ]) {
      await completeChat(anthropicAdapter, asking(trip), on(model), { client });
      expect(sent(), model).not.toHaveProperty('output_config');
    }
  });

  it('the channel setting structuredOutputs overrides the model-name rule', async () => {
    structured(false);
    await completeChat(
      anthropicAdapter,
      asking(trip),
      on('claude-sonnet-4-5', { structuredOutputs: false }),
      {
        client,
      },
    );
    expect(sent()).not.toHaveProperty('output_config');
    // A name the rule does not know (an alias behind a proxy) that takes it.
    await completeChat(
      anthropicAdapter,
      asking(trip),
      on('claude-haiku-4-5-latest-eu', { structuredOutputs: true }),
      {
        client,
      },
    );
    expect(sent().output_config.format.schema).toEqual(adapted);
    const faulty = on('claude-opus-4-1-20250805', { structuredOutputs: true });
    await expect(completeChat(anthropicAdapter, asking(trip), faulty, { client })).rejects.toBeInstanceOf(
      UpstreamError,
    );
  });

  it('streamed: the format is sent and the JSON arrives as text deltas', async () => {
    structured(true);
    const events: ChatStreamEvent[] = [];
    for await (const ev of await openChatStream(anthropicAdapter, asking(trip), on('claude-sonnet-4-5'), {
      client,
    }))
      events.push(ev);
    expect(sent().output_config.format.schema).toEqual(adapted);
    const text = events
      .flatMap((e) => (e.type === 'delta' ? e.choices.map((c) => c.delta.content ?? '') : []))
      .join('');
    expect(JSON.parse(text)).toEqual(JSON.parse(ANSWER));
  });

  it('what Anthropic cannot take goes without the format, served as before instead of refused', async () => {
    structured(false);
    const cannot: [string, ChatRequest][] = [
      ['json_object (no JSON mode)', { ...base, response_format: { type: 'json_object' } }],
      ['additionalProperties true', asking({ ...trip, additionalProperties: true })],
      [
        'a typed map',
        asking({
          type: 'object',
          properties: { tags: { type: 'object', additionalProperties: { type: 'string' } } },
        }),
      ],
      ['a free-form object', asking({ type: 'object', properties: { meta: { type: 'object' } } })],
      [
        'a recursive schema',
        asking({
          type: 'object',
          properties: { root: { $ref: '#/$defs/Node' } },
          $defs: {
            Node: {
              type: 'object',
              properties: { kids: { type: 'array', items: { $ref: '#/$defs/Node' } } },
            },
          },
        }),
      ],
      [
        'an external $ref',
        asking({ type: 'object', properties: { a: { $ref: 'https://example.com/a.json' } } }),
      ],
      [
        'a prefill',
        {
          ...asking(trip),
          messages: [...base.messages, { role: 'assistant', content: 'Here is the plan:' }],
        },
      ],
    ];
    for (const [what, req] of cannot) {
      const res = await completeChat(anthropicAdapter, req, on('claude-sonnet-4-5'), { client });
      expect(sent(), what).not.toHaveProperty('output_config');
      expect(res.choices[0].message.content, what).toBe('Paris, for a day or two.');
    }
    // The same request with a schema it can take does carry the format.
    await completeChat(anthropicAdapter, asking(trip, false), on('claude-sonnet-4-5'), { client });
    expect(sent().output_config.format.schema).toEqual(adapted);
  });
});

describe('Anthropic request fields from OpenAI and OpenRouter clients', () => {
  it('safety_identifier becomes metadata.user_id, and wins over user when both are set', async () => {
    const cases: [Partial<ChatRequest>, string | undefined][] = [
      [{ safety_identifier: 'sid-1' }, 'sid-1'],
      [{ user: 'u-1' }, 'u-1'],
      [{ user: 'u-1', safety_identifier: 'sid-1' }, 'sid-1'],
      [{ user: 'u-1', safety_identifier: '' }, 'u-1'],
      [{}, undefined],
    ];
    for (const [fields, userId] of cases) {
      serveChat();
      await completeChat(anthropicAdapter, { ...base, ...fields }, target(), { client });
      const body = sent();
      if (userId === undefined) expect(body).not.toHaveProperty('metadata');
      else expect(body.metadata, JSON.stringify(fields)).toEqual({ user_id: userId });
      expect(body).not.toHaveProperty('safety_identifier');
      expect(body).not.toHaveProperty('user');
    }
  });

  it('top-level cache_control (automatic prompt caching) is sent to Anthropic as it is', async () => {
    serveChat();
    const req: ChatRequest = { ...base, cache_control: { type: 'ephemeral', ttl: '1h' } };
    await completeChat(anthropicAdapter, req, target(), { client });
    expect(sent()).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      cache_control: { type: 'ephemeral', ttl: '1h' },
    });
  });

  it('a file part holding an image is an image block (Anthropic refuses an image document); a PDF stays a document', async () => {
    serveChat();
    const req: ChatRequest = {
      ...base,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'file', file: { filename: 'a.png', file_data: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'file', file: { filename: 'b.jpg', file_data: 'data:image/jpg;base64,/9j/4AAQ' } },
            { type: 'file', file: { filename: 'c.pdf', file_data: 'data:application/pdf;base64,JVBERi0x' } },
            { type: 'file', file: { file_data: 'https://example.test/d.webp?x=1' } },
            { type: 'file', file: { file_data: 'https://example.test/e.pdf' } },
            { type: 'file', file: { file_data: 'https://example.test/report' } },
            { type: 'text', text: 'Compare them.' },
          ],
        },
      ],
    };
    await completeChat(anthropicAdapter, req, target(), { client });
    expect(sent().messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' } },
          { type: 'image', source: { type: 'url', url: 'https://example.test/d.webp?x=1' } },
          { type: 'document', source: { type: 'url', url: 'https://example.test/e.pdf' } },
          { type: 'document', source: { type: 'url', url: 'https://example.test/report' } },
          { type: 'text', text: 'Compare them.' },
        ],
      },
    ]);
  });
});

const serveSse = (sse: string) => up.on('POST /v1/messages', { sse: [sse] });
const serveJson = (body: string) =>
  up.on('POST /v1/messages', { body, headers: { 'content-type': 'application/json' } });

describe('Anthropic stop reasons', () => {
  it('refusal is finish_reason content_filter, with native_finish_reason "refusal"', async () => {
    serveJson(fixture('anthropic', 'refusal.json'));
    const r = await completeChat(anthropicAdapter, base, target(), { client });
    expect(r.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: "I can't help with that." },
        finish_reason: 'content_filter',
        native_finish_reason: 'refusal',
        logprobs: null,
      },
    ]);
    expect(r.usage).toMatchObject({ prompt_tokens: 18, completion_tokens: 7, total_tokens: 25 });
  });

  it('streamed: refusal is content_filter on the one finishing delta, then the usage', async () => {
    serveSse(fixture('anthropic', 'refusal-stream.sse'));
    const events = await collect(await openChatStream(anthropicAdapter, base, target(), { client }));
    expect(events.some((e) => e.type === 'error')).toBe(false);
    const choices = deltaChoices(events);
    expect(choices.map((c) => c.delta.content ?? '').join('')).toBe("I can't help with that.");
    expect(
      choices.filter((c) => c.finish_reason !== null).map((c) => [c.finish_reason, c.native_finish_reason]),
    ).toEqual([['content_filter', 'refusal']]);
    expect(events.at(-2)).toEqual({
      type: 'delta',
      choices: [{ index: 0, delta: {}, finish_reason: 'content_filter', native_finish_reason: 'refusal' }],
    });
    expect(events.at(-1)).toMatchObject({
      type: 'usage',
      usage: { prompt_tokens: 18, completion_tokens: 7, total_tokens: 25 },
    });
  });

  it('pause_turn (a server tool turn Anthropic paused) is stop, with native_finish_reason "pause_turn", streamed and not', async () => {
    const paused = JSON.parse(fixture('anthropic', 'web-search.json'));
    paused.stop_reason = 'pause_turn';
    serveJson(JSON.stringify(paused));
    const r = await completeChat(anthropicAdapter, base, target(), { client });
    expect(r.choices[0].finish_reason).toBe('stop');
    expect(r.choices[0].native_finish_reason).toBe('pause_turn');

    const sse = fixture('anthropic', 'web-search-stream.sse');
    expect(sse).toContain('"stop_reason":"end_turn"');
    serveSse(sse.replace('"stop_reason":"end_turn"', '"stop_reason":"pause_turn"'));
    const events = await collect(await openChatStream(anthropicAdapter, base, target(), { client }));
    expect(events.some((e) => e.type === 'error')).toBe(false);
    expect(
      deltaChoices(events)
        .filter((c) => c.finish_reason !== null)
        .map((c) => [c.finish_reason, c.native_finish_reason]),
    ).toEqual([['stop', 'pause_turn']]);
  });
});

describe('Anthropic streamed thinking blocks', () => {
  const F = 'anthropic-claude-v1';
  const details = (events: ChatStreamEvent[]) =>
    deltaChoices(events).flatMap((c) => c.delta.reasoning_details ?? []);
  const reasoning = (events: ChatStreamEvent[]) =>
    deltaChoices(events)
      .map((c) => c.delta.reasoning ?? '')
      .join('');
  const stream = async (file: string, req: ChatRequest = base) => {
    serveSse(fixture('anthropic', file));
    const events = await collect(await openChatStream(anthropicAdapter, req, target(), { client }));
    expect(events.some((e) => e.type === 'error')).toBe(false);
    return events;
  };
  /** The answer sent back as the assistant turn of the next request: the blocks Anthropic gets. */
  const sentBack = async (assistant: ChatRequest['messages'][number], tools?: ChatRequest['tools']) => {
    serveChat();
    await completeChat(
      anthropicAdapter,
      {
        ...base,
        tools,
        reasoning: { effort: 'high' },
        messages: [...base.messages, assistant, { role: 'user', content: 'Go on.' }],
      },
      target(),
      { client },
    );
    return sent().messages[1].content;
  };

  it('a redacted_thinking block is a reasoning.encrypted detail at its block index, with no reasoning text', async () => {
    const events = await stream('redacted-thinking-stream.sse');
    const data = JSON.parse(
      fixture('anthropic', 'redacted-thinking-stream.sse')
        .split('\n')
        .find((l) => l.includes('"redacted_thinking"'))!
        .slice(6),
    ).content_block.data;
    expect(details(events)).toEqual([
      { type: 'reasoning.text', text: "Euclid's proof: assume finitely many primes.", format: F, index: 0 },
      {
        type: 'reasoning.text',
        text: '',
        signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds',
        format: F,
        index: 0,
      },
      { type: 'reasoning.encrypted', data, format: F, index: 1 },
    ]);
    // The redacted block adds nothing to the readable reasoning.
    expect(reasoning(events)).toBe("Euclid's proof: assume finitely many primes.");
    const redacted = deltaChoices(events).find((c) =>
      c.delta.reasoning_details?.some((d) => d.type === 'reasoning.encrypted'),
    )!;
    expect(redacted.delta).toEqual({
      reasoning_details: [{ type: 'reasoning.encrypted', data, format: F, index: 1 }],
    });
    expect(
      deltaChoices(events)
        .map((c) => c.delta.content ?? '')
        .join(''),
    ).toBe('Yes, there are infinitely many primes.');
    // The redacted data is opaque, and its thinking was output all the same: the reasoning is what
    // the output count leaves beside the visible answer (more than the readable text's 11).
    const visible = sampledTokens(['Yes, there are infinitely many primes.']);
    expect(events.at(-1)).toEqual({
      type: 'usage',
      usage: {
        prompt_tokens: 60,
        completion_tokens: 240,
        total_tokens: 300,
        prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 240 - visible },
      },
    });

    // Sent back, both blocks go as they came, in order, ahead of the text.
    const blocks = await sentBack({
      role: 'assistant',
      content: 'Yes, there are infinitely many primes.',
      reasoning_details: details(events),
    });
    expect(blocks).toEqual([
      {
        type: 'thinking',
        thinking: "Euclid's proof: assume finitely many primes.",
        signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds',
      },
      { type: 'redacted_thinking', data },
      { type: 'text', text: 'Yes, there are infinitely many primes.' },
    ]);
  });

  it('not streamed, redacted thinking counts as reasoning: the output beside the visible answer', async () => {
    serveJson(fixture('anthropic', 'reasoning.json'));
    const r = await completeChat(anthropicAdapter, base, target(), { client });
    const visible = sampledTokens(['Yes, there are infinitely many prime numbers such that...']);
    expect(r.usage?.completion_tokens).toBe(900);
    expect(r.usage?.completion_tokens_details).toEqual({ reasoning_tokens: 900 - visible });
  });

  it('a thinking block carrying only a signature (display "omitted") keeps its signature; no reasoning text', async () => {
    const events = await stream('omitted-thinking-stream.sse');
    const sig = 'EuYBCkQYAiJAgCs1le6/Pol5Z0y4RJXjBR9Vl2ltXWmHkpPHaS1l3cf2';
    expect(details(events)).toEqual([
      { type: 'reasoning.text', text: '', signature: sig, format: F, index: 0 },
    ]);
    expect(deltaChoices(events).some((c) => 'reasoning' in c.delta)).toBe(false);
    // No thinking text, but the thinking was output (and billed): the reasoning is what the output
    // count leaves beside the visible answer, as for redacted thinking.
    const visible = sampledTokens(['The greatest common divisor of 1071 and 462 is **21**.']);
    expect(events.at(-1)).toEqual({
      type: 'usage',
      usage: {
        prompt_tokens: 48,
        completion_tokens: 142,
        total_tokens: 190,
        prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 142 - visible },
      },
    });
    // Sent back, it is a thinking block with empty text and its signature, not dropped as empty.
    const blocks = await sentBack({
      role: 'assistant',
      content: 'The greatest common divisor of 1071 and 462 is **21**.',
      reasoning_details: details(events),
    });
    expect(blocks).toEqual([
      { type: 'thinking', thinking: '', signature: sig },
      { type: 'text', text: 'The greatest common divisor of 1071 and 462 is **21**.' },
    ]);
  });

  it('interleaved thinking and tool_use: details keep the block indexes, tool calls count 0, 1 on their own', async () => {
    const tools: ChatRequest['tools'] = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
      { type: 'function', function: { name: 'get_time', parameters: { type: 'object' } } },
    ];
    const events = await stream('interleaved-thinking-stream.sse', { ...base, tools });
    expect(details(events)).toEqual([
      { type: 'reasoning.text', text: 'I need the weather in Paris first.', format: F, index: 0 },
      { type: 'reasoning.text', text: '', signature: 'EqQBCgIYAhIMsigA', format: F, index: 0 },
      { type: 'reasoning.text', text: 'And the local time there.', format: F, index: 2 },
      { type: 'reasoning.text', text: '', signature: 'EqQBCgIYAhIMsigB', format: F, index: 2 },
    ]);
    expect(reasoning(events)).toBe('I need the weather in Paris first.And the local time there.');
    expect(deltaChoices(events).flatMap((c) => c.delta.tool_calls ?? [])).toEqual([
      {
        index: 0,
        id: 'toolu_01A09q90qw90lq917835lq9',
        type: 'function',
        function: { name: 'get_weather', arguments: '' },
      },
      { index: 0, function: { arguments: '{"location": "Par' } },
      { index: 0, function: { arguments: 'is"}' } },
      {
        index: 1,
        id: 'toolu_01B8mK2pQx7vN4rT6sW9yZ3c',
        type: 'function',
        function: { name: 'get_time', arguments: '' },
      },
      // No argument fragment but "": `{}` at its content_block_stop.
      { index: 1, function: { arguments: '{}' } },
    ]);
    expect(
      deltaChoices(events)
        .filter((c) => c.finish_reason !== null)
        .map((c) => [c.finish_reason, c.native_finish_reason]),
    ).toEqual([['tool_calls', 'tool_use']]);
    // Reasoning tokens are counted locally from both thinking texts (Anthropic reports none).
    expect(events.at(-1)).toEqual({
      type: 'usage',
      usage: {
        prompt_tokens: 412,
        completion_tokens: 210,
        total_tokens: 622,
        prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 14 },
      },
    });
    // Sent back, each thinking block goes where the answer had it, before the tool_use it preceded:
    // Anthropic wants the turn echoed as received.
    const calls = [
      {
        id: 'toolu_01A09q90qw90lq917835lq9',
        type: 'function' as const,
        function: { name: 'get_weather', arguments: '{"location": "Paris"}' },
      },
      {
        id: 'toolu_01B8mK2pQx7vN4rT6sW9yZ3c',
        type: 'function' as const,
        function: { name: 'get_time', arguments: '{}' },
      },
    ];
    const blocks = await sentBack(
      { role: 'assistant', content: null, reasoning_details: details(events), tool_calls: calls },
      tools,
    );
    expect(blocks).toEqual([
      { type: 'thinking', thinking: 'I need the weather in Paris first.', signature: 'EqQBCgIYAhIMsigA' },
      {
        type: 'tool_use',
        id: 'toolu_01A09q90qw90lq917835lq9',
        name: 'get_weather',
        input: { location: 'Paris' },
      },
      { type: 'thinking', thinking: 'And the local time there.', signature: 'EqQBCgIYAhIMsigB' },
      { type: 'tool_use', id: 'toolu_01B8mK2pQx7vN4rT6sW9yZ3c', name: 'get_time', input: {} },
    ]);
  });
});
