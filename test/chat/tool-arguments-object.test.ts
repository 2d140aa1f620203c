import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { type ChatGateway, fixtureJson, model, oaCompletion, startChatGateway } from './chat-helpers.js';

/**
 * A history whose tool call `arguments` are an object (the body schema takes one): every upstream
 * kind gets the call in the form it requires, asserted on what the loopback fake received. Before,
 * OpenAI-compatible upstreams (OpenRouter too) got the object, which they refuse.
 */
let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': () => ({ json: oaCompletion('sunny') }),
    'POST /v1/messages': () => ({ json: fixtureJson('anthropic/chat.json') }),
    'POST /v1beta/models/gemini-2.5-flash:generateContent': () => ({ json: fixtureJson('gemini/chat.json') }),
  });
  c = await startChatGateway({
    channels: [
      { name: 'oa', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: ['t/oa'] },
      {
        name: 'or',
        kind: 'openai-compatible',
        base_url: `${up.url}/v1`,
        keys: ['k'],
        models: ['t/or'],
        settings: { reasoningObject: true },
      },
      {
        name: 'ge',
        kind: 'gemini',
        base_url: up.url,
        keys: ['k'],
        models: ['t/ge'],
        model_mapping: { 't/ge': 'gemini-2.5-flash' },
      },
      {
        name: 'an',
        kind: 'anthropic',
        base_url: up.url,
        keys: ['k'],
        models: ['t/an'],
        model_mapping: { 't/an': 'claude-sonnet-4-5' },
      },
    ],
    models: [model('t/oa'), model('t/or'), model('t/ge'), model('t/an')],
    gateway: { retry_base_ms: 1, max_attempts: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const ARGS = { city: 'Oslo', days: 2, units: { temp: 'C' } };
const call = (id: string, args: unknown) => ({
  id,
  type: 'function',
  function: { name: 'get_weather', arguments: args },
});
const tools = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      parameters: { type: 'object', properties: { city: { type: 'string' } } },
    },
  },
];
const messages = [
  { role: 'user', content: 'Weather in Oslo and Rome?' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [call('call_1', ARGS), call('call_2', JSON.stringify({ city: 'Rome' }))],
  },
  { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
  { role: 'tool', tool_call_id: 'call_2', content: 'rain' },
];

async function sentFor(id: string) {
  const before = up.requests.length;
  const r = await c.gw.call('POST', '/v1/chat/completions', {
    token: c.key,
    body: { model: id, messages, tools },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const sent = up.requests.slice(before);
  expect(sent).toHaveLength(1);
  return sent[0]!.json;
}

describe('tool call arguments given as an object', () => {
  it.each(['t/oa', 't/or'])(
    '%s (OpenAI-compatible) gets them as JSON text; a string stays as sent',
    async (id) => {
      const sent = await sentFor(id);
      const calls = sent.messages[1].tool_calls;
      expect(calls[0].function.arguments).toBe(JSON.stringify(ARGS));
      expect(calls[1].function.arguments).toBe('{"city":"Rome"}');
      expect(calls.map((t: any) => [t.id, t.type, t.function.name])).toEqual([
        ['call_1', 'function', 'get_weather'],
        ['call_2', 'function', 'get_weather'],
      ]);
    },
  );

  it('Anthropic and Gemini get the object, as before', async () => {
    const an = await sentFor('t/an');
    expect(an.messages[1].content.filter((b: any) => b.type === 'tool_use').map((b: any) => b.input)).toEqual(
      [ARGS, { city: 'Rome' }],
    );
    const ge = await sentFor('t/ge');
    expect(ge.contents[1].parts.map((p: any) => p.functionCall.args)).toEqual([ARGS, { city: 'Rome' }]);
  });
});
