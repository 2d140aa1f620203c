import type Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  anthropicChannel,
  type ChatGateway,
  fixture,
  fixtureJson,
  lastSentTo,
  lastText,
  model,
  openaiChannel,
  recordedAnswer,
  requestLogs,
  sseSteps,
  startChatGateway,
  userContent,
} from './chat-helpers.js';
import { anthropicClient, openaiClient } from './sdk-clients.js';

/**
 * Anthropic-defined tools through the Anthropic Messages ingress (/v1/messages), with the official
 * @anthropic-ai/sdk: server tools (web search, run by Anthropic: server_tool_use and
 * web_search_tool_result blocks in the answer, usage.server_tool_use) and schema-less client tools
 * (bash, text editor: answered with ordinary tool_use blocks). An Anthropic upstream gets them as
 * the client sent them, and the answer's blocks come back in place, streamed and not, and go back
 * unchanged in the next turn; an OpenAI-compatible upstream never sees them. The fake Anthropic
 * upstream answers by the last user text: "search..." with a recorded web search answer, "bash..."
 * with a bash tool_use, anything else with plain text.
 */
const WEB_SEARCH: Anthropic.WebSearchTool20250305 = {
  type: 'web_search_20250305',
  name: 'web_search',
  max_uses: 3,
  allowed_domains: ['wikipedia.org', 'britannica.com'],
  user_location: {
    type: 'approximate',
    city: 'San Francisco',
    country: 'US',
    timezone: 'America/Los_Angeles',
  },
  cache_control: { type: 'ephemeral' },
};
const BASH: Anthropic.ToolBash20250124 = { type: 'bash_20250124', name: 'bash' };
const EDITOR: Anthropic.ToolTextEditor20250728 = {
  type: 'text_editor_20250728',
  name: 'str_replace_based_edit_tool',
  max_characters: 10000,
};
const WEATHER: Anthropic.Tool = {
  name: 'get_weather',
  description: 'Weather of a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
/** The custom tool as an Anthropic upstream gets it back. */
const WEATHER_SENT = {
  name: 'get_weather',
  description: 'Weather of a city',
  input_schema: WEATHER.input_schema,
};

const SEARCH = fixtureJson('anthropic/web-search.json');
const BASH_ANSWER = {
  id: 'msg_01Aq9w938a90dw8q',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5-20250929',
  content: [
    { type: 'text', text: "I'll list the files in the current directory." },
    { type: 'tool_use', id: 'toolu_01BashLs7x', name: 'bash', input: { command: 'ls -la' } },
  ],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: {
    input_tokens: 1520,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: 58,
  },
};

let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  const anthropic = (req: any) => {
    const s = lastText(req.json);
    const stream = req.json.stream === true;
    if (s.startsWith('search'))
      return stream ? { sse: sseSteps(fixture('anthropic/web-search-stream.sse')) } : { json: SEARCH };
    if (s.startsWith('bash')) return { json: BASH_ANSWER };
    if (s === 'overloaded') return { status: 529, json: fixtureJson('anthropic/error-529.json') };
    return recordedAnswer('anthropic/chat', stream);
  };
  up = await startFakeUpstream({
    'POST /v1/messages': anthropic,
    'POST /v1/chat/completions': { json: fixtureJson('openai/chat.json') },
  });
  c = await startChatGateway({
    channels: [
      anthropicChannel('claude', up, { 'acme/claude': 'claude-sonnet-4-5' }),
      openaiChannel('oa', up, ['acme/gpt']),
    ],
    models: [
      model('acme/claude', {
        max_completion_tokens: 64_000,
        pricing: { prompt: '0.000001', completion: '0.000002', web_search: '0.01' },
      }),
      model('acme/gpt'),
    ],
    gateway: { retry_base_ms: 1, first_byte_timeout_ms: 2000 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const client = () => anthropicClient(c);
const sentTo = (path: string) => lastSentTo(up, path);
const user = userContent;

describe('server tools (web search) to an Anthropic upstream', () => {
  it('sends the tools unchanged and in order, and answers with the server tool blocks in place', async () => {
    const r = await client().messages.create({
      model: 'acme/claude',
      max_tokens: 1024,
      messages: user('search: when was Claude Shannon born?'),
      tools: [WEATHER, WEB_SEARCH, BASH],
    });
    const sent = sentTo('/v1/messages').json;
    expect(sent.tools).toEqual([WEATHER_SENT, WEB_SEARCH, BASH]);
    expect(sent).not.toHaveProperty('tool_choice');

    expect(r.content).toEqual(SEARCH.content);
    expect(r.content.map((b) => b.type)).toEqual([
      'text',
      'server_tool_use',
      'web_search_tool_result',
      'text',
      'text',
    ]);
    expect(r.stop_reason).toBe('end_turn');
    expect(r.usage).toMatchObject({
      input_tokens: 6039,
      output_tokens: 931,
      server_tool_use: { web_search_requests: 1, web_fetch_requests: 0 },
    });
  });

  it('bills the searches at the model web_search price', async () => {
    await client().messages.create({
      model: 'acme/claude',
      max_tokens: 1024,
      messages: user('search: billed'),
      tools: [WEB_SEARCH],
    });
    const row = (await requestLogs(c)).find((l) => l.endpoint === 'messages' && l.model === 'acme/claude');
    // 6039 prompt and 931 completion tokens, and one search at 0.01 USD.
    expect(row.cost).toBeCloseTo(6039 * 0.000001 + 931 * 0.000002 + 0.01, 9);
  });

  it('a tool_choice naming the server tool, with no custom tool (as Claude Code searches)', async () => {
    await client().messages.create({
      model: 'acme/claude',
      max_tokens: 1024,
      messages: user('search: Perform a web search for the query: modelgate'),
      tools: [WEB_SEARCH],
      tool_choice: { type: 'tool', name: 'web_search' },
    });
    const sent = sentTo('/v1/messages').json;
    expect(sent.tools).toEqual([WEB_SEARCH]);
    expect(sent.tool_choice).toEqual({ type: 'tool', name: 'web_search' });

    await client().messages.create({
      model: 'acme/claude',
      max_tokens: 1024,
      messages: user('search: again'),
      tools: [WEATHER, WEB_SEARCH],
      tool_choice: { type: 'tool', name: 'web_search', disable_parallel_tool_use: true },
    });
    expect(sentTo('/v1/messages').json.tool_choice).toEqual({
      type: 'tool',
      name: 'web_search',
      disable_parallel_tool_use: true,
    });

    await client().messages.create({
      model: 'acme/claude',
      max_tokens: 1024,
      messages: user('search: any'),
      tools: [WEB_SEARCH],
      tool_choice: { type: 'any' },
    });
    expect(sentTo('/v1/messages').json.tool_choice).toEqual({ type: 'any' });
  });

  it('keeps the tools through a :thinking variant (the request copied on its way)', async () => {
    await client().messages.create({
      model: 'acme/claude:thinking',
      max_tokens: 4096,
      messages: user('search: thinking'),
      tools: [WEB_SEARCH, WEATHER],
    });
    const sent = sentTo('/v1/messages').json;
    expect(sent.thinking?.type).toBe('enabled');
    expect(sent.tools).toEqual([WEB_SEARCH, WEATHER_SENT]);
  });

  it('streams the server tool blocks in place (input_json_delta, the result block, citations)', async () => {
    const stream = client().messages.stream({
      model: 'acme/claude',
      max_tokens: 1024,
      messages: user('search: when was Claude Shannon born?'),
      tools: [WEB_SEARCH],
    });
    const final = await stream.finalMessage();
    expect(sentTo('/v1/messages').json.tools).toEqual([WEB_SEARCH]);
    const recorded = fixture('anthropic/web-search-stream.sse')
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)));
    const result = recorded.find((e) => e.content_block?.type === 'web_search_tool_result').content_block;
    const citation = recorded.find((e) => e.delta?.type === 'citations_delta').delta.citation;
    expect(final.content).toEqual([
      { type: 'text', text: "I'll search for when Claude Shannon was born." },
      {
        type: 'server_tool_use',
        id: 'srvtoolu_014hJH82Qum7Td6UV8gDXThB',
        name: 'web_search',
        input: { query: 'claude shannon birth date' },
      },
      result,
      {
        type: 'text',
        text: 'Based on the search results, Claude Shannon was born on April 30, 1916, in Petoskey, Michigan',
        citations: [citation],
      },
    ]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.server_tool_use).toEqual({ web_search_requests: 1, web_fetch_requests: 0 });

    // The events as written: each block opened, filled and closed in order, the server tool's
    // input as input_json_delta on its own block.
    const res = await fetch(`${c.gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': c.key, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'acme/claude',
        max_tokens: 1024,
        stream: true,
        messages: user('search: raw'),
        tools: [WEB_SEARCH],
      }),
    });
    const events = (await res.text())
      .split('\n\n')
      .filter((e) => e.startsWith('event: '))
      .map((e) => JSON.parse(e.split('\n')[1]!.slice(6)));
    const starts = events.filter((e) => e.type === 'content_block_start');
    expect(starts.map((e) => [e.index, e.content_block.type])).toEqual([
      [0, 'text'],
      [1, 'server_tool_use'],
      [2, 'web_search_tool_result'],
      [3, 'text'],
    ]);
    expect(starts[1].content_block).toEqual({
      type: 'server_tool_use',
      id: 'srvtoolu_014hJH82Qum7Td6UV8gDXThB',
      name: 'web_search',
      input: {},
    });
    const json = events
      .filter((e) => e.type === 'content_block_delta' && e.delta.type === 'input_json_delta')
      .map((e) => {
        expect(e.index).toBe(1);
        return e.delta.partial_json;
      })
      .join('');
    expect(JSON.parse(json)).toEqual({ query: 'claude shannon birth date' });
    const stops = events.filter((e) => e.type === 'content_block_stop').map((e) => e.index);
    expect(stops).toEqual([0, 1, 2, 3]);
    const delta = events.find((e) => e.type === 'message_delta');
    expect(delta.usage.server_tool_use).toEqual({ web_search_requests: 1, web_fetch_requests: 0 });
  });

  it('replays the server tool blocks of an earlier answer unchanged in the next turn', async () => {
    const first = await client().messages.create({
      model: 'acme/claude',
      max_tokens: 1024,
      messages: user('search: when was Claude Shannon born?'),
      tools: [WEB_SEARCH],
    });
    const history = [
      ...user('search: when was Claude Shannon born?'),
      { role: 'assistant' as const, content: first.content },
      ...user('And where did he work?'),
    ];
    await client().messages.create({
      model: 'acme/claude',
      max_tokens: 1024,
      messages: history,
      tools: [WEB_SEARCH],
    });
    const sent = sentTo('/v1/messages').json;
    expect(sent.messages).toEqual([
      user([{ type: 'text', text: 'search: when was Claude Shannon born?' }])[0],
      { role: 'assistant', content: SEARCH.content },
      user([{ type: 'text', text: 'And where did he work?' }])[0],
    ]);

    // The streamed answer, sent back as the SDK put it together, goes back as it is too.
    const streamed = await client()
      .messages.stream({
        model: 'acme/claude',
        max_tokens: 1024,
        messages: user('search: streamed'),
        tools: [WEB_SEARCH],
      })
      .finalMessage();
    await client().messages.create({
      model: 'acme/claude',
      max_tokens: 1024,
      messages: [
        ...user('search: streamed'),
        { role: 'assistant', content: streamed.content },
        ...user('ok'),
      ],
      tools: [WEB_SEARCH],
    });
    expect(sentTo('/v1/messages').json.messages[1]).toEqual({
      role: 'assistant',
      content: JSON.parse(JSON.stringify(streamed.content)),
    });
  });
});

describe('Anthropic-defined client tools (bash, text editor)', () => {
  it('round-trips a bash tool_use: tools unchanged, tool_use out, tool_result back', async () => {
    const tools = [BASH, EDITOR, WEATHER];
    const r = await client().messages.create({
      model: 'acme/claude',
      max_tokens: 1024,
      messages: user('bash: list the files'),
      tools,
    });
    expect(sentTo('/v1/messages').json.tools).toEqual([BASH, EDITOR, WEATHER_SENT]);
    expect(r.stop_reason).toBe('tool_use');
    expect(r.content).toEqual(BASH_ANSWER.content);

    await client().messages.create({
      model: 'acme/claude',
      max_tokens: 1024,
      messages: [
        ...user('bash: list the files'),
        { role: 'assistant', content: r.content },
        user([{ type: 'tool_result', tool_use_id: 'toolu_01BashLs7x', content: 'total 0\nREADME.md' }])[0]!,
      ],
      tools,
      tool_choice: { type: 'tool', name: 'bash' },
    });
    const sent = sentTo('/v1/messages').json;
    expect(sent.tools).toEqual([BASH, EDITOR, WEATHER_SENT]);
    expect(sent.tool_choice).toEqual({ type: 'tool', name: 'bash' });
    expect(sent.messages.slice(1)).toEqual([
      { role: 'assistant', content: BASH_ANSWER.content },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01BashLs7x',
            content: [{ type: 'text', text: 'total 0\nREADME.md' }],
          },
        ],
      },
    ]);
  });
});

describe('never to a non-Anthropic upstream', () => {
  const noServerTools = (body: string) => {
    for (const s of ['web_search', 'bash', 'str_replace_based_edit_tool', 'srvtoolu_', 'encrypted_content'])
      expect(body).not.toContain(s);
  };
  const history = [
    ...user('search: when was Claude Shannon born?'),
    { role: 'assistant' as const, content: SEARCH.content },
    ...user('thanks'),
  ];

  it('drops the server tools, a choice naming one and the server blocks for an OpenAI-compatible upstream', async () => {
    const r = await client().messages.create({
      model: 'acme/gpt',
      max_tokens: 100,
      messages: history,
      tools: [WEB_SEARCH, WEATHER, BASH],
      tool_choice: { type: 'tool', name: 'web_search' },
    });
    expect(r.content[0]).toMatchObject({ type: 'text' });
    const sent = sentTo('/v1/chat/completions');
    noServerTools(sent.body);
    expect(sent.json.tools).toEqual([
      {
        type: 'function',
        function: { name: 'get_weather', description: 'Weather of a city', parameters: WEATHER.input_schema },
      },
    ]);
    expect(sent.json).not.toHaveProperty('tool_choice');
    // The text of the answer with the search stays, as one assistant turn: the text before the
    // search and the answer after it a line apart, not run together.
    expect(sent.json.messages[1]).toEqual({
      role: 'assistant',
      content:
        "I'll search for when Claude Shannon was born.\nBased on the search results, Claude Shannon was born on April 30, 1916, in Petoskey, Michigan",
    });

    // Only server tools: none sent at all.
    await client().messages.create({
      model: 'acme/gpt',
      max_tokens: 100,
      messages: user('hello'),
      tools: [WEB_SEARCH],
      tool_choice: { type: 'any' },
    });
    const bare = sentTo('/v1/chat/completions');
    noServerTools(bare.body);
    expect(bare.json).not.toHaveProperty('tools');
    expect(bare.json).not.toHaveProperty('tool_choice');
  });

  it('drops them on a fallback from an Anthropic upstream that failed', async () => {
    const before = up.requests.length;
    await client().messages.create({
      model: 'acme/claude',
      max_tokens: 100,
      messages: [...history.slice(0, 2), ...user('overloaded')],
      tools: [WEB_SEARCH, WEATHER],
      // OpenRouter's skin of fallbacks, which the SDK's types do not know.
      ...({ fallbacks: [{ model: 'acme/gpt' }] } as object),
    });
    const tried = up.requests.slice(before);
    // The Anthropic upstream (tried again on its 529) got them; the fallback did not.
    const last = tried.pop()!;
    expect(last.path).toBe('/v1/chat/completions');
    expect(tried.length).toBeGreaterThan(0);
    for (const t of tried) {
      expect(t.path).toBe('/v1/messages');
      expect(t.json.tools).toEqual([WEB_SEARCH, WEATHER_SENT]);
      expect(t.json.messages[1].content).toEqual(SEARCH.content);
    }
    noServerTools(last.body);
  });
});

describe('an OpenAI client served by an answer with server tool blocks', () => {
  const openai = () => openaiClient(c);
  const TEXT =
    "I'll search for when Claude Shannon was born.Based on the search results, Claude Shannon was born on April 30, 1916, in Petoskey, Michigan";

  it('gets the text around them, and nothing of the blocks', async () => {
    const r = await openai().chat.completions.create({
      model: 'acme/claude',
      messages: [{ role: 'user', content: 'search: when was Claude Shannon born?' }],
    });
    expect(r.choices[0]!.message.content).toBe(TEXT);
    expect(JSON.stringify(r)).not.toMatch(/srvtoolu_|web_search|encrypted_content|server_tool_use/);

    const res = await fetch(`${c.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'acme/claude',
        stream: true,
        messages: [{ role: 'user', content: 'search: streamed' }],
      }),
    });
    const raw = await res.text();
    expect(raw).not.toMatch(/srvtoolu_|web_search|encrypted_content|server_tool_use/);
    const chunks = raw
      .split('\n\n')
      .filter((e) => e.startsWith('data: ') && e !== 'data: [DONE]')
      .map((e) => JSON.parse(e.slice(6)));
    // No chunk that says nothing: each has a role, text, or the finish.
    for (const ch of chunks)
      for (const choice of ch.choices)
        expect(Object.keys(choice.delta).length > 0 || choice.finish_reason !== null).toBe(true);
    expect(chunks.map((ch) => ch.choices[0]?.delta?.content ?? '').join('')).toBe(TEXT);
  });
});
