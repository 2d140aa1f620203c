import type Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, type ReceivedRequest, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  anthropicChannel,
  type ChatGateway,
  fixture,
  fixtureJson,
  geminiChannel,
  model,
  sse,
  startChatGateway,
} from './chat-helpers.js';
import {
  crlfSteps,
  GEMINI_FORMAT,
  openrouterChannel,
  openrouterChunk,
  reasoningModel,
  SIG_LONDON,
  SIG_PARIS,
  SIG_TEXT,
  WEATHER_TOOL,
} from './reasoning-fixtures.js';
import { anthropicClient } from './sdk-clients.js';

/**
 * Gemini's thought signatures through the Anthropic Messages ingress (/v1/messages), with the
 * official @anthropic-ai/sdk as the client (as Claude Code): Gemini 3 puts a `thoughtSignature` on
 * the first functionCall part of each step (and on text), which it must get back on the same part
 * or it loses its reasoning (and, without Google's dummy signature, answers 400). The client gets
 * them in its thinking blocks' `signature`, sends the turn back as it got it, and the next request
 * to Gemini carries each signature on its part again, streamed or not. Such a thinking block never
 * reaches Anthropic as signed thinking (Anthropic refuses a foreign signature), and an Anthropic
 * signature never reaches Gemini.
 */

const SIG_TIME = 'CtUBAdHtim9kP2qW/7vB4nE1sJ8yZ+hR3oT6uLmXc0aFd5gKiN9eQ2wYpSbV4r==';
const SKIP = 'skip_thought_signature_validator';

const TOOLS: Anthropic.Tool[] = [
  WEATHER_TOOL,
  {
    name: 'get_time',
    description: 'Local time in a time zone',
    input_schema: { type: 'object', properties: { tz: { type: 'string' } }, required: ['tz'] },
  },
];

/** The function the last function response of the request answers, if any. */
const answered = (req: ReceivedRequest): string | undefined => {
  const parts: Array<Record<string, any>> = req.json.contents.at(-1).parts;
  return parts.find((p) => p.functionResponse)?.functionResponse.name;
};
/** The text of the request's last turn. */
const lastText = (req: ReceivedRequest): string =>
  req.json.contents
    .at(-1)
    .parts.map((p: { text?: string }) => p.text ?? '')
    .join('');

/** OpenRouter in front of Gemini 3: the signature as a `reasoning_details` item with the call's id. */
const OPENROUTER_GEMINI = {
  id: 'gen-1764552000-Xq3TvJ0cQ1uF9m2wLk7s',
  object: 'chat.completion',
  created: 1764552000,
  model: 'google/gemini-3-flash-preview',
  provider: 'Google AI Studio',
  choices: [
    {
      index: 0,
      logprobs: null,
      finish_reason: 'tool_calls',
      native_finish_reason: 'STOP',
      message: {
        role: 'assistant',
        content: '',
        refusal: null,
        reasoning: '**Planning the weather lookup**',
        reasoning_details: [
          {
            type: 'reasoning.text',
            text: '**Planning the weather lookup**',
            format: GEMINI_FORMAT,
            index: 0,
          },
          {
            type: 'reasoning.encrypted',
            data: SIG_PARIS,
            id: 'tool_get_weather_Xq3TvJ0cQ1uF9m2w',
            format: GEMINI_FORMAT,
            index: 0,
          },
        ],
        tool_calls: [
          {
            id: 'tool_get_weather_Xq3TvJ0cQ1uF9m2w',
            index: 0,
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
    },
  ],
  usage: { prompt_tokens: 74, completion_tokens: 139, total_tokens: 213 },
};

/**
 * Streamed text answers whose signature comes on a part that still carries text, not on an empty
 * part of its own (the user text picks one): on the last such part (SPLIT), and in the middle of
 * a text that a signed call follows (TEXT_CALL).
 */
const SPLIT = 'Just the weather in Paris and London?';
const SPLIT_TEXT = 'Paris is 18°C and sunny; London is 12°C with light rain.';
const TEXT_CALL = 'Weather in Paris, then London?';
const TEXT_CALL_TEXT = 'Paris is 18°C and sunny. Checking London as well, one moment.';
const SIGNED_TEXT = {
  type: 'reasoning.encrypted',
  data: SIG_TEXT,
  id: null,
  format: GEMINI_FORMAT,
  index: 0,
};
/** OpenRouter in front of Gemini 3, streamed: the text's signature on the delta of its last text. */
const orChunk = (delta: object, finish: string | null = null) =>
  openrouterChunk(delta, finish, { id: 'gen-1764552100-Lm2QpR8sT4vW6xY0zA1b', created: 1764552100 });
const OPENROUTER_SPLIT_STREAM = sse([
  orChunk({
    role: 'assistant',
    content: 'Paris is 18°C and sunny; Lon',
    reasoning: null,
    reasoning_details: [],
  }),
  orChunk({
    role: 'assistant',
    content: 'don is 12°C with light rain.',
    reasoning: null,
    reasoning_details: [SIGNED_TEXT],
  }),
  orChunk({ role: 'assistant', content: '', reasoning: null, reasoning_details: [] }, 'stop'),
]);

let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1beta/models/gemini-3-flash-preview:generateContent': (req) => {
      const last = answered(req);
      const file =
        last === 'get_time' ? 'gemini3-final' : last === 'get_weather' ? 'gemini3-step2' : 'gemini3-tools';
      return { json: fixtureJson(`gemini/${file}.json`) };
    },
    'POST /v1beta/models/gemini-3-flash-preview:streamGenerateContent': (req) => {
      const asked = lastText(req);
      const file =
        asked === SPLIT
          ? 'gemini3-signed-text-stream'
          : asked === TEXT_CALL
            ? 'gemini3-signed-text-call-stream'
            : answered(req)
              ? 'gemini3-final-stream'
              : 'gemini3-tools-stream';
      return { sse: crlfSteps(fixture(`gemini/${file}.sse`)) };
    },
    'POST /v1beta/models/gemini-3-pro-preview:generateContent': {
      status: 503,
      json: fixtureJson('gemini/error-503.json'),
    },
    'POST /v1/messages': { json: fixtureJson('anthropic/chat.json') },
    'POST /v1/chat/completions': (req) =>
      req.json.stream ? { sse: OPENROUTER_SPLIT_STREAM } : { json: OPENROUTER_GEMINI },
  });
  c = await startChatGateway({
    channels: [
      geminiChannel('ge', up, {
        'acme/gem3': 'gemini-3-flash-preview',
        'acme/gem3-down': 'gemini-3-pro-preview',
      }),
      openrouterChannel(up, { 'acme/or-gem3': 'google/gemini-3-flash-preview' }),
      anthropicChannel('claude', up, { 'acme/claude': 'claude-sonnet-4-5' }),
    ],
    models: [
      reasoningModel('acme/gem3'),
      reasoningModel('acme/gem3-down'),
      model('acme/claude', { max_completion_tokens: 64_000 }),
      reasoningModel('acme/or-gem3'),
    ],
    gateway: { retry_base_ms: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const client = () => anthropicClient(c);
const sentTo = (path: string) => up.requests.filter((r) => r.path.startsWith(path)).at(-1)!;
const sentToGemini = () => sentTo('/v1beta/models/gemini-3-flash-preview:').json;
const params = (messages: Anthropic.MessageParam[], model = 'acme/gem3') => ({
  model,
  max_tokens: 4000,
  thinking: { type: 'enabled' as const, budget_tokens: 1024 },
  tools: TOOLS,
  messages,
});
const create = (messages: Anthropic.MessageParam[], model?: string) =>
  client().messages.create(params(messages, model));
const stream = (messages: Anthropic.MessageParam[], model?: string) =>
  client().messages.stream(params(messages, model)).finalMessage();

const QUESTION: Anthropic.MessageParam = {
  role: 'user',
  content: 'Weather in Paris and London, and the time in Paris?',
};
/** The answer as the client sends it back in the next request (Claude Code does so). */
const back = (m: Anthropic.Message): Anthropic.MessageParam => ({
  role: 'assistant',
  content: m.content as Anthropic.ContentBlockParam[],
});
const results = (m: Anthropic.Message, outputs: string[]): Anthropic.MessageParam => ({
  role: 'user',
  content: m.content
    .filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')
    .map((b, i) => ({ type: 'tool_result', tool_use_id: b.id, content: outputs[i]! })),
});
const signatureOf = (m: Anthropic.Message, i: number) => (m.content[i] as Anthropic.ThinkingBlock).signature;

/** Gemini 3's parallel calls, as the model turn of the next request must hold them. */
const PARALLEL_CALLS = {
  role: 'model',
  parts: [
    { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIG_PARIS },
    { functionCall: { name: 'get_weather', args: { city: 'London' } } },
  ],
};

describe('Gemini thought signatures, not streamed', () => {
  it('ride in thinking blocks and go back on their parts, step after step', async () => {
    const a1 = await create([QUESTION]);
    // The call's signature rides in the thinking block before it, in the gateway's form.
    expect(a1.content).toMatchObject([
      { type: 'thinking', thinking: expect.stringContaining('Planning the weather lookup') },
      { type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', name: 'get_weather', input: { city: 'London' } },
    ]);
    expect(a1.content).toHaveLength(3);
    expect(signatureOf(a1, 0)).toMatch(/^mgr1\.[A-Za-z0-9_-]+$/);

    const turn2 = [QUESTION, back(a1), results(a1, ['18°C, sunny', '12°C, light rain'])];
    const a2 = await create(turn2);
    expect(sentToGemini().contents[1]).toEqual(PARALLEL_CALLS);
    expect(a2.content).toMatchObject([
      { type: 'thinking', thinking: expect.stringContaining('Checking the local time') },
      { type: 'tool_use', name: 'get_time', input: { tz: 'Europe/Paris' } },
    ]);

    // A sequential step: each step's call carries its own signature.
    const a3 = await create([...turn2, back(a2), results(a2, ['14:05'])]);
    const sent = sentToGemini();
    expect(sent.contents[1]).toEqual(PARALLEL_CALLS);
    expect(sent.contents[3]).toEqual({
      role: 'model',
      parts: [
        { functionCall: { name: 'get_time', args: { tz: 'Europe/Paris' } }, thoughtSignature: SIG_TIME },
      ],
    });
    expect(JSON.stringify(sent)).not.toContain(SKIP);

    // A signature on text (no thought part before it) rides in a thinking block of its own.
    expect(a3.content).toEqual([
      { type: 'thinking', thinking: '', signature: expect.stringMatching(/^mgr1\./) },
      { type: 'text', text: expect.stringContaining('Paris is 18°C') },
    ]);
    await create([
      ...turn2,
      back(a2),
      results(a2, ['14:05']),
      back(a3),
      { role: 'user', content: 'Thanks!' },
    ]);
    expect(sentToGemini().contents[5]).toEqual({
      role: 'model',
      parts: [{ text: expect.stringContaining('Paris is 18°C'), thoughtSignature: SIG_TEXT }],
    });
  });
});

describe('Gemini thought signatures, streamed', () => {
  it('arrive as signature_delta and go back on their parts', async () => {
    const events: string[] = [];
    const s = client().messages.stream(params([QUESTION]));
    s.on('streamEvent', (ev) => {
      if (ev.type === 'content_block_delta') events.push(`${ev.index}:${ev.delta.type}`);
      if (ev.type === 'content_block_stop') events.push(`${ev.index}:stop`);
    });
    const a1 = await s.finalMessage();
    expect(a1.content).toMatchObject([
      { type: 'thinking', thinking: expect.stringContaining('Planning the weather lookup') },
      { type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', name: 'get_weather', input: { city: 'London' } },
    ]);
    expect(a1.content).toHaveLength(3);
    expect(signatureOf(a1, 0)).toMatch(/^mgr1\./);
    // As Anthropic's: the signature last, just before the thinking block's stop.
    expect(events.slice(0, 3)).toEqual(['0:thinking_delta', '0:signature_delta', '0:stop']);

    const turn2 = [QUESTION, back(a1), results(a1, ['18°C, sunny', '12°C, light rain'])];
    const a2 = await stream(turn2);
    expect(sentToGemini().contents[1]).toEqual(PARALLEL_CALLS);
    expect(JSON.stringify(sentToGemini())).not.toContain(SKIP);

    // Gemini 3 ends a streamed text answer with an empty part carrying the signature.
    expect(a2.content).toEqual([
      { type: 'text', text: 'Paris is 18°C and sunny; London is 12°C with light rain.' },
      { type: 'thinking', thinking: '', signature: expect.stringMatching(/^mgr1\./) },
    ]);
    await stream([...turn2, back(a2), { role: 'user', content: 'Thanks!' }]);
    expect(sentToGemini().contents[3]).toEqual({
      role: 'model',
      parts: [
        { text: 'Paris is 18°C and sunny; London is 12°C with light rain.', thoughtSignature: SIG_TEXT },
      ],
    });
  });
});

describe('a Gemini signature that comes with text, streamed', () => {
  const ask = (text: string): Anthropic.MessageParam => ({ role: 'user', content: text });
  const THANKS = ask('Thanks!');

  it('does not cut the text in two: it rides after the text and goes back on its part', async () => {
    const a = await stream([ask(SPLIT)]);
    expect(a.content).toEqual([
      { type: 'text', text: SPLIT_TEXT },
      { type: 'thinking', thinking: '', signature: expect.stringMatching(/^mgr1\./) },
    ]);
    await stream([ask(SPLIT), back(a), THANKS]);
    expect(sentToGemini().contents[1]).toEqual({
      role: 'model',
      parts: [{ text: SPLIT_TEXT, thoughtSignature: SIG_TEXT }],
    });
  });

  it('rides before the next tool_use, with that call’s signature, the text going on in one block', async () => {
    const a = await stream([ask(TEXT_CALL)]);
    expect(a.content).toEqual([
      { type: 'text', text: TEXT_CALL_TEXT },
      { type: 'thinking', thinking: '', signature: expect.stringMatching(/^mgr1\./) },
      { type: 'tool_use', id: expect.any(String), name: 'get_weather', input: { city: 'London' } },
    ]);
    await stream([ask(TEXT_CALL), back(a), results(a, ['12°C, light rain'])]);
    expect(sentToGemini().contents[1]).toEqual({
      role: 'model',
      parts: [
        { text: TEXT_CALL_TEXT, thoughtSignature: SIG_TEXT },
        { functionCall: { name: 'get_weather', args: { city: 'London' } }, thoughtSignature: SIG_LONDON },
      ],
    });
  });

  it('through OpenRouter (reasoning_details on the delta with text) alike', async () => {
    const a = await stream([ask(SPLIT)], 'acme/or-gem3');
    expect(a.content).toEqual([
      { type: 'text', text: SPLIT_TEXT },
      { type: 'thinking', thinking: '', signature: expect.stringMatching(/^mgr1\./) },
    ]);
    await create([ask(SPLIT), back(a), THANKS], 'acme/or-gem3');
    const turn = sentTo('/v1/chat/completions').json.messages[1];
    expect(turn.content).toBe(SPLIT_TEXT);
    expect(turn.reasoning_details).toContainEqual(SIGNED_TEXT);
  });

  it('cut in two by an earlier answer, goes back as one text (no line break at the cut)', async () => {
    const a = await stream([ask(SPLIT)]);
    const signed = a.content[1] as Anthropic.ThinkingBlockParam;
    const cut = (between: Anthropic.ThinkingBlockParam): Anthropic.MessageParam => ({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Paris is 18°C and sunny; Lon' },
        between,
        { type: 'text', text: 'don is 12°C with light rain.' },
      ],
    });
    await create([ask(SPLIT), cut(signed), THANKS]);
    expect(sentToGemini().contents[1]).toEqual({
      role: 'model',
      parts: [{ text: SPLIT_TEXT, thoughtSignature: SIG_TEXT }],
    });
    // A thinking block with thinking in it stands between two passages: they stay a line apart.
    await create([ask(SPLIT), cut({ ...signed, thinking: 'London next.' }), THANKS]);
    expect(sentToGemini().contents[1].parts[0].text).toBe(
      'Paris is 18°C and sunny; Lon\ndon is 12°C with light rain.',
    );
  });
});

describe('Gemini thought signatures through OpenRouter (reasoning_details)', () => {
  it('go back to it as the reasoning_details it gave', async () => {
    const a1 = await create([QUESTION], 'acme/or-gem3');
    expect(a1.content).toEqual([
      {
        type: 'thinking',
        thinking: '**Planning the weather lookup**',
        signature: expect.stringMatching(/^mgr1\./),
      },
      {
        type: 'tool_use',
        id: 'tool_get_weather_Xq3TvJ0cQ1uF9m2w',
        name: 'get_weather',
        input: { city: 'Paris' },
      },
    ]);
    await create([QUESTION, back(a1), results(a1, ['18°C'])], 'acme/or-gem3');
    const turn = sentTo('/v1/chat/completions').json.messages[1];
    expect(turn.tool_calls[0].id).toBe('tool_get_weather_Xq3TvJ0cQ1uF9m2w');
    expect(turn.reasoning_details).toEqual([
      {
        type: 'reasoning.text',
        text: '**Planning the weather lookup**',
        format: GEMINI_FORMAT,
        index: 0,
      },
      OPENROUTER_GEMINI.choices[0]!.message.reasoning_details[1],
    ]);
  });
});

describe('signatures across providers', () => {
  it('a Gemini signature never reaches Anthropic as signed thinking (client switched models)', async () => {
    const a1 = await create([QUESTION]);
    const envelope = signatureOf(a1, 0);
    const [paris, london] = a1.content.filter((b) => b.type === 'tool_use');
    const toolResults = results(a1, ['18°C', '12°C']);
    // As Gemini gave it, and interleaved with text (a turn Anthropic would otherwise get as sent).
    const interleaved: Anthropic.MessageParam = {
      role: 'assistant',
      content: [
        a1.content[0] as Anthropic.ThinkingBlockParam,
        { type: 'text', text: 'Checking Paris.' },
        paris as Anthropic.ToolUseBlockParam,
        { type: 'thinking', thinking: 'Now London.', signature: envelope },
        { type: 'text', text: 'And London.' },
        london as Anthropic.ToolUseBlockParam,
      ],
    };
    for (const turn of [back(a1), interleaved]) {
      const answer = await create([QUESTION, turn, toolResults], 'acme/claude');
      expect(answer.model).toBe('acme/claude');
      const sent = sentTo('/v1/messages').json;
      expect(JSON.stringify(sent)).not.toContain('mgr1.');
      // A tool turn without its thinking: the adapter asks without thinking, as Anthropic requires.
      expect(sent.thinking).toBeUndefined();
      const blocks: Array<{ type: string }> = sent.messages[1].content;
      expect(blocks.map((b) => b.type)).toEqual(
        turn === interleaved ? ['text', 'tool_use', 'tool_use'] : ['tool_use', 'tool_use'],
      );
    }

    // A turn with server tool blocks goes to Anthropic as it came, but for such a thinking block
    // (nor an unsigned one: Anthropic refuses both).
    const search = {
      type: 'server_tool_use',
      id: 'srvtoolu_01Search',
      name: 'web_search',
      input: { query: 'weather Paris' },
    };
    const found = { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01Search', content: [] };
    const text = { type: 'text', text: 'Paris is sunny.' };
    await create(
      [
        QUESTION,
        {
          role: 'assistant',
          content: [
            a1.content[0],
            { type: 'thinking', thinking: 'Another model’s reasoning.', signature: '' },
            search,
            found,
            text,
          ] as Anthropic.ContentBlockParam[],
        },
        { role: 'user', content: 'And London?' },
      ],
      'acme/claude',
    );
    expect(sentTo('/v1/messages').json.messages[1]).toEqual({
      role: 'assistant',
      content: [search, found, text],
    });
  });

  it('nor on a fallback from Gemini to Anthropic', async () => {
    const a1 = await create([QUESTION]);
    const before = up.requests.length;
    const answer = await client().messages.create({
      ...params([QUESTION, back(a1), results(a1, ['18°C', '12°C'])], 'acme/gem3-down'),
      fallbacks: [{ model: 'acme/claude' }],
    } as Anthropic.MessageCreateParamsNonStreaming);
    expect(answer.model).toBe('acme/claude');
    const tried = up.requests.slice(before);
    expect(tried.some((r) => r.path.includes('gemini-3-pro-preview'))).toBe(true);
    // Gemini (down) got its signature back; Anthropic got none of it.
    const gemini = tried.find((r) => r.path.includes('gemini-3-pro-preview'))!.json;
    expect(gemini.contents[1]).toEqual(PARALLEL_CALLS);
    const sent = sentTo('/v1/messages').json;
    expect(JSON.stringify(sent)).not.toContain('mgr1.');
    expect(sent.messages[1].content.map((b: { type: string }) => b.type)).toEqual(['tool_use', 'tool_use']);
  });

  it('an Anthropic signature never reaches Gemini as a thoughtSignature', async () => {
    const anthropicSig = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds';
    await create([
      QUESTION,
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Paris first.', signature: anthropicSig },
          { type: 'tool_use', id: 'toolu_01Paris', name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01Paris', content: '18°C' }] },
    ]);
    const sent = sentToGemini();
    expect(JSON.stringify(sent)).not.toContain(anthropicSig);
    // Gemini 3 gets Google's stand-in for the signature it never gave.
    expect(sent.contents[1]).toEqual({
      role: 'model',
      parts: [
        {
          functionCall: { id: 'toolu_01Paris', name: 'get_weather', args: { city: 'Paris' } },
          thoughtSignature: SKIP,
        },
      ],
    });
  });

  it('a signature in the gateway’s form that is not well formed is no signature at all', async () => {
    await create(
      [
        QUESTION,
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Paris first.', signature: 'mgr1.not-json' },
            { type: 'tool_use', id: 'toolu_01Paris', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01Paris', content: '18°C' }] },
      ],
      'acme/claude',
    );
    const sent = sentTo('/v1/messages').json;
    expect(sent.messages[1].content.map((b: { type: string }) => b.type)).toEqual(['tool_use']);
  });
});
