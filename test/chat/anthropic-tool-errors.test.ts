import type Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { type ChatGateway, fixtureJson, geminiChannel, model, startChatGateway } from './chat-helpers.js';
import { anthropicClient } from './sdk-clients.js';

/**
 * A /v1/messages `tool_result` with `is_error: true` (a tool that failed: Claude Code sends one
 * for a file not found, a command refused) sent to a Gemini upstream: Gemini's functionResponse
 * says a failure with an `error` key in its `response` (its `output`/`error` convention), so the
 * model is told the call failed rather than handed the error text as the tool's result. Before,
 * `is_error` was read by the Anthropic adapter only and Gemini got `{"result": "<error text>"}`.
 */
let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1beta/models/gemini-2.5-flash:generateContent': { json: fixtureJson('gemini/chat.json') },
  });
  c = await startChatGateway({
    channels: [geminiChannel('ge', up, { 'acme/gem': 'gemini-2.5-flash' })],
    models: [model('acme/gem')],
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});
beforeEach(() => {
  up.requests.length = 0;
});

const sentParts = () => up.requests.at(-1)!.json.contents[2].parts;

const results = (
  a: Omit<Anthropic.ToolResultBlockParam, 'type' | 'tool_use_id'>,
  b: Omit<Anthropic.ToolResultBlockParam, 'type' | 'tool_use_id'>,
): Anthropic.MessageParam[] => [
  { role: 'user', content: 'read both' },
  {
    role: 'assistant',
    content: [
      { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { path: 'a' } },
      { type: 'tool_use', id: 'toolu_2', name: 'Read', input: { path: 'b' } },
    ],
  },
  {
    role: 'user',
    content: [
      { type: 'tool_result', tool_use_id: 'toolu_1', ...a },
      { type: 'tool_result', tool_use_id: 'toolu_2', ...b },
    ],
  },
];

describe('a failed tool result for a Gemini upstream', () => {
  it('is a functionResponse with an error key; a successful one beside it keeps its result', async () => {
    await anthropicClient(c).messages.create({
      model: 'acme/gem',
      max_tokens: 50,
      messages: results({ content: 'ENOENT: no such file', is_error: true }, { content: 'file b' }),
    });
    expect(sentParts()).toEqual([
      { functionResponse: { name: 'Read', response: { error: 'ENOENT: no such file' }, id: 'toolu_1' } },
      { functionResponse: { name: 'Read', response: { result: 'file b' }, id: 'toolu_2' } },
    ]);
  });

  it('an error given as JSON or as text blocks goes under the error key as well', async () => {
    await anthropicClient(c).messages.create({
      model: 'acme/gem',
      max_tokens: 50,
      messages: results(
        { content: '{"code":"EACCES","path":"a"}', is_error: true },
        { content: [{ type: 'text', text: 'denied' }], is_error: true },
      ),
    });
    expect(sentParts()).toEqual([
      {
        functionResponse: { name: 'Read', response: { error: { code: 'EACCES', path: 'a' } }, id: 'toolu_1' },
      },
      { functionResponse: { name: 'Read', response: { error: 'denied' }, id: 'toolu_2' } },
    ]);
  });
});
