/**
 * Per-provider facts for the adapter contract suite: where the fake upstream listens, what each
 * fixture must decode to, and what a valid request for that provider looks like.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { ReasoningDetail } from '../../src/gateway/chat/types.js';
import type { UpstreamErrorKind } from '../../src/gateway/errors.js';
import { anthropicAdapter } from '../../src/providers/anthropic/anthropic-adapter.js';
import { geminiAdapter } from '../../src/providers/gemini/gemini-adapter.js';
import { openAiCompatibleAdapter } from '../../src/providers/openai-compatible/openai-compatible-adapter.js';
import type { ChatAdapter, UpstreamTarget } from '../../src/providers/types.js';
import type { ReceivedRequest } from '../helpers/fake-upstream.js';

export const fixture = (provider: string, name: string) =>
  readFileSync(new URL(`../fixtures/${provider}/${name}`, import.meta.url), 'utf8');

export interface ErrorCase {
  name: string;
  status: number;
  file: string;
  headers?: Record<string, string>;
  kind: UpstreamErrorKind;
  retryAfterMs?: number;
}

export interface ProviderCase {
  name: string;
  fixtures: string;
  adapter: ChatAdapter;
  target(url: string, model?: string): UpstreamTarget;
  /** Route key for the fake server. */
  route(model: string, stream: boolean): string;
  model: string;
  reasoningModel: string;
  text: string;
  streamText: string;
  usage: { prompt: number; completion: number; cached?: number };
  streamUsage: { prompt: number; completion: number };
  /** The provider's own stop value (`native_finish_reason`) of the chat and tools fixtures. */
  native: { chat: string; tools: string };
  streamTools: Array<{ name: string; args: unknown }>;
  jsonTool: { name: string; args: unknown };
  reasoning: { stream: string; streamContent: string; json: string; signature?: string };
  /** Fixture whose assistant message is sent back to test reasoning replay. */
  replayFixture: string;
  errors: ErrorCase[];
  streamErrorKind: UpstreamErrorKind;
  models: string[];
  /** Checks every request: headers, path, field names. */
  validate(r: ReceivedRequest, stream: boolean): void;
  checkToolRoundTrip(body: any): void;
  checkImages(body: any): void;
  checkReasoning(body: any): void;
  checkReplay(body: any, sent: ReasoningDetail[]): void;
}

const ROUTING_FIELDS = ['models', 'provider', 'transforms', 'usage', 'reasoning'];

const alternates = (turns: Array<{ role: string }>) => {
  for (let i = 1; i < turns.length; i++) expect(turns[i].role).not.toBe(turns[i - 1].role);
};

export const openAiCase: ProviderCase = {
  name: 'openai-compatible',
  fixtures: 'openai',
  adapter: openAiCompatibleAdapter,
  target: (url, model = 'gpt-4o-mini') => ({ baseUrl: `${url}/v1`, apiKey: 'sk-test', upstreamModel: model }),
  route: () => 'POST /v1/chat/completions',
  model: 'gpt-4o-mini',
  reasoningModel: 'o3-mini',
  text: 'Hello! How can I assist you today?',
  streamText: 'Hello! How can I assist you today?',
  usage: { prompt: 19, completion: 10, cached: 0 },
  streamUsage: { prompt: 19, completion: 10 },
  native: { chat: 'stop', tools: 'tool_calls' },
  streamTools: [
    { name: 'get_weather', args: { location: 'Paris, France' } },
    { name: 'get_time', args: { tz: 'Europe/Paris' } },
  ],
  jsonTool: { name: 'get_weather', args: { location: 'Boston, MA' } },
  reasoning: {
    stream: 'The user asks 2+2. That is 4.',
    streamContent: '2 + 2 = 4.',
    json: 'The user asks 2+2. That is 4.',
  },
  replayFixture: 'reasoning.json',
  errors: [
    {
      name: '429 with Retry-After',
      status: 429,
      file: 'error-429.json',
      headers: { 'retry-after': '20' },
      kind: 'rate_limited',
      retryAfterMs: 20_000,
    },
    { name: '503 overloaded', status: 503, file: 'error-503.json', kind: 'overloaded' },
    { name: '500', status: 500, file: 'error-500.json', kind: 'server_error' },
    { name: '401', status: 401, file: 'error-401.json', kind: 'auth' },
    { name: '400 context length', status: 400, file: 'error-400-context.json', kind: 'context_length' },
  ],
  streamErrorKind: 'server_error',
  models: ['gpt-4o-mini', 'o3-mini'],
  validate(r, stream) {
    expect(r.path).toBe('/v1/chat/completions');
    expect(r.headers.authorization).toBe('Bearer sk-test');
    expect(r.headers['content-type']).toBe('application/json');
    for (const f of ROUTING_FIELDS) expect(r.json).not.toHaveProperty(f);
    if (stream) {
      expect(r.json.stream).toBe(true);
      expect(r.json.stream_options).toEqual({ include_usage: true });
    } else expect(r.json.stream).toBeUndefined();
  },
  checkToolRoundTrip(body) {
    expect(body.tools[0].function.name).toBe('get_weather');
    expect(body.tool_choice).toBe('required');
    expect(body.messages[2].tool_calls[0].id).toBe('call_1');
    expect(body.messages[3]).toMatchObject({ role: 'tool', tool_call_id: 'call_1' });
  },
  checkImages(body) {
    const parts = body.messages[0].content;
    expect(parts[1].image_url.url).toMatch(/^data:image\/png;base64,/);
    expect(parts[2].image_url.url).toBe('https://example.com/cat.jpg');
  },
  checkReasoning(body) {
    expect(body.model).toBe('o3-mini');
    expect(body.reasoning_effort).toBe('high');
    expect(body.max_completion_tokens).toBe(2000);
    expect(body).not.toHaveProperty('max_tokens');
    expect(body).not.toHaveProperty('temperature');
  },
  checkReplay(body) {
    // Reasoning history is not part of OpenAI's message schema: it must not be forwarded.
    expect(body.messages[1]).not.toHaveProperty('reasoning_details');
    expect(body.messages[1]).not.toHaveProperty('reasoning');
  },
};

const ANTHROPIC_SIG = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds...';

export const anthropicCase: ProviderCase = {
  name: 'anthropic',
  fixtures: 'anthropic',
  adapter: anthropicAdapter,
  target: (url, model = 'claude-sonnet-4-5') => ({
    baseUrl: url,
    apiKey: 'sk-ant-test',
    upstreamModel: model,
  }),
  route: () => 'POST /v1/messages',
  model: 'claude-sonnet-4-5',
  reasoningModel: 'claude-sonnet-4-5',
  text: 'Hello! How can I help you today?',
  streamText: 'Hello! How can I help you today?',
  usage: { prompt: 2112, completion: 10, cached: 2000 },
  streamUsage: { prompt: 25, completion: 15 },
  native: { chat: 'end_turn', tools: 'tool_use' },
  streamTools: [
    { name: 'get_weather', args: { location: 'San Francisco, CA', unit: 'fahrenheit' } },
    { name: 'get_time', args: {} },
  ],
  jsonTool: { name: 'get_weather', args: { location: 'San Francisco, CA' } },
  reasoning: {
    stream:
      'I need to find the GCD of 1071 and 462 using the Euclidean algorithm.\n\n1071 = 2 × 462 + 147\n462 = 3 × 147 + 21\n147 = 7 × 21 + 0\n\nSo GCD(1071, 462) = 21',
    streamContent: 'The greatest common divisor of 1071 and 462 is **21**.',
    json: "To approach this, let's think about what we know about prime numbers...",
    signature: ANTHROPIC_SIG,
  },
  replayFixture: 'reasoning.json',
  errors: [
    {
      name: '429 with Retry-After',
      status: 429,
      file: 'error-429.json',
      headers: { 'retry-after': '30' },
      kind: 'rate_limited',
      retryAfterMs: 30_000,
    },
    { name: '529 overloaded', status: 529, file: 'error-529.json', kind: 'overloaded' },
    { name: '500', status: 500, file: 'error-500.json', kind: 'server_error' },
    { name: '401', status: 401, file: 'error-401.json', kind: 'auth' },
    { name: '400 context length', status: 400, file: 'error-400-context.json', kind: 'context_length' },
  ],
  streamErrorKind: 'overloaded',
  models: ['claude-sonnet-4-5-20250929', 'claude-haiku-4-5-20251001'],
  validate(r, stream) {
    expect(r.path).toBe('/v1/messages');
    expect(r.headers['x-api-key']).toBe('sk-ant-test');
    expect(r.headers['anthropic-version']).toBe('2023-06-01');
    expect(r.headers.authorization).toBeUndefined();
    const b = r.json;
    expect(Number.isInteger(b.max_tokens) && b.max_tokens >= 1).toBe(true);
    expect(b.messages[0].role).toBe('user');
    for (const m of b.messages) expect(['user', 'assistant']).toContain(m.role);
    alternates(b.messages);
    for (const f of [
      ...ROUTING_FIELDS,
      'stream_options',
      'max_completion_tokens',
      'seed',
      'frequency_penalty',
    ]) {
      expect(b).not.toHaveProperty(f);
    }
    if (b.temperature !== undefined) expect(b.temperature).toBeLessThanOrEqual(1);
    if (b.thinking) {
      expect(b.thinking.budget_tokens).toBeGreaterThanOrEqual(1024);
      expect(b.thinking.budget_tokens).toBeLessThan(b.max_tokens);
      expect(b).not.toHaveProperty('temperature');
      expect(b).not.toHaveProperty('top_k');
    }
    if (stream) expect(b.stream).toBe(true);
    else expect(b.stream).toBeUndefined();
  },
  checkToolRoundTrip(body) {
    expect(body.tools[0]).toMatchObject({ name: 'get_weather', input_schema: { type: 'object' } });
    expect(body.tool_choice).toEqual({ type: 'any' });
    expect(body.system).toEqual([{ type: 'text', text: 'You are terse.' }]);
    const call = body.messages[1].content.find((b: any) => b.type === 'tool_use');
    expect(call).toEqual({
      type: 'tool_use',
      id: 'call_1',
      name: 'get_weather',
      input: { location: 'Paris' },
    });
    expect(body.messages[2].role).toBe('user');
    expect(body.messages[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'call_1' });
  },
  checkImages(body) {
    const blocks = body.messages[0].content;
    expect(blocks[0]).toEqual({ type: 'text', text: 'What is in these images?' });
    expect(blocks[1].source).toMatchObject({ type: 'base64', media_type: 'image/png' });
    expect(blocks[1].source.data).not.toMatch(/^data:/);
    expect(blocks[2].source).toEqual({ type: 'url', url: 'https://example.com/cat.jpg' });
  },
  checkReasoning(body) {
    expect(body.thinking.type).toBe('enabled');
    expect(body.thinking.budget_tokens).toBe(1600);
    expect(body.max_tokens).toBe(2000);
  },
  checkReplay(body, sent) {
    const assistant = body.messages[1];
    expect(assistant.role).toBe('assistant');
    const thinking = sent.filter((d) => d.type === 'reasoning.text');
    expect(assistant.content[0]).toEqual({
      type: 'thinking',
      thinking: thinking.map((d) => d.text).join(''),
      signature: thinking.map((d) => d.signature ?? '').join(''),
    });
    expect(assistant.content[1].type).toBe('redacted_thinking');
    expect(assistant.content.at(-1).type).toBe('tool_use');
  },
};

const GEMINI_SIG = 'CiQB0e2Kb4QOV2wNc+3dLmkoBgkZGSMbnBUxnqyJ3uVZbzdbhtIKdAHR7Ypv';

export const geminiCase: ProviderCase = {
  name: 'gemini',
  fixtures: 'gemini',
  adapter: geminiAdapter,
  target: (url, model = 'gemini-2.5-flash') => ({ baseUrl: url, apiKey: 'AIza-test', upstreamModel: model }),
  route: (model, stream) =>
    `POST /v1beta/models/${model}:${stream ? 'streamGenerateContent' : 'generateContent'}`,
  model: 'gemini-2.5-flash',
  reasoningModel: 'gemini-2.5-flash',
  text: 'Hello! How can I help you today?',
  streamText: 'Hello! How can I help you today?',
  usage: { prompt: 9, completion: 12, cached: 4 },
  streamUsage: { prompt: 9, completion: 12 },
  native: { chat: 'STOP', tools: 'STOP' },
  streamTools: [
    { name: 'get_weather', args: { location: 'Paris, France' } },
    { name: 'get_time', args: { tz: 'Europe/Paris' } },
  ],
  jsonTool: { name: 'get_weather', args: { location: 'Boston, MA' } },
  reasoning: {
    stream: '**Calculating the sum**\n\nThe user asks for 2+2, which is 4.',
    streamContent: '2 + 2 = 4.',
    json: '**Calculating the sum**\n\nThe user asks for 2+2, which is 4.',
    signature: 'EpMCCpACAdHtim9TgnDaN5ll',
  },
  replayFixture: 'tools.json',
  errors: [
    {
      name: '429 with RetryInfo',
      status: 429,
      file: 'error-429.json',
      kind: 'rate_limited',
      retryAfterMs: 37_000,
    },
    { name: '503 overloaded', status: 503, file: 'error-503.json', kind: 'overloaded' },
    { name: '500', status: 500, file: 'error-500.json', kind: 'server_error' },
    { name: '400 API_KEY_INVALID', status: 400, file: 'error-401.json', kind: 'auth' },
    { name: '400 context length', status: 400, file: 'error-400-context.json', kind: 'context_length' },
  ],
  streamErrorKind: 'overloaded',
  models: ['gemini-2.5-flash'],
  validate(r, stream) {
    const model = r.path.split('/models/')[1]?.split(':')[0];
    expect(r.path).toBe(
      stream
        ? `/v1beta/models/${model}:streamGenerateContent?alt=sse`
        : `/v1beta/models/${model}:generateContent`,
    );
    expect(r.headers['x-goog-api-key']).toBe('AIza-test');
    const b = r.json;
    expect(
      Object.keys(b).every((k) =>
        ['contents', 'systemInstruction', 'generationConfig', 'tools', 'toolConfig'].includes(k),
      ),
    ).toBe(true);
    for (const c of b.contents) expect(['user', 'model']).toContain(c.role);
    alternates(b.contents);
    const gen = b.generationConfig ?? {};
    for (const k of Object.keys(gen)) expect(k).not.toMatch(/_/);
  },
  checkToolRoundTrip(body) {
    expect(body.tools[0].functionDeclarations[0]).toMatchObject({
      name: 'get_weather',
      parametersJsonSchema: { type: 'object' },
    });
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'You are terse.' }] });
    // The client's tool call id goes on both parts, so Gemini pairs them by id as well as by name.
    expect(body.contents[1]).toEqual({
      role: 'model',
      parts: [{ functionCall: { id: 'call_1', name: 'get_weather', args: { location: 'Paris' } } }],
    });
    expect(body.contents[2].role).toBe('user');
    expect(body.contents[2].parts[0]).toEqual({
      functionResponse: { id: 'call_1', name: 'get_weather', response: { temp_c: 18 } },
    });
  },
  checkImages(body) {
    const parts = body.contents[0].parts;
    expect(parts[0]).toEqual({ text: 'What is in these images?' });
    expect(parts[1].inlineData.mimeType).toBe('image/png');
    expect(parts[1].inlineData.data).not.toMatch(/^data:/);
    expect(parts[2]).toEqual({
      fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/cat.jpg' },
    });
  },
  checkReasoning(body) {
    expect(body.generationConfig.thinkingConfig).toEqual({ includeThoughts: true, thinkingBudget: 1600 });
    expect(body.generationConfig.maxOutputTokens).toBe(2000);
  },
  checkReplay(body, sent) {
    const callId = sent.find((d) => d.id)?.id;
    expect(callId).toMatch(/^call_/);
    const model = body.contents[1];
    expect(model.role).toBe('model');
    const part = model.parts.find((p: any) => p.functionCall);
    expect(part.thoughtSignature).toBe(GEMINI_SIG);
  },
};

export const providerCases = [openAiCase, anthropicCase, geminiCase];
