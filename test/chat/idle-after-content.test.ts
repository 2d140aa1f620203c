import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, type SseStep, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  type ChatGateway,
  model,
  oaChunk,
  rawStream,
  requestLogs,
  startChatGateway,
  userMsg,
} from './chat-helpers.js';

/**
 * An upstream that sent some content and then nothing for the client, only keep-alives (SSE
 * comments, Anthropic's `ping` events, empty deltas) every 100 ms for minutes: the idle timeout
 * (here 600 ms) is reset only by events that carry something for the client, so the stream ends
 * in-band with a 504 instead of holding the client, the upstream connection and the quota
 * reservation for as long as the keep-alives come. Before, each keep-alive reset the idle timeout
 * (undici's body timeout counts bytes), and these streams never ended (the tests time out).
 */
const IDLE_MS = 600;
const data = (o: object) => `data: ${JSON.stringify(o)}\n\n`;
/** `step` every 100 ms for 5 minutes: far past the test's own timeout. */
const forever = (...steps: string[]): SseStep[] =>
  Array.from({ length: 3000 }, (_, i) => [{ delayMs: 100 }, steps[i % steps.length]!]).flat();

const oaContent = [
  data(oaChunk({ role: 'assistant', content: '' })),
  data(oaChunk({ content: 'one ' })),
  data(oaChunk({ content: 'two ' })),
  data(oaChunk({ content: 'three' })),
];
const anEvent = (type: string, o: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`;
const anContent = [
  anEvent('message_start', {
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      content: [],
      model: 'claude-x',
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 15, output_tokens: 1 },
    },
  }),
  anEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  anEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'one ' } }),
  anEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'two ' } }),
  anEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'three' } }),
];
const geChunk = (text: string) =>
  data({
    candidates: [{ content: { parts: [{ text }], role: 'model' }, index: 0 }],
    usageMetadata: { promptTokenCount: 13, totalTokenCount: 13 },
  });
const geContent = [geChunk('one '), geChunk('two '), geChunk('three')];

const UPSTREAMS: Record<string, SseStep[]> = {
  'oa-comments': [...oaContent, ...forever(': ping\n\n')],
  'oa-empty': [
    ...oaContent,
    ...forever(data(oaChunk({ content: '' })), data(oaChunk({})), data({ ...oaChunk({}), choices: [] })),
  ],
  anthropic: [...anContent, ...forever(anEvent('ping', {}))],
  gemini: [...geContent, ...forever(geChunk(''), ': keep-alive\n\n')],
};

let oa: FakeUpstream;
let an: FakeUpstream;
let ge: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  oa = await startFakeUpstream({
    'POST /v1/chat/completions': (req) => ({
      sse: UPSTREAMS[req.json.model === 'm-empty' ? 'oa-empty' : 'oa-comments']!,
    }),
  });
  an = await startFakeUpstream({ 'POST /v1/messages': { sse: UPSTREAMS.anthropic! } });
  ge = await startFakeUpstream({
    'POST /v1beta/models/gemini-2.5-flash:streamGenerateContent': { sse: UPSTREAMS.gemini! },
  });
  c = await startChatGateway({
    channels: [
      {
        name: 'oa',
        kind: 'openai-compatible',
        base_url: `${oa.url}/v1`,
        keys: ['k'],
        models: ['acme/m', 'acme/empty'],
        model_mapping: { 'acme/m': 'm', 'acme/empty': 'm-empty' },
      },
      {
        name: 'claude',
        kind: 'anthropic',
        base_url: an.url,
        keys: ['sk-ant'],
        models: ['anthropic/c'],
        model_mapping: { 'anthropic/c': 'claude-x' },
      },
      {
        name: 'google',
        kind: 'gemini',
        base_url: ge.url,
        keys: ['AIza'],
        models: ['google/g'],
        model_mapping: { 'google/g': 'gemini-2.5-flash' },
      },
    ],
    models: [model('acme/m'), model('acme/empty'), model('anthropic/c'), model('google/g')],
    gateway: {
      retry_base_ms: 1,
      max_attempts: 1,
      first_byte_timeout_ms: 5_000,
      idle_timeout_ms: IDLE_MS,
      keep_alive_interval_ms: 60_000,
      circuit_failures: 1000,
    },
  });
});
afterAll(async () => {
  await c?.gw.close();
  for (const u of [oa, an, ge]) await u?.close();
});

const content = (chunks: any[]) => chunks.map((ch) => ch.choices[0]?.delta?.content ?? '').join('');

/** The last request is logged as an idle timeout after content, and its upstream call was closed. */
async function loggedAsIdleTimeout(up: FakeUpstream, provider: string) {
  const [log] = await requestLogs(c);
  expect(log).toMatchObject({ status: 504, provider, stream: true, error_kind: 'timeout' });
  expect(await up.requests.at(-1)!.closed).toEqual({ completed: false });
}

describe('keep-alives after content do not hold the idle timeout', () => {
  it.each([
    ['OpenAI-compatible, SSE comments', 'acme/m', 'oa'],
    ['OpenAI-compatible, empty deltas and chunks without choices', 'acme/empty', 'oa'],
    ['Anthropic, `ping` events', 'anthropic/c', 'claude'],
    ['Gemini, empty text parts and comments', 'google/g', 'google'],
  ])(
    '%s: the in-band 504 idle ending',
    async (_name, modelId, provider) => {
      const r = await rawStream(c, { model: modelId, messages: userMsg('hi') });
      expect(r.res.status).toBe(200);
      expect(content(r.chunks)).toBe('one two three');
      const last = r.chunks.at(-1);
      expect(last.error.code).toBe(504);
      expect(last.choices[0].finish_reason).toBe('error');
      expect(r.events.at(-1)).toBe('[DONE]');
      await loggedAsIdleTimeout({ oa, claude: an, google: ge }[provider]!, provider);
    },
    10_000,
  );
});

/** The event names of a named-event SSE stream, in order. */
const eventNames = (text: string) =>
  text
    .split('\n\n')
    .map((e) => /^event: (.+)$/m.exec(e)?.[1])
    .filter((n) => n !== undefined);

describe('the same through the other ingresses', () => {
  it('/v1/messages ends with an error event', async () => {
    const res = await fetch(`${c.gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': c.key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'anthropic/c', max_tokens: 100, messages: userMsg('hi'), stream: true }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('three');
    expect(eventNames(text).at(-1)).toBe('error');
    await loggedAsIdleTimeout(an, 'claude');
  }, 10_000);

  it('/v1/responses ends with response.failed', async () => {
    const res = await fetch(`${c.gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'acme/m', input: 'hi', stream: true }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('three');
    expect(eventNames(text).at(-1)).toBe('response.failed');
    await loggedAsIdleTimeout(oa, 'oa');
  }, 10_000);
});

describe('what still resets it', () => {
  it('content arriving more slowly than keep-alives, each gap under the idle timeout, is never cut', async () => {
    // Content every 400 ms (under 600), keep-alives every 100 ms between: 2 s of stream, whole.
    const steps: SseStep[] = [data(oaChunk({ role: 'assistant', content: '' }))];
    for (let i = 0; i < 5; i++)
      steps.push(
        ...Array.from({ length: 4 }, () => [{ delayMs: 100 }, ': ping\n\n'] as SseStep[]).flat(),
        data(oaChunk({ content: `${i}` })),
      );
    steps.push(data(oaChunk({}, 'stop')), 'data: [DONE]\n\n');
    oa.on('POST /v1/chat/completions', { sse: steps });
    try {
      const r = await rawStream(c, { model: 'acme/m', messages: userMsg('hi') });
      expect(content(r.chunks)).toBe('01234');
      expect(r.chunks.some((ch) => ch.error)).toBe(false);
      expect(r.events.at(-1)).toBe('[DONE]');
      const [log] = await requestLogs(c);
      expect(log).toMatchObject({ status: 200, error_kind: null });
    } finally {
      oa.on('POST /v1/chat/completions', (req) => ({
        sse: UPSTREAMS[req.json.model === 'm-empty' ? 'oa-empty' : 'oa-comments']!,
      }));
    }
  });
});
