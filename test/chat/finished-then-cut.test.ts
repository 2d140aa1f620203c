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
 * An upstream that sent its whole answer (every choice's finish reason, and usually the usage)
 * and then lost its connection before its terminator (`data: [DONE]`, Anthropic's message_stop,
 * the end of a Gemini body): the answer is complete, so it ends as a body that closed cleanly
 * there does, with the gateway's own ending, status 200 and a success for the upstream's health.
 * Before, the client got an error chunk after its `finish_reason: "stop"` (an openai SDK threw
 * after the whole answer), and the request was logged 502 and counted against the upstream.
 * Each fake writes its answer, pauses (so the gateway has read it) and cuts the connection.
 */
const CUT: SseStep[] = [{ delayMs: 50 }, 'reset'];
const data = (o: object) => `data: ${JSON.stringify(o)}\n\n`;
const USAGE = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
/** Content, the finish, the usage chunk when `withUsage`; then the cut. */
const oaFinishedThenCut = (withUsage: boolean): SseStep[] => [
  data(oaChunk({ role: 'assistant', content: 'complete ' })) + data(oaChunk({ content: 'answer' })),
  data(oaChunk({}, 'stop')) + (withUsage ? data({ ...oaChunk({}), choices: [], usage: USAGE }) : ''),
  ...CUT,
];
const anEvent = (type: string, o: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`;
const ANTHROPIC_FINISHED_THEN_CUT: SseStep[] = [
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
  }) +
    anEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) +
    anEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'complete answer' } }),
  anEvent('content_block_stop', { index: 0 }) +
    anEvent('message_delta', {
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 9 },
    }),
  ...CUT,
];
const GEMINI_FINISHED_THEN_CUT: SseStep[] = [
  data({
    candidates: [{ content: { parts: [{ text: 'complete ' }], role: 'model' }, index: 0 }],
    usageMetadata: { promptTokenCount: 13, totalTokenCount: 13 },
  }),
  data({
    candidates: [{ content: { parts: [{ text: 'answer' }], role: 'model' }, index: 0, finishReason: 'STOP' }],
    usageMetadata: { promptTokenCount: 13, candidatesTokenCount: 4, totalTokenCount: 17 },
  }),
  ...CUT,
];

let oa: FakeUpstream;
let an: FakeUpstream;
let ge: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  oa = await startFakeUpstream({
    'POST /v1/chat/completions': (req) => ({
      sse: oaFinishedThenCut(req.json.stream_options?.include_usage === true),
    }),
  });
  an = await startFakeUpstream({ 'POST /v1/messages': { sse: ANTHROPIC_FINISHED_THEN_CUT } });
  ge = await startFakeUpstream({
    'POST /v1beta/models/gemini-2.5-flash:streamGenerateContent': { sse: GEMINI_FINISHED_THEN_CUT },
  });
  c = await startChatGateway({
    channels: [
      { name: 'oa', kind: 'openai-compatible', base_url: `${oa.url}/v1`, keys: ['k'], models: ['acme/m'] },
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
    models: [model('acme/m'), model('anthropic/c'), model('google/g')],
    // One failure would open a circuit: a cut counted against the upstream shows at once.
    gateway: { retry_base_ms: 1, max_attempts: 1, first_byte_timeout_ms: 2000, circuit_failures: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  for (const u of [oa, an, ge]) await u?.close();
});
const content = (chunks: any[]) => chunks.map((ch) => ch.choices[0]?.delta?.content ?? '').join('');
const finishes = (chunks: any[]) =>
  chunks.map((ch) => ch.choices[0]?.finish_reason).filter((f) => f !== null && f !== undefined);

/** The last request's log row is a success, and its upstream's health took no failure. */
async function loggedAsSuccess(provider: string, modelId: string) {
  const [log] = await requestLogs(c);
  expect(log).toMatchObject({ status: 200, provider, model: modelId, stream: true, error_kind: null });
  expect(log.attempts.at(-1)).toMatchObject({ provider, ok: true });
  const h = c.gw.services.chat.health.snapshot().find((s) => s.target.endsWith(`:${modelId}`));
  expect(h).toMatchObject({ state: 'closed', last_error: null });
  return log;
}

describe('a complete answer whose connection is cut before its terminator is a success', () => {
  it('OpenAI-compatible, usage sent before the cut: its usage, our [DONE], logged 200', async () => {
    const r = await rawStream(c, {
      model: 'acme/m',
      messages: userMsg('hi'),
      stream_options: { include_usage: true },
    });
    expect(r.res.status).toBe(200);
    expect(content(r.chunks)).toBe('complete answer');
    expect(r.chunks.some((ch) => ch.error)).toBe(false);
    expect(finishes(r.chunks)).toEqual(['stop']);
    expect(r.events.at(-1)).toBe('[DONE]');
    expect(r.chunks.at(-1).usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    const log = await loggedAsSuccess('oa', 'acme/m');
    expect(log).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
  });

  it('OpenAI-compatible, cut before the usage: counted locally, as for a clean end without it', async () => {
    const r = await rawStream(c, { model: 'acme/m', messages: userMsg('hi'), usage: { include: true } });
    expect(r.res.status).toBe(200);
    expect(r.chunks.some((ch) => ch.error)).toBe(false);
    expect(finishes(r.chunks)).toEqual(['stop']);
    expect(r.events.at(-1)).toBe('[DONE]');
    const usage = r.chunks.at(-1).usage;
    expect(usage.prompt_tokens).toBeGreaterThan(0);
    expect(usage.completion_tokens).toBeGreaterThan(0);
    const log = await loggedAsSuccess('oa', 'acme/m');
    expect(log.completion_tokens).toBe(usage.completion_tokens);
  });

  it("Anthropic: message_delta's stop reason, then the cut before message_stop", async () => {
    const r = await rawStream(c, { model: 'anthropic/c', messages: userMsg('hi'), usage: { include: true } });
    expect(r.res.status).toBe(200);
    expect(content(r.chunks)).toBe('complete answer');
    expect(r.chunks.some((ch) => ch.error)).toBe(false);
    expect(finishes(r.chunks)).toEqual(['stop']);
    expect(r.events.at(-1)).toBe('[DONE]');
    expect(r.chunks.at(-1).usage).toMatchObject({ prompt_tokens: 15, completion_tokens: 9 });
    await loggedAsSuccess('claude', 'anthropic/c');
  });

  it("Gemini: a candidate's finishReason, then the cut", async () => {
    const r = await rawStream(c, { model: 'google/g', messages: userMsg('hi'), usage: { include: true } });
    expect(r.res.status).toBe(200);
    expect(content(r.chunks)).toBe('complete answer');
    expect(r.chunks.some((ch) => ch.error)).toBe(false);
    expect(finishes(r.chunks)).toEqual(['stop']);
    expect(r.events.at(-1)).toBe('[DONE]');
    expect(r.chunks.at(-1).usage).toMatchObject({ prompt_tokens: 13, completion_tokens: 4 });
    await loggedAsSuccess('google', 'google/g');
  });
});

/** The event names of a named-event SSE stream, in order. */
const eventNames = (text: string) =>
  text
    .split('\n\n')
    .map((e) => /^event: (.+)$/m.exec(e)?.[1])
    .filter((n) => n !== undefined);

describe('the same through the other ingresses', () => {
  it('/v1/messages ends with message_delta (end_turn) and message_stop, no error event', async () => {
    const res = await fetch(`${c.gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': c.key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'acme/m', max_tokens: 100, messages: userMsg('hi'), stream: true }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const names = eventNames(text);
    expect(names).not.toContain('error');
    expect(names.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect(text).toContain('"stop_reason":"end_turn"');
    await loggedAsSuccess('oa', 'acme/m');
  });

  it('/v1/responses ends with response.completed, not response.failed', async () => {
    const res = await fetch(`${c.gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'acme/m', input: 'hi', stream: true }),
    });
    expect(res.status).toBe(200);
    const names = eventNames(await res.text());
    expect(names).not.toContain('response.failed');
    expect(names).not.toContain('error');
    expect(names.at(-1)).toBe('response.completed');
    await loggedAsSuccess('oa', 'acme/m');
  });
});
