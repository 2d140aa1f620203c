import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type ChatGateway,
  model,
  oaChunk,
  oaCompletion,
  sse,
  startChatGateway,
  userMsg,
} from '../chat/chat-helpers.js';
import { type FakeAnswer, type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';

/**
 * A half-open circuit lets one probe through (routing.md, "Health and the circuit breaker").
 * A streamed probe succeeds once its upstream serves the client (its first content went out, where
 * no fallback is possible any more), not when its stream ends: a minute-long answer used to keep
 * the circuit half-open, and every other request to that upstream refused with a 503, for the
 * minute. What the stream does after that is an ordinary request's outcome.
 *
 * One upstream, `a`, serves acme/m; what it answers depends on the request's message.
 */
const ROUTE = 'POST /v1/chat/completions';
const E500: FakeAnswer = { status: 500, json: { error: { message: 'down', type: 'server_error' } } };

/** A promise the test resolves to let a stream go on. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { open, opened };
}

/** A healthy stream that sends its first content, waits for `go`, then ends (or is cut). */
const slowStream = (go: Promise<void>, end: 'finish' | 'reset' = 'finish'): FakeAnswer => ({
  sse: [
    ...sse([oaChunk({ role: 'assistant', content: 'first ' })], false),
    { until: go },
    ...(end === 'finish'
      ? sse([
          oaChunk({ content: 'last' }, 'stop'),
          { ...oaChunk({}), choices: [], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } },
        ])
      : ['reset']),
  ],
});

let a: FakeUpstream;
let c: ChatGateway;
/** What `a` answers, by the request's message. */
let answers: Record<string, FakeAnswer>;

beforeAll(async () => {
  a = await startFakeUpstream({
    [ROUTE]: (req) => answers[req.json?.messages?.[0]?.content] ?? { json: oaCompletion('from a') },
  });
  c = await startChatGateway({
    channels: [
      { name: 'a', kind: 'openai-compatible', base_url: `${a.url}/v1`, keys: ['k'], models: ['acme/m'] },
    ],
    models: [model('acme/m')],
    gateway: {
      retry_base_ms: 1,
      max_attempts: 1,
      // Streams wait on the test, never on these.
      first_byte_timeout_ms: 30_000,
      idle_timeout_ms: 30_000,
      keep_alive_interval_ms: 30_000,
      circuit_failures: 2,
      circuit_window_ms: 60_000,
      circuit_cooldown_ms: 300,
    },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await a?.close();
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeEach(async () => {
  answers = { fail: E500 };
  // Each test starts on a closed circuit: one a test left open is probed closed.
  const k = health()
    .snapshot()
    .find((s) => s.target.endsWith(':acme/m'))?.target;
  if (!k) return;
  while (health().state(k) === 'open') await sleep(20);
  if (health().state(k) === 'half_open') expect((await chat('plain')).status).toBe(200);
});

const health = () => c.gw.services.chat.health;
const key = () =>
  health()
    .snapshot()
    .find((s) => s.target.endsWith(':acme/m'))!.target;
const chat = (content: string) =>
  c.gw.call('POST', '/v1/chat/completions', {
    token: c.key,
    body: { model: 'acme/m', messages: userMsg(content) },
  });

/** Opens the circuit with two failures, then waits (on its state, not a guess) for it to half-open. */
async function halfOpen() {
  expect((await chat('fail')).status).toBe(502);
  expect((await chat('fail')).status).toBe(502);
  expect(health().state(key())).not.toBe('closed');
  while (health().state(key()) !== 'half_open') await sleep(20);
}

/** A streamed request whose text is read as it comes. */
async function openStream(content: string) {
  const res = await fetch(`${c.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'acme/m', messages: userMsg(content), stream: true }),
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const read = async () => {
    const { done, value } = await reader.read();
    if (!done) text += decoder.decode(value, { stream: true });
    return done;
  };
  return {
    status: res.status,
    /** Resolves once `s` arrived. */
    async until(s: string) {
      while (!text.includes(s)) if (await read()) throw new Error(`stream ended before ${s}: ${text}`);
    },
    /** The whole text, once the stream ended. */
    async rest() {
      while (!(await read()));
      return text;
    },
  };
}

describe('a streamed half-open probe', () => {
  it('closes the circuit once it serves: other requests are served while it still streams', async () => {
    await halfOpen();
    const go = gate();
    answers.probe = slowStream(go.opened);
    const probe = await openStream('probe');
    expect(probe.status).toBe(200);
    await probe.until('first ');
    const other = await chat('plain');
    expect(other.status).toBe(200);
    expect(other.body.provider).toBe('a');
    expect(health().state(key())).toBe('closed');
    go.open();
    expect(await probe.rest()).toMatch(/"content":"last".*data: \[DONE\]/s);
    expect(health().state(key())).toBe('closed');
  });

  it('a failure after it served counts as an ordinary failure, not a reopening probe', async () => {
    await halfOpen();
    const before = health().figures(key()).errors;
    const go = gate();
    answers.probe = slowStream(go.opened, 'reset');
    const probe = await openStream('probe');
    await probe.until('first ');
    go.open();
    expect(await probe.rest()).toMatch(/"finish_reason":"error"/);
    expect(health().figures(key()).errors).toBe(before + 1);
    // One failure of a closed circuit does not open it (circuit_failures is 2) ...
    expect(health().state(key())).toBe('closed');
    expect((await chat('plain')).status).toBe(200);
    // ... and it counts toward the failures in a row that do: the success above started them again.
    expect((await chat('fail')).status).toBe(502);
    expect(health().state(key())).toBe('closed');
    expect((await chat('fail')).status).toBe(502);
    expect(health().state(key())).not.toBe('closed');
  });

  it("ending after a later probe took the slot, it neither closes the circuit nor frees that probe's slot", async () => {
    await halfOpen();
    const goA = gate();
    answers.probe = slowStream(goA.opened);
    const first = await openStream('probe');
    await first.until('first ');
    // The circuit closed, reopens on new failures, and half-opens again while the first still streams.
    await halfOpen();
    const goB = gate();
    answers.second = {
      sse: [{ until: goB.opened }, ...sse([oaChunk({ role: 'assistant', content: 'B' }, 'stop')])],
    };
    const second = openStream('second');
    while (a.requests.at(-1)?.json?.messages?.[0]?.content !== 'second') await sleep(20);
    // The second probe holds the slot until it serves.
    expect((await chat('plain')).status).toBe(503);
    goA.open();
    await first.rest();
    // The first one's success is no probe's: the slot is still the second's.
    expect(health().state(key())).toBe('half_open');
    expect((await chat('plain')).status).toBe(503);
    goB.open();
    expect(await (await second).rest()).toMatch(/"content":"B"/);
    expect(health().state(key())).toBe('closed');
    expect((await chat('plain')).status).toBe(200);
  });
});
