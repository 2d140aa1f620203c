/**
 * `readEvents`: a streamed upstream answer read a batch at a time, against a loopback fake
 * whose writes set the socket reads. Batching, the end, cuts, stalls, error chunks, cancel and
 * the caller's abort.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientGone } from '../../src/gateway/cancel.js';
import type { ChatStreamEvent } from '../../src/gateway/chat/types.js';
import { UpstreamError } from '../../src/gateway/errors.js';
import { readEvents } from '../../src/gateway/upstream/event-stream.js';
import { UpstreamClient } from '../../src/gateway/upstream/upstream-client.js';
import { OpenAiStreamDecoder } from '../../src/providers/openai-compatible/openai-response.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';

const client = new UpstreamClient({
  defaults: { connectTimeoutMs: 1000, firstByteTimeoutMs: 1000, idleTimeoutMs: 300 },
});
const delta = (content: string, finish: string | null = null) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;
const usage = `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 2 } })}\n\n`;

let up: FakeUpstream;
beforeAll(async () => {
  up = await startFakeUpstream({
    // Three events in one write, then two more after a pause: two socket reads.
    'GET /two-reads': {
      sse: [
        delta('a') + delta('b') + delta('c'),
        { delayMs: 200 }, // a pause a stall of this process (which also runs the upstream) is unlikely to bridge
        delta('d', 'stop') + usage,
        'data: [DONE]\n\n',
      ],
    },
    // An event split across writes: nothing is delivered until it is whole.
    'GET /split': {
      sse: [delta('xy').slice(0, 20), { delayMs: 20 }, delta('xy').slice(20), 'data: [DONE]\n\n'],
    },
    'GET /no-terminator': { sse: [delta('a')] },
    'GET /cut': { sse: [delta('a'), { delayMs: 20 }, 'reset'] },
    'GET /stall': { sse: [delta('a'), 'hang'] },
    'GET /error-chunk': {
      sse: [
        delta('a') +
          `data: ${JSON.stringify({ error: { code: 502, message: 'provider died' } })}\n\n` +
          delta('never'),
      ],
    },
    'GET /long': { sse: [delta('a'), { delayMs: 2_000 }, delta('b', 'stop'), 'data: [DONE]\n\n'] },
  });
});
afterAll(async () => {
  await client.close();
  await up.close();
});

async function open(path: string, signal?: ClientGone) {
  const res = await client.send({ method: 'GET', url: up.url + path, headers: {} }, { signal });
  return readEvents(res.raw, new OpenAiStreamDecoder(), signal);
}

async function batches(path: string): Promise<ChatStreamEvent[][]> {
  const s = await open(path);
  const out: ChatStreamEvent[][] = [];
  for (let b = await s.next(); b !== null; b = await s.next()) out.push(b);
  return out;
}

const text = (evs: ChatStreamEvent[]) =>
  evs.map((e) => (e.type === 'delta' ? e.choices.map((c) => c.delta.content ?? '').join('') : '')).join('');

describe('readEvents', () => {
  it('delivers what one socket read carries as one batch, then null at the end', async () => {
    const bs = await batches('/two-reads');
    expect(bs.map(text)).toEqual(['abc', 'd']);
    expect(bs[1]!.at(-1)).toMatchObject({ type: 'usage', usage: { prompt_tokens: 3 } });
    expect(bs.every((b) => b.length > 0)).toBe(true);
  });

  it('waits for an event split across reads', async () => {
    expect((await batches('/split')).map(text)).toEqual(['xy']);
  });

  it('a body that ends without its terminator ends with an error event', async () => {
    const evs = (await batches('/no-terminator')).flat();
    expect(text(evs)).toBe('a');
    const last = evs.at(-1)!;
    expect(last.type === 'error' && last.error).toBeInstanceOf(UpstreamError);
  });

  it('a connection cut mid-stream is a final connection error event', async () => {
    const evs = (await batches('/cut')).flat();
    const last = evs.at(-1)!;
    expect(last.type === 'error' && (last.error as UpstreamError).kind).toBe('connection');
  });

  it('an upstream that stalls past the idle timeout is a final timeout error event', async () => {
    const evs = (await batches('/stall')).flat();
    const last = evs.at(-1)!;
    expect(last.type === 'error' && (last.error as UpstreamError).kind).toBe('timeout');
  });

  it('an error chunk ends the stream: nothing after it is delivered, the connection is freed', async () => {
    const before = up.requests.length;
    const evs = (await batches('/error-chunk')).flat();
    expect(evs.map((e) => e.type)).toEqual(['delta', 'error']);
    expect(((evs[1] as { error: UpstreamError }).error as UpstreamError).upstreamStatus).toBe(502);
    await up.requests[before]!.closed;
  });

  it('cancel() closes the upstream connection at once', async () => {
    const s = await open('/long');
    expect(text((await s.next())!)).toBe('a');
    const req = up.requests.at(-1)!;
    s.cancel();
    expect(await req.closed).toEqual({ completed: false });
    expect(await s.next()).toBeNull();
  });

  it('the caller aborting rejects a pending next() with its reason and closes the connection', async () => {
    const gone = new ClientGone();
    const s = await open('/long', gone);
    await s.next();
    const req = up.requests.at(-1)!;
    const pending = s.next();
    const reason = new Error('client disconnected');
    gone.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect((await req.closed).completed).toBe(false);
  });

  it('for await reads it event by event; breaking out frees the connection', async () => {
    const s = await open('/long');
    const req = up.requests.at(-1)!;
    for await (const ev of s) {
      expect(ev.type).toBe('delta');
      break;
    }
    expect((await req.closed).completed).toBe(false);
  });
});
