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
 * An upstream that sent its whole answer (its finish, and the usage chunk) and then went silent,
 * the connection open and no `data: [DONE]`: past `gateway.finish_grace_ms` the stream ends as a
 * complete answer cut before its terminator does (test/chat/finished-then-cut.test.ts): our
 * [DONE], logged 200 once, billed on the upstream's usage, a success for the upstream's health.
 * Before, the client was held until the idle timeout (a minute by default; here longer than the
 * test's own timeout, so the old behaviour fails the test).
 */
const data = (o: object) => `data: ${JSON.stringify(o)}\n\n`;
const USAGE = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
const FINISHED_THEN_SILENT: SseStep[] = [
  data(oaChunk({ role: 'assistant', content: 'complete ' })) + data(oaChunk({ content: 'answer' })),
  data(oaChunk({}, 'stop')),
  data({ ...oaChunk({}), choices: [], usage: USAGE }),
  'hang',
];

let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({ 'POST /v1/chat/completions': { sse: FINISHED_THEN_SILENT } });
  c = await startChatGateway({
    channels: [
      { name: 'oa', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: ['acme/m'] },
    ],
    models: [model('acme/m')],
    gateway: {
      max_attempts: 1,
      circuit_failures: 1,
      idle_timeout_ms: 600_000,
      // Long enough for the usage chunk written right after the finish to arrive within it.
      finish_grace_ms: 300,
    },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

describe('an upstream silent after its finish', () => {
  it('ends the stream cleanly after the finish grace: usage, [DONE], one log row, a success', async () => {
    const r = await rawStream(c, {
      model: 'acme/m',
      messages: userMsg('hi'),
      stream_options: { include_usage: true },
    });
    expect(r.res.status).toBe(200);
    expect(r.chunks.map((ch) => ch.choices[0]?.delta?.content ?? '').join('')).toBe('complete answer');
    expect(r.chunks.some((ch) => ch.error)).toBe(false);
    expect(r.chunks.at(-1).usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    expect(r.events.at(-1)).toBe('[DONE]');
    // The upstream's connection is closed, not left hanging.
    expect(await up.requests.at(-1)!.closed).toEqual({ completed: false });

    const logs = await requestLogs(c);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({
      status: 200,
      provider: 'oa',
      stream: true,
      error_kind: null,
      prompt_tokens: 11,
      completion_tokens: 7,
    });
    const h = c.gw.services.chat.health.snapshot().find((s) => s.target.endsWith(':acme/m'));
    expect(h).toMatchObject({ state: 'closed', last_error: null, requests: 1, error_rate: 0 });
  }, 20_000);
});
