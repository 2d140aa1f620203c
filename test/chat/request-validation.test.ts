import { describe, expect, it } from 'vitest';
import { fakeChatOfFourKinds, oaCompletion } from './chat-helpers.js';

/**
 * Request shapes an upstream translation cannot carry faithfully (a tool message without its
 * call id, a tool whose parameters are not a schema, a name no tool has, a server tool or plugin
 * the gateway does not run): a 400 naming the field on every kind of upstream, sent nowhere,
 * rather than an invented id, a mangled schema or a silently dropped web search.
 */
const t = fakeChatOfFourKinds(() => ({ json: oaCompletion('fine') }));

const MODELS = ['t/oa', 't/or', 't/an', 't/ge'];
const user = { role: 'user', content: 'x' };
const chat = (body: Record<string, unknown>) =>
  t.c.gw.call('POST', '/v1/chat/completions', { token: t.c.key, body: { messages: [user], ...body } });
const fn = (name: string, more: Record<string, unknown> = {}) => ({
  type: 'function',
  function: { name, ...more },
});
const toolTurn = (toolMessage: Record<string, unknown>) => [
  user,
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
  },
  toolMessage,
];

/** Each case is refused on every kind of upstream, naming `param`, with `says` in the message. */
async function refused(cases: [string, Record<string, unknown>, string, string?][]) {
  const before = t.up.requests.length;
  for (const [what, body, param, says] of cases) {
    for (const id of MODELS) {
      const r = await chat({ model: id, ...body });
      expect(r.status, `${what} on ${id}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.error.param, `${what} on ${id}`).toBe(param);
      expect(r.body.error.message, `${what} on ${id}`).toContain(`${param}:`);
      if (says) expect(r.body.error.message, `${what} on ${id}`).toContain(says);
    }
  }
  expect(t.up.requests.length).toBe(before);
}

/** The one body the upstream received for `body` on `id`. */
async function sentFor(id: string, body: Record<string, unknown>) {
  const before = t.up.requests.length;
  const r = await chat({ model: id, ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const sent = t.up.requests.slice(before);
  expect(sent).toHaveLength(1);
  return sent[0]!.json;
}

describe('tool messages', () => {
  it('a tool message without tool_call_id is a 400 naming it', async () => {
    await refused([
      [
        'no tool_call_id',
        { messages: toolTurn({ role: 'tool', content: '1' }), tools: [fn('f')] },
        'messages.2.tool_call_id',
        'is required',
      ],
      [
        'an empty tool_call_id',
        { messages: toolTurn({ role: 'tool', tool_call_id: '', content: '1' }), tools: [fn('f')] },
        'messages.2.tool_call_id',
      ],
    ]);
  });

  it('with its tool_call_id it reaches Anthropic and Gemini answering the call', async () => {
    const messages = toolTurn({ role: 'tool', tool_call_id: 'call_1', content: '1' });
    const an = await sentFor('t/an', { messages, tools: [fn('f')] });
    expect(an.messages[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'call_1' });
    const ge = await sentFor('t/ge', { messages, tools: [fn('f')] });
    expect(ge.contents[2].parts[0].functionResponse.name).toBe('f');
  });
});

describe('tool definitions and tool_choice', () => {
  it('is a 400 naming the field for parameters that are not a schema object, a bad or repeated name, or a choice naming no tool', async () => {
    await refused([
      [
        'parameters as a string',
        { tools: [fn('f', { parameters: 'x' })] },
        'tools.0.function.parameters',
        'must be an object',
      ],
      [
        'parameters as an array',
        { tools: [fn('f'), fn('g', { parameters: ['x'] })] },
        'tools.1.function.parameters',
        'must be an object',
      ],
      ['a name with a space', { tools: [fn('get weather')] }, 'tools.0.function.name'],
      ['a name with a dot', { tools: [fn('ns.get')] }, 'tools.0.function.name'],
      ['a name over 64 characters', { tools: [fn('f'.repeat(65))] }, 'tools.0.function.name'],
      ['a repeated name', { tools: [fn('f'), fn('g'), fn('f')] }, 'tools.2.function.name', 'tools.0'],
      [
        'a named choice of no declared tool',
        { tools: [fn('f')], tool_choice: { type: 'function', function: { name: 'g' } } },
        'tool_choice.function.name',
        // Worded as /v1/responses words it (one check serves both).
        '"g" is not the name of a tool in tools',
      ],
    ]);
  });

  it('well-formed tools reach every upstream, a named choice of a declared tool too', async () => {
    const tools = [
      fn('get_weather-2', { parameters: { type: 'object', properties: { city: { type: 'string' } } } }),
      fn('f'.repeat(64)),
    ];
    const tool_choice = { type: 'function', function: { name: 'get_weather-2' } };
    const oa = await sentFor('t/oa', { tools, tool_choice });
    expect(oa.tools).toEqual(tools);
    expect(oa.tool_choice).toEqual(tool_choice);
    const an = await sentFor('t/an', { tools, tool_choice });
    expect(an.tools.map((t: { name: string }) => t.name)).toEqual(['get_weather-2', 'f'.repeat(64)]);
    expect(an.tool_choice).toMatchObject({ type: 'tool', name: 'get_weather-2' });
  });
});

describe('OpenRouter server tools and plugins', () => {
  it('server tools in tools or tool_choice are a 400 naming them: web search is not available', async () => {
    await refused([
      ['openrouter:web_search', { tools: [{ type: 'openrouter:web_search' }] }, 'tools.0.type', 'web search'],
      ['web_search', { tools: [fn('f'), { type: 'web_search' }] }, 'tools.1.type', 'web search'],
      ['web_search_preview', { tools: [{ type: 'web_search_preview' }] }, 'tools.0.type', 'web search'],
      ['openrouter:web_fetch', { tools: [{ type: 'openrouter:web_fetch' }] }, 'tools.0.type'],
      ['openrouter:datetime', { tools: [{ type: 'openrouter:datetime' }] }, 'tools.0.type', 'server tool'],
      [
        'a server tool choice',
        { tools: [fn('f')], tool_choice: { type: 'openrouter:web_search' } },
        'tool_choice.type',
        'web search',
      ],
    ]);
  });

  it('a plugins value of the wrong shape is a 400 naming it', async () => {
    await refused([
      ['a string', { plugins: 'x' }, 'plugins'],
      ['an item that is not an object', { plugins: ['web'] }, 'plugins.0'],
      ['an item without id', { plugins: [{ max_results: 3 }] }, 'plugins.0.id'],
      ['an id that is not a string', { plugins: [{ id: 5 }] }, 'plugins.0.id'],
      [
        'enabled that is not a boolean',
        { plugins: [{ id: 'context-compression', enabled: 'yes' }] },
        'plugins.0.enabled',
      ],
      [
        'an engine middle-out does not have',
        { plugins: [{ id: 'context-compression', engine: 'summarize' }] },
        'plugins.0.engine',
      ],
    ]);
  });

  it('plugins that change the answer and the gateway does not run are a 400 naming them', async () => {
    await refused([
      ['web', { plugins: [{ id: 'web', max_results: 3 }] }, 'plugins.0.id', 'web search'],
      ['web-fetch', { plugins: [{ id: 'file-parser' }, { id: 'web-fetch' }] }, 'plugins.1.id', 'web'],
      ['moderation', { plugins: [{ id: 'moderation' }] }, 'plugins.0.id'],
      ['auto-router', { plugins: [{ id: 'auto-router', allowed_models: ['a/b'] }] }, 'plugins.0.id'],
      ['fusion', { plugins: [{ id: 'fusion' }] }, 'plugins.0.id'],
      ['an unknown one', { plugins: [{ id: 'telepathy' }] }, 'plugins.0.id'],
    ]);
  });

  it('harmless plugins and one turned off are served, and no upstream gets plugins', async () => {
    const plugins = [
      { id: 'file-parser', pdf: { engine: 'pdf-text' } },
      { id: 'response-healing' },
      { id: 'context-compression', enabled: false },
      { id: 'web', enabled: false },
    ];
    for (const id of MODELS) {
      const sent = await sentFor(id, { plugins });
      expect(sent, id).not.toHaveProperty('plugins');
      expect(sent, id).not.toHaveProperty('transforms');
    }
  });
});

describe('other fields', () => {
  it('structured_outputs must be a boolean; a logit_bias key must be a token id', async () => {
    await refused([
      ['structured_outputs as a string', { structured_outputs: 'yes' }, 'structured_outputs', 'boolean'],
      ['a logit_bias key of letters', { logit_bias: { abc: 1 } }, 'logit_bias', 'token id'],
    ]);
  });

  it('structured_outputs true and a logit_bias of token ids reach an OpenAI-compatible upstream', async () => {
    const sent = await sentFor('t/or', { structured_outputs: true, logit_bias: { '50256': -100 } });
    expect(sent).toMatchObject({ structured_outputs: true, logit_bias: { '50256': -100 } });
  });
});
