import { describe, expect, it } from 'vitest';
import { fakeChatOfFourKinds, oaCompletion } from './chat-helpers.js';

/**
 * A history whose tool call `arguments` are an object (the body schema takes one): every upstream
 * kind gets the call in the form it requires, asserted on what the loopback fake received. Before,
 * OpenAI-compatible upstreams (OpenRouter too) got the object, which they refuse.
 */
const t = fakeChatOfFourKinds(() => ({ json: oaCompletion('sunny') }));

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
  const before = t.up.requests.length;
  const r = await t.c.gw.call('POST', '/v1/chat/completions', {
    token: t.c.key,
    body: { model: id, messages, tools },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const sent = t.up.requests.slice(before);
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
