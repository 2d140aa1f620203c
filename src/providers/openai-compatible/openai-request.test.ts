import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../gateway/chat/types.js';
import { buildOpenAiRequest } from './openai-request.js';
import { OpenAiStreamDecoder } from './openai-response.js';

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

  it('streams ask for usage unless told not to; supportedParams narrows the allow-list', () => {
    expect(body(req, 'http://h/v1', 'm', undefined, true).stream_options).toEqual({ include_usage: true });
    expect(body(req, 'http://h/v1', 'm', { streamUsage: false }, true)).not.toHaveProperty('stream_options');
    const b = body(req, 'http://h/v1', 'm', { supportedParams: ['messages', 'max_tokens'] });
    expect(Object.keys(b).sort()).toEqual(['max_tokens', 'messages', 'model']);
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
