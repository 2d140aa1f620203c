import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type ChatGateway,
  model,
  oaChunk,
  oaCompletion,
  rawStream,
  requestLogs,
  sse,
  startChatGateway,
  userMsg,
} from '../chat/chat-helpers.js';
import { type FakeAnswer, type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';

/**
 * Upstreams that fail after answering 200 but before saying anything (an error or a cut right
 * after Anthropic's message_start or an OpenAI-style role chunk, silence, an empty answer) fail
 * the way an error status does: the `models` fallback serves, invisibly and without a bill for the
 * failed one. `o` (OpenAI-compatible) serves acme/m, `an` (Anthropic) acme/claude, `fb` acme/fb.
 */
const OA = 'POST /v1/chat/completions';
const IDLE_MS = 5_000;

const fbAnswer = (req: { json: any }): FakeAnswer =>
  req.json?.stream
    ? { sse: sse([oaChunk({ role: 'assistant', content: 'from ' }), oaChunk({ content: 'fb' }, 'stop')]) }
    : { json: oaCompletion('from fb') };

let o: FakeUpstream;
let an: FakeUpstream;
let fb: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  [o, an, fb] = [await startFakeUpstream(), await startFakeUpstream(), await startFakeUpstream()];
  c = await startChatGateway({
    channels: [
      { name: 'o', kind: 'openai-compatible', base_url: `${o.url}/v1`, keys: ['k'], models: ['acme/m'] },
      { name: 'an', kind: 'anthropic', base_url: an.url, keys: ['k'], models: ['acme/claude'] },
      { name: 'fb', kind: 'openai-compatible', base_url: `${fb.url}/v1`, keys: ['k'], models: ['acme/fb'] },
    ],
    models: [model('acme/m'), model('acme/claude'), model('acme/fb')],
    gateway: {
      retry_base_ms: 1,
      max_attempts: 1,
      first_byte_timeout_ms: 400,
      idle_timeout_ms: IDLE_MS,
      keep_alive_interval_ms: 100,
      circuit_failures: 1000,
    },
  });
});
afterAll(async () => {
  await c?.gw.close();
  for (const u of [o, an, fb]) await u?.close();
});
beforeEach(() => {
  fb.on(OA, fbAnswer);
  for (const u of [o, an, fb]) u.requests.length = 0;
});

const content = (chunks: any[]) => chunks.map((ch) => ch.choices[0]?.delta?.content ?? '').join('');
const stream = (m: string, extra: Record<string, unknown> = {}) =>
  rawStream(c, { model: m, models: ['acme/fb'], messages: userMsg('hi'), ...extra });
const complete = (m: string, extra: Record<string, unknown> = {}) =>
  c.gw.call('POST', '/v1/chat/completions', {
    token: c.key,
    body: { model: m, models: ['acme/fb'], messages: userMsg('hi'), ...extra },
  });

/** The stream fell back to fb: its answer alone, nothing of the failed upstream, one log for fb. */
async function expectServedByFallback(r: Awaited<ReturnType<typeof stream>>) {
  expect(r.res.status).toBe(200);
  expect(content(r.chunks)).toBe('from fb');
  expect(r.chunks.every((ch) => ch.provider === 'fb' && !ch.error)).toBe(true);
  expect(r.chunks[0].choices[0].delta.role).toBe('assistant');
  expect(r.events.at(-1)).toBe('[DONE]');
  expect(fb.requests).toHaveLength(1);
  const [log] = await requestLogs(c);
  expect(log).toMatchObject({ status: 200, provider: 'fb', model: 'acme/fb' });
  expect(log.attempts.map((a: any) => a.ok)).toEqual([false, true]);
  return log;
}

describe('an empty answer is a bad response: the next upstream serves at once', () => {
  const noChoices = { ...oaChunk({}), choices: [] };

  it.each([
    ['only [DONE]', ['data: [DONE]\n\n']],
    ['chunks without choices', sse([noChoices, noChoices])],
  ])('a stream of %s', async (_name, steps) => {
    o.on(OA, { sse: steps });
    const log = await expectServedByFallback(await stream('acme/m'));
    expect(log.attempts[0]).toMatchObject({ provider: 'o', error_kind: 'bad_response' });
  });

  it('a non-streamed answer with choices: []', async () => {
    o.on(OA, { json: { ...oaCompletion('x'), choices: [] } });
    const r = await complete('acme/m');
    expect(r.status).toBe(200);
    expect(r.body.choices[0].message.content).toBe('from fb');
    expect(r.headers.get('x-modelgate-attempts')).toMatch(
      /^o\/acme\/m=bad_response(:200)?, fb\/acme\/fb=ok$/,
    );
  });

  it('with nothing to fall back to, it is a 502 (streamed or not), not an empty 200', async () => {
    o.on(OA, (req) =>
      req.json.stream ? { sse: ['data: [DONE]\n\n'] } : { json: { ...oaCompletion('x'), choices: [] } },
    );
    const s = await stream('acme/m', { models: undefined });
    expect(s.res.status).toBe(502);
    const n = await complete('acme/m', { models: undefined });
    expect(n.status).toBe(502);
    expect(n.body.error.code).toBe(502);
    const logs = await requestLogs(c);
    expect(logs.slice(0, 2).map((l) => [l.status, l.cost])).toEqual([
      [502, 0],
      [502, 0],
    ]);
  });
});
