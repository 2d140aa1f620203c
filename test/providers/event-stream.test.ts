/**
 * `openEvents`: a streamed upstream answer decoded as it arrives and read a batch at a time,
 * against a loopback fake whose writes set the socket reads. Batching, the end, cuts, stalls,
 * error chunks, non-2xx bodies, backpressure, cancel and the caller's abort.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientGone } from '../../src/gateway/cancel.js';
import type { ChatStreamEvent } from '../../src/gateway/chat/types.js';
import { UpstreamError } from '../../src/gateway/errors.js';
import { openEvents } from '../../src/gateway/upstream/event-stream.js';
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
    // The whole answer, then a cut or a stall before its terminator, or a cut after it.
    'GET /finished-cut': { sse: [delta('a'), delta('b', 'stop') + usage, { delayMs: 20 }, 'reset'] },
    'GET /finished-stall': { sse: [delta('a', 'stop'), 'hang'] },
    'GET /done-cut': { sse: [delta('a', 'stop') + 'data: [DONE]\n\n', { delayMs: 20 }, 'reset'] },
    'GET /error-chunk': {
      sse: [
        delta('a') +
          `data: ${JSON.stringify({ error: { code: 502, message: 'provider died' } })}\n\n` +
          delta('never'),
      ],
    },
    'GET /long': { sse: [delta('a'), { delayMs: 2_000 }, delta('b', 'stop'), 'data: [DONE]\n\n'] },
    'GET /denied': {
      status: 429,
      headers: { 'retry-after': '3' },
      json: { error: { message: 'slow down' } },
    },
    // An HTML error page without end, written 8 KiB at a time.
    'GET /endless-error': {
      status: 500,
      headers: { 'content-type': 'text/html' },
      sse: ['<html>', ...Array.from({ length: 40 }, () => 'e'.repeat(8192)), 'hang'],
    },
    'GET /reset': { reset: true },
    'GET /hang': { hang: true },
    // One event longer than the high-water mark (a big tool-call argument, an inline image).
    'GET /big-event': { sse: [delta('a'), delta('y'.repeat(200_000), 'stop'), 'data: [DONE]\n\n'] },
    'GET /garbage': {
      sse: [delta('a'), { delayMs: 20 }, 'data: {not json\n\n', { delayMs: 2_000 }, 'data: [DONE]\n\n'],
    },
  });
});
afterAll(async () => {
  await client.close();
  await up.close();
});

async function open(path: string, signal?: ClientGone, base = up.url) {
  const res = await openEvents(
    client,
    { method: 'GET', url: base + path, headers: {} },
    new OpenAiStreamDecoder(),
    {},
    signal,
  );
  if (!res.events) throw new Error(`status ${res.status}: ${res.text}`);
  return res.events;
}

async function batches(path: string): Promise<ChatStreamEvent[][]> {
  const s = await open(path);
  const out: ChatStreamEvent[][] = [];
  for (let b = await s.next(); b !== null; b = await s.next()) out.push(b);
  return out;
}

const text = (evs: ChatStreamEvent[]) =>
  evs.map((e) => (e.type === 'delta' ? e.choices.map((c) => c.delta.content ?? '').join('') : '')).join('');

describe('openEvents', () => {
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

  it('a cut or a stall after the whole answer ends it as a clean close: no error event', async () => {
    const cut = (await batches('/finished-cut')).flat();
    expect(text(cut)).toBe('ab');
    expect(cut.map((e) => e.type)).toEqual(['delta', 'delta', 'usage']);
    for (const path of ['/finished-stall', '/done-cut']) {
      const evs = (await batches(path)).flat();
      expect(evs.map((e) => e.type)).toEqual(['delta']);
    }
  });

  it('a whole answer whose upstream stays silent ends after the finish grace, not the idle timeout', async () => {
    const patient = new UpstreamClient({
      defaults: {
        connectTimeoutMs: 1000,
        firstByteTimeoutMs: 1000,
        idleTimeoutMs: 600_000,
        finishGraceMs: 50,
      },
    });
    try {
      const res = await openEvents(
        patient,
        { method: 'GET', url: `${up.url}/finished-stall`, headers: {} },
        new OpenAiStreamDecoder(),
        {},
        undefined,
      );
      const evs: ChatStreamEvent[] = [];
      for (let b = await res.events!.next(); b !== null; b = await res.events!.next()) evs.push(...b);
      expect(evs.map((e) => e.type)).toEqual(['delta']);
      expect(await up.requests.at(-1)!.closed).toEqual({ completed: false });
    } finally {
      await patient.close();
    }
  }, 20_000);

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

  it('events that arrived before a cut are delivered before its error event', async () => {
    const s = await open('/cut');
    await new Promise((r) => setTimeout(r, 150)); // the cut comes 20 ms after 'a'
    const evs: ChatStreamEvent[] = [];
    for (let b = await s.next(); b !== null; b = await s.next()) evs.push(...b);
    expect(text(evs)).toBe('a');
    expect(evs.map((e) => e.type)).toEqual(['delta', 'error']);
  });

  it('a non-2xx answer resolves with its status, headers and whole body, and no events', async () => {
    const res = await openEvents(
      client,
      { method: 'GET', url: `${up.url}/denied`, headers: {} },
      new OpenAiStreamDecoder(),
      {},
      undefined,
    );
    expect(res.events).toBeUndefined();
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('3');
    expect(JSON.parse(res.text!)).toEqual({ error: { message: 'slow down' } });
  });

  it('a non-2xx answer keeps only the first maxErrorBodyBytes of its body and closes the connection', async () => {
    const res = await openEvents(
      client,
      { method: 'GET', url: `${up.url}/endless-error`, headers: {} },
      new OpenAiStreamDecoder(),
      { maxErrorBodyBytes: 4096 },
      undefined,
    );
    expect(res.status).toBe(500);
    expect(res.text).toHaveLength(4096);
    expect(res.text!.startsWith('<html>eee')).toBe(true);
    // The upstream never ends this answer: the client closed the connection at the limit.
    expect(await up.requests.at(-1)!.closed).toEqual({ completed: false });
  });

  it('a connection that fails before the head rejects with a connection UpstreamError', async () => {
    await expect(open('/reset')).rejects.toMatchObject({ kind: 'connection' });
  });

  it('an upstream that never answers rejects with a timeout; an abort while waiting rejects with its reason', async () => {
    await expect(open('/hang')).rejects.toMatchObject({ kind: 'timeout' });
    const gone = new ClientGone();
    const pending = open('/hang', gone);
    await new Promise((r) => setTimeout(r, 50));
    const reason = new Error('client disconnected');
    gone.abort(reason);
    await expect(pending).rejects.toBe(reason);
    const already = new ClientGone();
    already.abort(reason);
    const before = up.requests.length;
    await expect(open('/hang', already)).rejects.toBe(reason);
    expect(up.requests.length).toBe(before);
  });

  it('a client gone while its stream waits for a connection rejects at once; the request is never sent', async () => {
    const one = new UpstreamClient({
      connectionsPerOrigin: 1,
      defaults: { connectTimeoutMs: 1000, firstByteTimeoutMs: 10_000, idleTimeoutMs: 10_000 },
    });
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms, 'still waiting'));
    const openOn = (path: string, signal?: ClientGone) =>
      openEvents(
        one,
        { method: 'GET', url: up.url + path, headers: {} },
        new OpenAiStreamDecoder(),
        {},
        signal,
      );
    try {
      const holder = new ClientGone();
      const sent = up.requests.length;
      const busy = openOn('/hang', holder).catch((e: unknown) => e);
      while (up.requests.length === sent) await sleep(5);
      const before = up.requests.length;
      const gone = new ClientGone();
      const queued = openOn('/two-reads', gone).catch((e: unknown) => e);
      await sleep(20);
      const reason = new Error('client disconnected');
      gone.abort(reason);
      expect(await Promise.race([queued, sleep(2_000)])).toBe(reason);
      holder.abort(new Error('done'));
      await busy;
      const res = await openOn('/two-reads');
      let n = 0;
      for await (const _ of res.events!) n++;
      expect(n).toBeGreaterThan(0);
      expect(up.requests.slice(before).map((r) => r.path)).toEqual(['/two-reads']);
    } finally {
      await one.close();
    }
  });

  it('no abort listener, controller or raw header buffer is held once a stream ended, failed or was cancelled', async () => {
    // undici keeps a finished request's handler referenced for a while: what it still holds then
    // is promoted to the old generation (2.8 KB per stream instead of 1.3, performance.md).
    type Inside = { controller?: { rawHeaders?: unknown } };
    for (const [path, cancel] of [
      ['/two-reads', false],
      ['/cut', false],
      ['/long', true],
    ] as const) {
      const gone = new ClientGone();
      const s = await open(path, gone);
      // The parsed headers are ours; the raw ones are views of a socket read, held as long as the stream.
      expect((s as unknown as Inside).controller?.rawHeaders).toBeNull();
      if (cancel) {
        await s.next();
        s.cancel();
      } else for (let b = await s.next(); b !== null; b = await s.next());
      expect((gone as unknown as { listeners?: unknown[] }).listeners ?? []).toHaveLength(0);
      expect((s as unknown as Inside).controller).toBeUndefined();
    }
  });
});

describe('openEvents, more', () => {
  it('an event longer than the high-water mark arriving while the reader is busy is delivered whole', async () => {
    const s = await open('/big-event');
    await new Promise((r) => setTimeout(r, 200)); // the reader does not ask: the stream pauses mid-event
    const evs: ChatStreamEvent[] = [];
    for (let b = await s.next(); b !== null; b = await s.next()) evs.push(...b);
    expect(text(evs)).toBe(`a${'y'.repeat(200_000)}`);
  });

  it('a stream read to its end leaves its connection for the next call; a cancelled one does not', async () => {
    const one = new UpstreamClient({ connectionsPerOrigin: 1, defaults: { idleTimeoutMs: 5_000 } });
    const read = async (path: string, cancel = false) => {
      const res = await openEvents(
        one,
        { method: 'GET', url: up.url + path, headers: {} },
        new OpenAiStreamDecoder(),
        {},
        undefined,
      );
      const port = up.requests.at(-1)!.remotePort;
      if (cancel) {
        await res.events!.next();
        res.events!.cancel();
        await up.requests.at(-1)!.closed;
      } else for (let b = await res.events!.next(); b !== null; b = await res.events!.next());
      return port;
    };
    try {
      const first = await read('/two-reads');
      expect(await read('/two-reads')).toBe(first);
      expect(await read('/long', true)).toBe(first);
      expect(await read('/two-reads')).not.toBe(first);
    } finally {
      await one.close();
    }
  });

  it('an unparseable chunk is a final bad_response error event and frees the connection', async () => {
    const evs: ChatStreamEvent[] = [];
    const s = await open('/garbage');
    const req = up.requests.at(-1)!;
    for (let b = await s.next(); b !== null; b = await s.next()) evs.push(...b);
    expect(evs.map((e) => e.type)).toEqual(['delta', 'error']);
    expect((evs[1] as { error: UpstreamError }).error.kind).toBe('bad_response');
    expect((await req.closed).completed).toBe(false);
  });

  it('a second next() while one is pending rejects; the first still resolves', async () => {
    const s = await open('/long');
    await s.next();
    const first = s.next();
    await expect(s.next()).rejects.toThrow(/pending/);
    // The idle timeout (300 ms) comes before the upstream's next event (2 s).
    expect((await first)!.map((e) => e.type)).toEqual(['error']);
    s.cancel();
  });

  it('an unparseable upstream URL rejects with a connection UpstreamError and leaves no listener', async () => {
    const gone = new ClientGone();
    const opened = openEvents(
      client,
      { method: 'GET', url: 'http://[bad', headers: {} },
      new OpenAiStreamDecoder(),
      {},
      gone,
    );
    await expect(opened).rejects.toMatchObject({ kind: 'connection' });
    expect((gone as unknown as { listeners?: unknown[] }).listeners ?? []).toHaveLength(0);
  });
});

describe('openEvents backpressure', () => {
  // 64 MiB of 1 KiB events, far more than the socket buffers of loopback hold.
  const EVENT = delta('x'.repeat(1000));
  const TOTAL = Math.ceil((64 * 1024 * 1024) / EVENT.length);
  let server: Server;
  let written = 0;
  let base = '';
  beforeAll(async () => {
    server = createServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      written = 0;
      for (let i = 0; i < TOTAL; i++) {
        written += EVENT.length;
        if (!res.write(EVENT)) await new Promise((r) => res.once('drain', r));
        if (res.destroyed) return;
      }
      res.end('data: [DONE]\n\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('a reader that does not ask pauses the upstream; reading on delivers every event in order', async () => {
    const s = await open('/', undefined, base);
    // Wait until the upstream's writes stop moving: the socket was paused.
    let last = -1;
    while (written !== last) {
      last = written;
      await new Promise((r) => setTimeout(r, 300));
    }
    expect(written).toBeLessThan((TOTAL * EVENT.length) / 2);
    let n = 0;
    for (let b = await s.next(); b !== null; b = await s.next()) {
      for (const ev of b) {
        expect(ev.type).toBe('delta');
        n++;
      }
    }
    expect(n).toBe(TOTAL);
  }, 30_000);
});
