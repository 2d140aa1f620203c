import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ChatGateway } from '../chat/chat-helpers.js';
import {
  model,
  oaChunk,
  rawStream,
  requestLogs,
  sse,
  startChatGateway,
  userMsg,
} from '../chat/chat-helpers.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';

/**
 * `reasoning: {exclude: true}` with a model that reasons longer than the first-byte timeout: the
 * upstream is alive (it streams reasoning), so the try is not timed out and run again elsewhere;
 * the client, which sees none of it, gets keep-alive comments meanwhile, then the answer.
 * `r` reasons for 800 ms (a delta every 100 ms) against a 300 ms first-byte timeout; `fb`
 * would serve if `r` were given up.
 */
const OA = 'POST /v1/chat/completions';
const REASONING_MS = 800;

let r: FakeUpstream;
let fb: FakeUpstream;
/** Like `r` without a role-only chunk first: its first delta is reasoning. */
let q: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  const thinking = Array.from({ length: REASONING_MS / 100 }, (_, i) => [
    { delayMs: 100 },
    `data: ${JSON.stringify(oaChunk({ reasoning: `step ${i}. ` }))}\n\n`,
  ]).flat();
  r = await startFakeUpstream({
    [OA]: {
      sse: [
        `data: ${JSON.stringify(oaChunk({ role: 'assistant', content: '' }))}\n\n`,
        ...thinking,
        ...sse([
          oaChunk({ content: 'Answer.' }, 'stop'),
          {
            ...oaChunk({}),
            choices: [],
            usage: { prompt_tokens: 5, completion_tokens: 40, total_tokens: 45 },
          },
        ]),
      ],
    },
  });
  q = await startFakeUpstream({
    [OA]: {
      sse: [
        ...thinking,
        ...sse([
          oaChunk({ content: 'Answer.' }, 'stop'),
          {
            ...oaChunk({}),
            choices: [],
            usage: { prompt_tokens: 5, completion_tokens: 40, total_tokens: 45 },
          },
        ]),
      ],
    },
  });
  fb = await startFakeUpstream({
    [OA]: { sse: sse([oaChunk({ role: 'assistant', content: 'from fb' }, 'stop')]) },
  });
  c = await startChatGateway({
    channels: [
      { name: 'r', kind: 'openai-compatible', base_url: `${r.url}/v1`, keys: ['k'], models: ['acme/r'] },
      { name: 'fb', kind: 'openai-compatible', base_url: `${fb.url}/v1`, keys: ['k'], models: ['acme/fb'] },
      { name: 'q', kind: 'openai-compatible', base_url: `${q.url}/v1`, keys: ['k'], models: ['acme/q'] },
    ],
    models: [model('acme/r'), model('acme/fb'), model('acme/q')],
    gateway: {
      retry_base_ms: 1,
      max_attempts: 2,
      first_byte_timeout_ms: 300,
      idle_timeout_ms: 1000,
      keep_alive_interval_ms: 100,
    },
  });
});
afterAll(async () => {
  await c?.gw.close();
  for (const u of [r, fb, q]) await u?.close();
});

describe('hidden reasoning and the first-byte timeout', () => {
  it('reasoning longer than the timeout, excluded: no timeout, no fallback; keep-alives, then the answer', async () => {
    const res = await rawStream(c, {
      model: 'acme/r',
      models: ['acme/fb'],
      messages: userMsg('hi'),
      reasoning: { exclude: true },
    });
    expect(res.chunks.map((ch) => ch.choices[0]?.delta?.content ?? '').join('')).toBe('Answer.');
    expect(res.text).not.toContain('step');
    // The reasoning is hidden, so the client's connection is kept alive by comments while it runs.
    const afterFirstChunk = res.text.slice(res.text.indexOf('data: '));
    expect(afterFirstChunk.match(/^: keep-alive$/gm)?.length ?? 0).toBeGreaterThanOrEqual(3);
    expect(r.requests.length).toBe(1);
    expect(fb.requests.length).toBe(0);
    const [log] = await requestLogs(c);
    expect(log).toMatchObject({ status: 200, provider: 'r', completion_tokens: 40 });
    expect(log.attempts).toEqual([expect.objectContaining({ provider: 'r', ok: true })]);
  });

  it("excluded: the log's ttft_ms is the first answer token the client saw; the upstream's health TTFT its first (hidden) reasoning", async () => {
    const success = vi.spyOn(c.gw.services.chat.health, 'success');
    try {
      await rawStream(c, { model: 'acme/r', messages: userMsg('hi'), reasoning: { exclude: true } });
      const [log] = await requestLogs(c);
      expect(log).toMatchObject({ status: 200, provider: 'r' });
      // The answer came after 800 ms of reasoning the client never saw (a role-only chunk went out
      // at the first reasoning): before, the log said ~100 ms.
      expect(log.ttft_ms).toBeGreaterThanOrEqual(REASONING_MS - 50);
      // The upstream itself answered at its first reasoning delta, 100 ms in.
      const sample = success.mock.calls.find(([k]) => k.endsWith(':acme/r'))![1];
      expect(sample.ttftMs).toBeLessThan(REASONING_MS / 2);
    } finally {
      success.mockRestore();
    }
  });

  it('excluded, with no role-only chunk first: the health TTFT is still the first reasoning, not the answer', async () => {
    const success = vi.spyOn(c.gw.services.chat.health, 'success');
    try {
      await rawStream(c, { model: 'acme/q', messages: userMsg('hi'), reasoning: { exclude: true } });
      const [log] = await requestLogs(c);
      expect(log).toMatchObject({ status: 200, provider: 'q' });
      expect(log.ttft_ms).toBeGreaterThanOrEqual(REASONING_MS - 50);
      // The upstream is sampled at its first reasoning delta, the client at the answer.
      const sample = success.mock.calls.find(([k]) => k.endsWith(':acme/q'))![1];
      expect(sample.ttftMs).toBeLessThan(REASONING_MS / 2);
    } finally {
      success.mockRestore();
    }
  });

  it('shown: the reasoning is the first token the client sees, and both TTFTs say so', async () => {
    const success = vi.spyOn(c.gw.services.chat.health, 'success');
    try {
      const res = await rawStream(c, { model: 'acme/r', messages: userMsg('hi') });
      expect(res.text).toContain('step 0.');
      const [log] = await requestLogs(c);
      expect(log.ttft_ms).toBeLessThan(REASONING_MS / 2);
      const sample = success.mock.calls.find(([k]) => k.endsWith(':acme/r'))![1];
      expect(sample.ttftMs).toBeLessThan(REASONING_MS / 2);
    } finally {
      success.mockRestore();
    }
  });
});
