import { describe, expect, it } from 'vitest';
import type { ChatMessage, ChatRequest } from '../../gateway/chat/types.js';
import { buildOpenAiRequest } from './openai-request.js';
import { OpenAiStreamDecoder } from './openai-response.js';
import { openAiParamsFor } from './target-facts.js';

const req: ChatRequest = {
  messages: [
    { role: 'developer', content: 'rules' },
    {
      role: 'assistant',
      content: 'a',
      reasoning: 'r',
      reasoning_details: [{ type: 'reasoning.text', text: 'r' }],
    },
    { role: 'user', content: 'q' },
  ],
  max_tokens: 50,
  temperature: 0.3,
  top_k: 5,
  models: ['m2'],
  provider: { sort: 'price' },
  transforms: ['middle-out'],
  usage: { include: true },
  stream: true,
};
const body = (
  r: ChatRequest,
  baseUrl: string,
  model: string,
  extra?: Record<string, unknown>,
  stream = false,
) =>
  JSON.parse(buildOpenAiRequest(r, { baseUrl, apiKey: 'k', upstreamModel: model, extra }, { stream }).body!);

describe('OpenAI-compatible request', () => {
  it('self-hosted: keeps extension params, max_tokens, developer -> system, no reasoning history', () => {
    const b = body(req, 'http://127.0.0.1:8000/v1', 'qwen3');
    expect(b).toEqual({
      model: 'qwen3',
      messages: [
        { role: 'system', content: 'rules' },
        { role: 'assistant', content: 'a' },
        { role: 'user', content: 'q' },
      ],
      max_tokens: 50,
      temperature: 0.3,
      top_k: 5,
    });
    // The client's objects are not mutated.
    expect(req.messages[0].role).toBe('developer');
  });

  it('api.openai.com: drops top_k, uses max_completion_tokens, keeps developer', () => {
    const b = body(req, 'https://api.openai.com/v1', 'gpt-4o');
    expect(b).not.toHaveProperty('top_k');
    expect(b.max_completion_tokens).toBe(50);
    expect(b).not.toHaveProperty('max_tokens');
    expect(b.messages[0].role).toBe('developer');
  });

  it('reasoning models: effort from a budget, sampling params dropped; OpenRouter upstreams get the object', () => {
    const r: ChatRequest = { ...req, reasoning: { max_tokens: 40 } };
    const b = body(r, 'https://api.openai.com/v1', 'o4-mini');
    expect(b.reasoning_effort).toBe('high');
    expect(b).not.toHaveProperty('temperature');
    expect(body(r, 'https://openrouter.ai/api/v1', 'x', { reasoningObject: true }).reasoning).toEqual({
      max_tokens: 40,
    });
    // A non-reasoning OpenAI model would reject reasoning_effort.
    expect(body(r, 'https://api.openai.com/v1', 'gpt-4o')).not.toHaveProperty('reasoning_effort');
  });

  it('api.openai.com: no cache_control on messages or parts (it answers 400 "Unknown parameter"); other hosts keep them', () => {
    const cache = { type: 'ephemeral' as const };
    const hidden = { type: 'text' as const, text: 'hidden' };
    // As the Anthropic ingress sets its own: not serialized anyway.
    Object.defineProperty(hidden, 'cache_control', { value: cache, enumerable: false });
    const r: ChatRequest = {
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'rules', cache_control: cache }] },
        { role: 'user', content: 'q', cache_control: cache },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b', cache_control: { ...cache, ttl: '1h' } },
          ],
        },
        { role: 'user', content: [hidden] },
      ],
    };
    const official = body(r, 'https://api.openai.com/v1', 'gpt-4.1');
    expect(official.messages).toEqual([
      { role: 'system', content: [{ type: 'text', text: 'rules' }] },
      { role: 'user', content: 'q' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'hidden' }] },
    ]);
    // The client's objects are not changed (a fallback to Anthropic still has the breakpoints).
    expect((r.messages[0].content as { cache_control?: unknown }[])[0].cache_control).toBe(cache);
    expect(r.messages[1].cache_control).toBe(cache);
    // Nothing of them is left in the body sent.
    const target = { baseUrl: 'https://api.openai.com/v1', apiKey: 'k', upstreamModel: 'm' };
    expect(buildOpenAiRequest(r, target, { stream: false }).body).not.toContain('cache_control');
    for (const host of ['https://openrouter.ai/api/v1', 'http://127.0.0.1:8000/v1'])
      expect(
        body(r, host, 'm', { reasoningObject: host.includes('openrouter') }).messages.slice(0, 3),
      ).toEqual(r.messages.slice(0, 3));
  });

  it('a top-level cache_control (automatic caching) goes only to an upstream that speaks OpenRouter', () => {
    const cache = { type: 'ephemeral', ttl: '1h' };
    const r = { messages: [{ role: 'user', content: 'q' }], cache_control: cache } as ChatRequest;
    expect(
      body(r, 'https://openrouter.ai/api/v1', 'anthropic/claude-sonnet-4.5', { reasoningObject: true })
        .cache_control,
    ).toEqual(cache);
    expect(body(r, 'https://api.openai.com/v1', 'gpt-5')).not.toHaveProperty('cache_control');
    expect(body(r, 'http://127.0.0.1:8000/v1', 'qwen3')).not.toHaveProperty('cache_control');
  });

  it('api.openai.com: verbosity only for gpt-5 and later (others answer 400 to any but the default)', () => {
    const r: ChatRequest = { messages: [{ role: 'user', content: 'q' }], verbosity: 'low' };
    for (const m of ['gpt-4.1', 'gpt-4o', 'o3', 'o4-mini', 'gpt-5-chat-latest'])
      expect(body(r, 'https://api.openai.com/v1', m), m).not.toHaveProperty('verbosity');
    for (const m of ['gpt-5', 'gpt-5-mini', 'gpt-5-pro', 'gpt-5.1-chat-latest', 'gpt-5.5', 'openai/gpt-5'])
      expect(body(r, 'https://api.openai.com/v1', m).verbosity, m).toBe('low');
    // Other hosts decide for themselves (OpenRouter routes it; self-hosted servers ignore it).
    expect(body(r, 'http://127.0.0.1:8000/v1', 'gpt-4o').verbosity).toBe('low');
    expect(
      body(r, 'https://openrouter.ai/api/v1', 'openai/gpt-4o', { reasoningObject: true }).verbosity,
    ).toBe('low');
  });

  it('leaves out an assistant turn with nothing in it (content null, no tool calls), which OpenAI-compatible servers refuse', () => {
    const r: ChatRequest = {
      messages: [
        { role: 'user', content: 'search the web' },
        // What is left of a turn of Anthropic server tool blocks, on a fallback from Claude.
        { role: 'assistant', content: null },
        { role: 'user', content: 'and then?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c', content: 'ok' },
        { role: 'assistant', content: '' },
      ],
    };
    for (const base of ['https://api.openai.com/v1', 'http://127.0.0.1:8000/v1']) {
      const sent = body(r, base, 'gpt-4o').messages as ChatMessage[];
      expect(
        sent.map((m) => m.role),
        base,
      ).toEqual(['user', 'user', 'assistant', 'tool', 'assistant']);
      expect(sent[2]!.tool_calls).toHaveLength(1);
    }
    // An upstream that speaks OpenRouter takes reasoning back: a turn of reasoning alone stays.
    const reasoned: ChatRequest = {
      messages: [
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: null,
          reasoning_details: [{ type: 'reasoning.text', text: 't' }] as any,
        },
      ],
    };
    const or = body(reasoned, 'https://openrouter.ai/api/v1', 'x', { reasoningObject: true })
      .messages as ChatMessage[];
    expect(or).toHaveLength(2);
  });

  it("api.openai.com: verbosity xhigh and max go as high, OpenAI's highest (its enum is low, medium, high)", () => {
    for (const v of ['xhigh', 'max'] as const) {
      const r: ChatRequest = { messages: [{ role: 'user', content: 'q' }], verbosity: v };
      expect(body(r, 'https://api.openai.com/v1', 'gpt-5').verbosity, v).toBe('high');
      // OpenRouter takes them (it moves a level to the nearest the model has).
      expect(
        body(r, 'https://openrouter.ai/api/v1', 'openai/gpt-5', { reasoningObject: true }).verbosity,
      ).toBe(v);
    }
  });

  it('streams ask for usage unless told not to; supportedParams narrows the allow-list', () => {
    expect(body(req, 'http://h/v1', 'm', undefined, true).stream_options).toEqual({ include_usage: true });
    expect(body(req, 'http://h/v1', 'm', { streamUsage: false }, true)).not.toHaveProperty('stream_options');
    const b = body(req, 'http://h/v1', 'm', { supportedParams: ['messages', 'max_tokens'] });
    expect(Object.keys(b).sort()).toEqual(['max_tokens', 'messages', 'model']);
  });

  it('an allow-list takes the limit and reasoning under any of their spellings, and sends them under the one the upstream takes', () => {
    const r: ChatRequest = {
      messages: [{ role: 'user', content: 'q' }],
      max_tokens: 50,
      reasoning_effort: 'low',
    };
    const list = { supportedParams: ['messages', 'max_completion_tokens', 'reasoning'] };
    expect(body(r, 'http://h/v1', 'm', list)).toMatchObject({ max_tokens: 50, reasoning_effort: 'low' });
    // Named in neither spelling: not sent, as any other field the list leaves out.
    for (const extra of [
      { supportedParams: ['messages'] },
      { supportedParams: ['messages'], reasoningObject: true },
    ]) {
      const b = body(r, 'http://h/v1', 'm', extra);
      for (const k of ['max_tokens', 'max_completion_tokens', 'reasoning', 'reasoning_effort'])
        expect(b, `${JSON.stringify(extra)} ${k}`).not.toHaveProperty(k);
    }
  });

  it('paramsFor is what is sent: the allow-list, the host and the model decide both', () => {
    const of = (baseUrl: string, upstreamModel: string, settings: Record<string, unknown> = {}) =>
      openAiParamsFor({ baseUrl, upstreamModel, settings });
    const selfHosted = of('http://h/v1', 'qwen3');
    for (const p of [
      'top_k',
      'max_completion_tokens',
      'reasoning_effort',
      'structured_outputs',
      'temperature',
    ])
      expect(selfHosted.has(p), p).toBe(true);
    expect(selfHosted.has('top_a')).toBe(false);
    expect(of('http://h/v1', 'm', { reasoningObject: true }).has('top_a')).toBe(true);
    // OpenAI: no top_k; its reasoning models no temperature (o3 no stop either), its other models
    // no reasoning; verbosity only from gpt-5 on.
    const gpt4o = of('https://api.openai.com/v1', 'gpt-4o');
    expect([
      gpt4o.has('top_k'),
      gpt4o.has('reasoning'),
      gpt4o.has('verbosity'),
      gpt4o.has('temperature'),
    ]).toEqual([false, false, false, true]);
    const o3 = of('https://api.openai.com/v1', 'o3');
    expect([o3.has('temperature'), o3.has('stop'), o3.has('reasoning_effort'), o3.has('verbosity')]).toEqual([
      false,
      false,
      true,
      false,
    ]);
    expect(of('https://api.openai.com/v1', 'gpt-5').has('verbosity')).toBe(true);
    const narrow = of('http://h/v1', 'm', { supportedParams: ['messages', 'max_tokens'] });
    expect([...narrow].sort()).toEqual(['max_completion_tokens', 'max_tokens']);
  });

  it('an allow-list naming model or stream cannot let the client override them', () => {
    const list = { supportedParams: ['model', 'messages', 'stream', 'temperature'] };
    const r = { ...req, model: 'client/alias', stream: true };
    const b = body(r, 'http://h/v1', 'upstream-name', list);
    expect(b.model).toBe('upstream-name');
    expect(b).not.toHaveProperty('stream');
    expect(b.temperature).toBe(0.3);
    expect(body(r, 'http://h/v1', 'upstream-name', list, true).stream).toBe(true);
  });
});

describe('OpenAI stream decoder', () => {
  it('adds the role to a first delta that lacks it and maps reasoning_content', () => {
    const d = new OpenAiStreamDecoder();
    const ev = d.push('data: {"choices":[{"index":0,"delta":{"reasoning_content":"hm"}}]}\n\n');
    expect(ev).toEqual([
      {
        type: 'delta',
        choices: [
          {
            index: 0,
            delta: { role: 'assistant', reasoning: 'hm' },
            finish_reason: null,
            native_finish_reason: null,
          },
        ],
      },
    ]);
  });
});
