import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import {
  type FakeAnswer,
  type FakeHandler,
  type FakeRoutes,
  type FakeUpstream,
  startFakeUpstream,
} from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures');

/** A recorded provider answer, as text (SSE files keep their exact bytes). */
export const fixture = (path: string) => readFileSync(join(FIXTURES, path), 'utf8');
export const fixtureJson = (path: string) => JSON.parse(fixture(path));

/** SSE events split at event boundaries, so the fake writes them one by one. */
export const sseSteps = (text: string): string[] => text.split(/(?<=\n\n)/).filter((s) => s.trim() !== '');

/** A recorded answer, streamed or not: `<name>-stream.sse` or `<name>.json` ('anthropic/tools'). */
export const recordedAnswer = (name: string, stream: boolean): FakeAnswer =>
  stream ? { sse: sseSteps(fixture(`${name}-stream.sse`)) } : { json: fixtureJson(`${name}.json`) };

export const sse = (chunks: unknown[], done = true) => [
  ...chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`),
  ...(done ? ['data: [DONE]\n\n'] : []),
];

export const oaChunk = (delta: object, finish: string | null = null, extra: object = {}) => ({
  id: 'chatcmpl-x',
  object: 'chat.completion.chunk',
  created: 1700000000,
  model: 'up-model',
  choices: [{ index: 0, delta, finish_reason: finish, ...extra }],
});

export const oaCompletion = (content: string, usage = { prompt_tokens: 5, completion_tokens: 2 }) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1700000000,
  model: 'up-model',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
});

export const model = (id: string, o: Record<string, unknown> = {}) => ({
  id,
  context_length: 100_000,
  max_completion_tokens: 4096,
  pricing: { prompt: '0.000001', completion: '0.000002' },
  ...o,
});

/** One event of an Anthropic event stream. */
export const anthropicEvent = (type: string, data: object) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/**
 * 100 input, 1000 read from the cache, 3000 written to it (1000 for five minutes, 2000 for an
 * hour) and 50 output, as Anthropic reports them.
 */
export const ANTHROPIC_CACHED_USAGE = {
  input_tokens: 100,
  cache_creation_input_tokens: 3000,
  cache_read_input_tokens: 1000,
  cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 },
  output_tokens: 50,
  service_tier: 'standard',
};

/**
 * Anthropic's answer "ok" from `model` with ANTHROPIC_CACHED_USAGE, in the message or streamed
 * (the counts in message_start, the final output count in message_delta).
 */
export function anthropicCachedAnswer(model: string, id: string, stream: boolean): FakeAnswer {
  const message = { id, type: 'message', role: 'assistant', model, stop_sequence: null };
  const usage = ANTHROPIC_CACHED_USAGE;
  if (!stream)
    return { json: { ...message, content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage } };
  return {
    sse: [
      anthropicEvent('message_start', {
        message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
      }),
      anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'ok' } }),
      anthropicEvent('content_block_stop', { index: 0 }),
      anthropicEvent('message_delta', {
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: usage.output_tokens },
      }),
      anthropicEvent('message_stop', {}),
    ],
  };
}

/**
 * Channels to a fake upstream, each reached as its provider is (Anthropic and Gemini at the
 * server's root, OpenAI-compatible under /v1) with a key of its own; `more` adds to or overrides
 * the channel's fields. `mapping` gives each model served its name upstream.
 */
export const anthropicChannel = (
  name: string,
  up: FakeUpstream,
  mapping: Record<string, string>,
  more: Record<string, unknown> = {},
) => ({
  name,
  kind: 'anthropic',
  base_url: up.url,
  keys: ['sk-ant'],
  models: Object.keys(mapping),
  model_mapping: mapping,
  ...more,
});
export const geminiChannel = (
  name: string,
  up: FakeUpstream,
  mapping: Record<string, string>,
  more: Record<string, unknown> = {},
) => ({ ...anthropicChannel(name, up, mapping), kind: 'gemini', keys: ['AIza'], ...more });
export const openaiChannel = (
  name: string,
  up: FakeUpstream,
  models: string[],
  more: Record<string, unknown> = {},
) => ({ name, kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['up-key'], models, ...more });

/** The last request `up` received at `path` (with its query string, as received). */
export const lastSentTo = (up: FakeUpstream, path: string) =>
  up.requests.filter((r) => r.path === path).at(-1)!;

/**
 * The text of a request's last message, whichever provider's shape (messages or Gemini's
 * contents): its string content, or its first part with a text. Fakes answer by it.
 */
export const lastText = (json: any): string => {
  const last = (json?.messages ?? json?.contents)?.at(-1);
  if (typeof last?.content === 'string') return last.content;
  const part = (last?.content ?? last?.parts ?? []).find((b: any) => typeof b.text === 'string');
  return part?.text ?? '';
};

export interface ChatGateway {
  gw: TestGateway;
  cookie: string;
  key: string;
}

/** A started gateway with an admin session and one API key (`keyBody` adds limits). */
export async function startChatGateway(
  overrides: Record<string, unknown>,
  keyBody: Record<string, unknown> = {},
): Promise<ChatGateway> {
  const gw = await startTestGateway(overrides);
  const cookie = await gw.login();
  const res = await gw.call('POST', '/api/key', { cookie, body: { name: 'chat', ...keyBody } });
  if (res.status !== 200) throw new Error(`key: ${res.status} ${JSON.stringify(res.body)}`);
  return { gw, cookie, key: res.body.data.key };
}

/** Request logs of the gateway (flushed first), newest first. */
export async function requestLogs(c: ChatGateway, query = ''): Promise<any[]> {
  await c.gw.services.requestLogs.flush();
  const out: any[] = [];
  for (let p = 0; ; p++) {
    const r = await c.gw.call('GET', `/api/log?page_size=100&p=${p}${query}`, { cookie: c.cookie });
    if (r.status !== 200) throw new Error(`logs: ${r.status} ${JSON.stringify(r.body)}`);
    out.push(...r.body.data);
    if (out.length >= r.body.total || r.body.data.length === 0) return out;
  }
}

export const userMsg = (content: string) => [{ role: 'user' as const, content }];
/** One user message of any content (text blocks, images, tool results). */
export const userContent = (content: any) => [{ role: 'user' as const, content }];

/** POST a chat request and read the raw SSE text. */
export async function rawStream(c: ChatGateway, body: Record<string, unknown>) {
  const res = await fetch(`${c.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ stream: true, ...body }),
  });
  const text = await res.text();
  const events = text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice(6));
  const chunks = events.filter((e) => e !== '[DONE]').map((e) => JSON.parse(e));
  return { res, text, events, chunks };
}

/** Gateway settings for a test of an upstream's answer: one attempt, no long wait for it. */
export const ONE_ATTEMPT = { retry_base_ms: 1, first_byte_timeout_ms: 2000, max_attempts: 1 };

/** A fake upstream and the chat gateway in front of it; set once the file's beforeAll has run. */
export interface FakeChat {
  up: FakeUpstream;
  c: ChatGateway;
}

/**
 * Starts a fake upstream with `routes` and a chat gateway configured by `config` (given the
 * upstream, for its channels) before the file's tests, and closes both after them.
 */
export function fakeChat(
  routes: FakeRoutes,
  config: (up: FakeUpstream) => Record<string, unknown>,
  keyBody: Record<string, unknown> = {},
): FakeChat {
  const t = {} as FakeChat;
  beforeAll(async () => {
    t.up = await startFakeUpstream(routes);
    t.c = await startChatGateway(config(t.up), keyBody);
  });
  afterAll(async () => {
    await t.c?.gw.close();
    await t.up?.close();
  });
  return t;
}

/**
 * One upstream of each kind answering with the recorded answers: `acme/gpt` at an
 * OpenAI-compatible channel, `acme/gem` at Gemini (gemini-2.5-flash), `acme/claude` at Anthropic
 * (claude-sonnet-4-5). Each test sees only its own requests in `up.requests`.
 */
export function fakeChatOfEachKind(): FakeChat {
  const t = fakeChat(
    {
      'POST /v1/chat/completions': { json: fixtureJson('openai/chat.json') },
      'POST /v1beta/models/gemini-2.5-flash:generateContent': { json: fixtureJson('gemini/chat.json') },
      'POST /v1/messages': { json: fixtureJson('anthropic/chat.json') },
    },
    (up) => ({
      channels: [
        {
          name: 'oa',
          kind: 'openai-compatible',
          base_url: `${up.url}/v1`,
          keys: ['k'],
          models: ['acme/gpt'],
        },
        geminiChannel('ge', up, { 'acme/gem': 'gemini-2.5-flash' }),
        anthropicChannel('an', up, { 'acme/claude': 'claude-sonnet-4-5' }),
      ],
      models: [model('acme/gpt'), model('acme/gem'), model('acme/claude')],
    }),
  );
  beforeEach(() => {
    t.up.requests.length = 0;
  });
  return t;
}

/**
 * Gemini's routes for each model name upstream, generateContent and streamGenerateContent,
 * answered by `answer(name, stream)`.
 */
export function geminiRoutes(
  names: Iterable<string>,
  answer: (name: string, stream: boolean) => FakeHandler,
): FakeRoutes {
  const routes: FakeRoutes = {};
  for (const name of names) {
    routes[`POST /v1beta/models/${name}:generateContent`] = answer(name, false);
    routes[`POST /v1beta/models/${name}:streamGenerateContent`] = answer(name, true);
  }
  return routes;
}

/**
 * One upstream of each kind and an OpenRouter-like one: `t/oa` at an OpenAI-compatible channel
 * answering `openai` (with `oaModels` beside it), `t/or` at one that sends reasoning as
 * OpenRouter's object (`reasoningObject`), `t/ge` at Gemini (gemini-2.5-flash) and `t/an` at
 * Anthropic (claude-sonnet-4-5), each with the recorded answer; one attempt a request. `models`
 * adds registry entries (for `oaModels`).
 */
export function fakeChatOfFourKinds(
  openai: FakeHandler,
  more: { oaModels?: string[]; models?: Record<string, unknown>[] } = {},
): FakeChat {
  return fakeChat(
    {
      'POST /v1/chat/completions': openai,
      'POST /v1/messages': () => ({ json: fixtureJson('anthropic/chat.json') }),
      'POST /v1beta/models/gemini-2.5-flash:generateContent': () => ({
        json: fixtureJson('gemini/chat.json'),
      }),
    },
    (up) => ({
      channels: [
        openaiChannel('oa', up, ['t/oa', ...(more.oaModels ?? [])], { keys: ['k'] }),
        openaiChannel('or', up, ['t/or'], { keys: ['k'], settings: { reasoningObject: true } }),
        geminiChannel('ge', up, { 't/ge': 'gemini-2.5-flash' }, { keys: ['k'] }),
        anthropicChannel('an', up, { 't/an': 'claude-sonnet-4-5' }, { keys: ['k'] }),
      ],
      models: [model('t/oa'), model('t/or'), model('t/ge'), model('t/an'), ...(more.models ?? [])],
      gateway: { retry_base_ms: 1, max_attempts: 1 },
    }),
  );
}
