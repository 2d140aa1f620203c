import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  anthropicChannel,
  type ChatGateway,
  fixtureJson,
  geminiChannel,
  model,
  openaiChannel,
  startChatGateway,
} from './chat-helpers.js';

/**
 * Messages without content (decisions.md: "Content is a string or an array of parts"). `null` is
 * an assistant's only (beside its tool calls): elsewhere it is a 400 naming the message's content.
 * A user turn with nothing in it (`""`, `[]`, empty text parts) is never dropped on the way to an
 * Anthropic or Gemini upstream, which refuse an empty message themselves: dropping it made the
 * turn before it the end of the conversation (an assistant prefill that Anthropic continued, a
 * trailing `model` turn for Gemini, or no message at all). Such an upstream is skipped without a
 * call; another upstream of the model that takes the message serves it, and with none the client
 * gets the 400 naming the message. The fake upstreams answer as the providers do.
 */
const GEMINI_PATH = '/v1beta/models/gemini-2.5-flash:generateContent';
let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/messages': { json: fixtureJson('anthropic/chat.json') },
    [`POST ${GEMINI_PATH}`]: { json: fixtureJson('gemini/chat.json') },
    'POST /v1/chat/completions': { json: fixtureJson('openai/chat.json') },
  });
  c = await startChatGateway({
    channels: [
      anthropicChannel('an', up, { 'acme/claude': 'claude-sonnet-4-5', 'acme/both': 'claude-sonnet-4-5' }),
      geminiChannel('ge', up, { 'acme/gem': 'gemini-2.5-flash' }),
      openaiChannel('oa', up, ['acme/gpt', 'acme/both']),
    ],
    models: [model('acme/claude'), model('acme/gem'), model('acme/gpt'), model('acme/both')],
    gateway: { retry_base_ms: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});
beforeEach(() => {
  up.requests.length = 0;
});

const chat = (body: Record<string, unknown>) =>
  c.gw.call('POST', '/v1/chat/completions', { token: c.key, body });
const HISTORY = [
  { role: 'user', content: 'hi' },
  { role: 'assistant', content: 'Hello' },
];
const EMPTY: unknown[] = ['', [], [{ type: 'text', text: '' }]];

describe('content: null', () => {
  it('is a 400 naming the content on a user, system, developer or tool message, and nothing is sent', async () => {
    const cases: Array<[unknown[], string]> = [
      [[...HISTORY, { role: 'user', content: null }], 'messages.2.content'],
      [
        [
          { role: 'system', content: null },
          { role: 'user', content: 'hi' },
        ],
        'messages.0.content',
      ],
      [
        [
          { role: 'developer', content: null },
          { role: 'user', content: 'hi' },
        ],
        'messages.0.content',
      ],
      [
        [
          { role: 'user', content: 'weather?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'w', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'call_1', content: null },
        ],
        'messages.2.content',
      ],
    ];
    for (const model of ['acme/gpt', 'acme/claude', 'acme/gem']) {
      for (const [messages, param] of cases) {
        const r = await chat({ model, messages });
        expect(r.status, `${model} ${param}`).toBe(400);
        expect(r.body.error).toMatchObject({ code: 400, type: 'invalid_request_error', param });
        expect(r.body.error.message).toMatch(new RegExp(`^${param.replaceAll('.', '\\.')}: `));
      }
    }
    const r = await chat({ model: 'acme/gpt', messages: [...HISTORY, { role: 'user', content: null }] });
    expect(r.body.error.message).toBe(
      'messages.2.content: must be a string, or an array of parts (null is for assistant messages only)',
    );
    expect(up.requests).toEqual([]);
  });

  it('a user message without content is a 400 too', async () => {
    const r = await chat({ model: 'acme/gpt', messages: [...HISTORY, { role: 'user' }] });
    expect(r.status).toBe(400);
    expect(r.body.error.param).toBe('messages.2.content');
    expect(up.requests).toEqual([]);
  });

  it("stays an assistant's, beside its tool calls, and reaches an OpenAI-compatible upstream as sent", async () => {
    const messages = [
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'w', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '18C' },
    ];
    const r = await chat({ model: 'acme/gpt', messages });
    expect(r.status).toBe(200);
    expect(up.requests.at(-1)!.json.messages[1].content).toBeNull();
  });
});

describe('a user turn with nothing in it', () => {
  it('is a 400 naming it for a model served only by Anthropic, without a call', async () => {
    for (const content of EMPTY) {
      for (const stream of [false, true]) {
        const r = await chat({
          model: 'acme/claude',
          stream,
          messages: [...HISTORY, { role: 'user', content }],
        });
        expect(r.status, JSON.stringify(content)).toBe(400);
        expect(r.body.error).toMatchObject({
          code: 400,
          type: 'invalid_request_error',
          param: 'messages.2.content',
        });
        expect(r.body.error.message).toBe(
          'messages.2.content: empty; Anthropic upstreams refuse an empty message',
        );
      }
    }
    // Alone, it used to leave Anthropic `messages: []`.
    const alone = await chat({ model: 'acme/claude', messages: [{ role: 'user', content: '' }] });
    expect(alone.status).toBe(400);
    expect(alone.body.error.param).toBe('messages.0.content');
    expect(up.requests).toEqual([]);
  });

  it('whitespace alone is empty for Anthropic, which refuses a blank text block', async () => {
    for (const content of [' \n', [{ type: 'text', text: '\t' }]]) {
      const r = await chat({ model: 'acme/claude', messages: [...HISTORY, { role: 'user', content }] });
      expect(r.status).toBe(400);
      expect(r.body.error.param).toBe('messages.2.content');
    }
    expect(up.requests).toEqual([]);
  });

  it('holding only parts Anthropic cannot take, as the last user turn, is refused there too, naming them', async () => {
    const audio = { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } };
    const r = await chat({
      model: 'acme/claude',
      messages: [...HISTORY, { role: 'user', content: [audio] }],
    });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toBe(
      'messages.2.content: holds nothing Anthropic upstreams take (input_audio parts are not sent to them)',
    );
    expect(up.requests).toEqual([]);
    // Followed by another user turn it is left out, as such parts are beside others.
    const followed = await chat({
      model: 'acme/claude',
      messages: [...HISTORY, { role: 'user', content: [audio] }, { role: 'user', content: 'and?' }],
    });
    expect(followed.status).toBe(200);
    expect(up.requests.at(-1)!.json.messages.at(-1)).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'and?' }],
    });
  });

  it('is a 400 naming it for a model served only by Gemini, without a call', async () => {
    for (const content of EMPTY) {
      const r = await chat({ model: 'acme/gem', messages: [...HISTORY, { role: 'user', content }] });
      expect(r.status, JSON.stringify(content)).toBe(400);
      expect(r.body.error).toMatchObject({ code: 400, param: 'messages.2.content' });
      expect(r.body.error.message).toBe(
        'messages.2.content: empty; Gemini upstreams refuse an empty message',
      );
    }
    expect(up.requests).toEqual([]);
  });

  it('goes to the model’s other upstream that takes it (OpenAI-compatible), as sent', async () => {
    for (const content of EMPTY) {
      const r = await chat({
        model: 'acme/both',
        provider: { order: ['an', 'oa'] },
        messages: [...HISTORY, { role: 'user', content }],
      });
      expect(r.status).toBe(200);
      expect(r.body.provider).toBe('oa');
      expect(r.headers.get('x-modelgate-attempts')).toBe('oa/acme/both=ok');
      expect(up.requests.map((q) => q.path)).toEqual(['/v1/chat/completions']);
      expect(up.requests[0]!.json.messages[2]).toEqual({ role: 'user', content });
      up.requests.length = 0;
    }
  });

  it('goes to a fallback model when the model has no upstream that takes it', async () => {
    const r = await chat({
      model: 'acme/claude',
      models: ['acme/gpt'],
      messages: [...HISTORY, { role: 'user', content: '' }],
    });
    expect(r.status).toBe(200);
    expect(r.body.model).toBe('acme/gpt');
    expect(up.requests.map((q) => q.path)).toEqual(['/v1/chat/completions']);
  });
});

describe('a conversation of system messages only', () => {
  it('is a 400 naming messages for Anthropic and Gemini, which refuse an empty conversation, without a call', async () => {
    for (const [m, provider] of [
      ['acme/claude', 'Anthropic'],
      ['acme/gem', 'Gemini'],
    ]) {
      const r = await chat({ model: m, messages: [{ role: 'system', content: 'Be brief.' }] });
      expect(r.status, m).toBe(400);
      expect(r.body.error).toMatchObject({
        code: 400,
        param: 'messages',
        message: `messages: no user or assistant message; ${provider} upstreams need one beside the system prompt`,
      });
    }
    expect(up.requests).toHaveLength(0);
  });

  it('goes as sent to the model’s OpenAI-compatible upstream, which takes it', async () => {
    const r = await chat({
      model: 'acme/both',
      provider: { order: ['an', 'oa'] },
      messages: [{ role: 'system', content: 'Be brief.' }],
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-modelgate-attempts')).toBe('oa/acme/both=ok');
    expect(up.requests.map((q) => q.path)).toEqual(['/v1/chat/completions']);
    expect(up.requests[0]!.json.messages).toEqual([{ role: 'system', content: 'Be brief.' }]);
  });
});

describe('an empty assistant turn', () => {
  it('is left out for Anthropic and Gemini (both refuse an empty turn), and the user turns around it join', async () => {
    const messages = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: '' },
      { role: 'user', content: 'anyone?' },
    ];
    expect((await chat({ model: 'acme/claude', messages })).status).toBe(200);
    expect(up.requests.at(-1)!.json.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'hi' },
          { type: 'text', text: 'anyone?' },
        ],
      },
    ]);
    expect((await chat({ model: 'acme/gem', messages })).status).toBe(200);
    expect(up.requests.at(-1)!.json.contents).toEqual([
      { role: 'user', parts: [{ text: 'hi' }, { text: 'anyone?' }] },
    ]);
  });
});

describe('/v1/messages', () => {
  it('an empty user turn for an Anthropic upstream is a 400 in Anthropic’s shape, without a call', async () => {
    for (const content of ['', []]) {
      const r = await c.gw.call('POST', '/v1/messages', {
        token: c.key,
        body: {
          model: 'acme/claude',
          max_tokens: 100,
          messages: [
            { role: 'user', content: 'hi' },
            { role: 'assistant', content: 'Hello' },
            { role: 'user', content },
          ],
        },
      });
      expect(r.status, JSON.stringify(content)).toBe(400);
      expect(r.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      expect(r.body.error.message).toContain('Anthropic upstreams refuse an empty message');
    }
    expect(up.requests).toEqual([]);
  });
});
