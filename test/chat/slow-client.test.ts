/**
 * A streaming client that stops reading: the gateway must stop reading the upstream (backpressure
 * end to end: client socket → SSE route → upstream event reader → upstream socket) instead of
 * buffering the upstream's whole answer, must not count the pause against the upstream's idle
 * timeout, and must carry on when the client reads again; one that takes nothing for
 * `gateway.client_stall_ms` is disconnected.
 */
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postAndReadLate } from '../helpers/read-late.js';
import {
  type ChatGateway,
  model,
  oaChunk,
  oaCompletion,
  requestLogs,
  startChatGateway,
} from './chat-helpers.js';

// ~4 KiB events, far more of them than any socket buffers hold: only what is pulled is written.
// Words, so that counting the text the client got (the upstream reports no usage) stays cheap.
const CONTENT = 'lorem ipsum dolor sit amet '.repeat(150);
const EVENT = `data: ${JSON.stringify(oaChunk({ content: CONTENT }))}\n\n`;
const MAX_EVENTS = 100_000; // ~400 MB
// A non-streamed answer larger than both loopback sockets' buffers (a few MB each) hold.
const BIG_COMPLETION = JSON.stringify(oaCompletion('lorem ipsum dolor sit amet '.repeat(1_200_000)));

let upstream: Server;
let written = 0;
let upstreamClosed: Promise<void> = Promise.resolve();
let c: ChatGateway;
/** The same upstream behind a gateway that disconnects a client stalled for 1 s. */
let strict: ChatGateway;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function drainOrClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done);
      resolve();
    };
    res.on('drain', done).on('close', done);
  });
}

/** Waits until the upstream's writes stop moving for `quietMs`. */
async function untilStill(quietMs: number): Promise<number> {
  let last = -1;
  while (written !== last) {
    last = written;
    await sleep(quietMs);
  }
  return written;
}

beforeAll(async () => {
  upstream = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (s: string) => {
      body += s;
    });
    req.on('end', async () => {
      if (!body.includes('"stream":true')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(BIG_COMPLETION);
        return;
      }
      written = 0;
      upstreamClosed = new Promise((r) => res.on('close', () => r()));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < MAX_EVENTS && !res.destroyed; i++) {
        written += EVENT.length;
        if (!res.write(EVENT)) await drainOrClose(res);
      }
      res.end();
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const port = (upstream.address() as AddressInfo).port;
  const gateway = (limits: Record<string, number>) =>
    startChatGateway({
      channels: [
        {
          name: 'up',
          kind: 'openai-compatible',
          base_url: `http://127.0.0.1:${port}/v1`,
          keys: ['k'],
          models: ['acme/m'],
        },
      ],
      models: [model('acme/m')],
      gateway: { idle_timeout_ms: 500, keep_alive_interval_ms: 60_000, ...limits },
    });
  c = await gateway({});
  strict = await gateway({ client_stall_ms: 1_000 });
});
afterAll(async () => {
  await c?.gw.close();
  await strict?.gw.close();
  upstream.closeAllConnections();
  await new Promise<void>((r) => upstream.close(() => r()));
});

/** Opens a stream through `gw` and returns the response unread. */
function openStream(gw: ChatGateway): Promise<IncomingMessage> {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(`${gw.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
    });
    req.on('response', resolve).on('error', reject);
    req.end(JSON.stringify({ model: 'acme/m', stream: true, messages: [{ role: 'user', content: 'hi' }] }));
  });
}

describe('a streaming client that stops reading', () => {
  it('pauses the upstream (bounded buffering), past the idle timeout, and resumes when the client reads', async () => {
    const res = await openStream(c);
    expect(res.statusCode).toBe(200);
    res.pause();
    const paused = await untilStill(300);
    // Socket buffers on both hops, plus ~64 KiB decoded per stream: megabytes, not the ~400 MB
    // the upstream would write if the gateway read on.
    expect(paused).toBeLessThan(64 * 1024 * 1024);
    await sleep(1_200); // well past idle_timeout_ms (500): the upstream must not be cut

    let head = '';
    let sawError = false;
    res.setEncoding('utf8');
    res.on('data', (s: string) => {
      if (s.includes('"error"')) sawError = true;
      if (head.length < 65_536) head += s;
    });
    res.resume();
    const target = paused + 8 * 1024 * 1024;
    for (let i = 0; i < 200 && written < target; i++) await sleep(50);
    res.destroy(); // the client leaves: the upstream connection goes too
    expect(written).toBeGreaterThanOrEqual(target);
    expect(sawError).toBe(false);
    const first = head.slice(0, head.indexOf('\n\n'));
    expect(JSON.parse(first.slice('data: '.length)).choices[0].delta.content).toBe(CONTENT);
    await upstreamClosed;
  }, 60_000);

  it('is disconnected after client_stall_ms, ending its upstream request, logged 499', async () => {
    const res = await openStream(strict);
    expect(res.statusCode).toBe(200);
    res.pause();
    await untilStill(300);
    // The client is still connected and never reads: the gateway lets the upstream go...
    await upstreamClosed;
    const [log] = await requestLogs(strict);
    expect(log.status).toBe(499);
    expect(log.completion_tokens).toBeGreaterThan(0);
    // ...and closes the connection: reading on, the client finds the stream cut short.
    let body = '';
    res.setEncoding('utf8').on('data', (s: string) => {
      body += s;
    });
    const closed = new Promise<void>((r) => res.socket.once('close', () => r()));
    res.resume();
    await closed;
    expect(body).not.toContain('[DONE]');
  }, 30_000);
});

describe('a client that does not read a non-streamed answer', () => {
  const readLate = (gw: ChatGateway, pauseMs: number) =>
    postAndReadLate(
      `${gw.gw.url}/v1/chat/completions`,
      gw.key,
      { model: 'acme/m', messages: [{ role: 'user', content: 'hi' }] },
      pauseMs,
    );

  it('is disconnected after client_stall_ms when the rest did not fit its socket', async () => {
    const r = await readLate(strict, 2_000);
    expect(r.status).toBe(200);
    expect(r.length).toBeGreaterThan(BIG_COMPLETION.length);
    expect(r.outcome).toBe('cut');
    expect(r.got).toBeLessThan(r.length);
  }, 30_000);

  it('gets the whole answer when it reads within client_stall_ms', async () => {
    const r = await readLate(c, 2_000);
    expect(r).toMatchObject({ status: 200, outcome: 'whole', got: r.length });
  }, 30_000);
});
