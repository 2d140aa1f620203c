import { once } from 'node:events';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { LOG_REDACT } from '../../src/http/app.js';
import { startGateway } from '../../src/main.js';
import { openDatabase } from '../../src/store/database.js';
import { oaChunk, sse } from '../chat/chat-helpers.js';
import { createTestDatabase } from '../helpers/databases.js';
import { type FakeRoutes, startFakeUpstream } from '../helpers/fake-upstream.js';

const PASSWORD = 'a-root-password-to-hide';
const COMPLETION = {
  id: 'x',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'finished' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
};

function capture(): { log: FastifyBaseLogger; text(): string } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  const log = pino({ level: 'trace', redact: { paths: LOG_REDACT, censor: '[redacted]' } }, sink);
  return { log: log as FastifyBaseLogger, text: () => lines.join('') };
}

async function boot(extra: Record<string, unknown> = {}) {
  const db = await createTestDatabase();
  const config = loadConfig(
    {},
    {
      server: { host: '127.0.0.1', port: 0, serve_console: false, shutdown_grace_ms: 5000 },
      database: { url: db.url },
      auth: { root_password: PASSWORD },
      catalog: { seed: false },
      ...extra,
    },
  );
  return { config, db };
}

describe('operations', () => {
  it('writes JSON log lines with a request id and never a password, cookie or key', async () => {
    const { config, db } = await boot();
    const cap = capture();
    const gw = await startGateway(config, cap.log);
    try {
      const login = await fetch(`${gw.url}/api/user/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'root', password: PASSWORD }),
      });
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      const key = await fetch(`${gw.url}/api/key`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie },
        body: JSON.stringify({ name: 'logged' }),
      }).then((r) => r.json() as Promise<{ data: { key: string } }>);
      await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key.data.key}` } });
      await fetch(`${gw.url}/api/user/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'root', password: `${PASSWORD}-wrong` }),
      });
      const out = cap.text();
      const lines = out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const requests = lines.filter((l) => l.msg === 'request');
      expect(requests.length).toBeGreaterThanOrEqual(4);
      for (const r of requests) expect(r.reqId).toBeTruthy();
      expect(out).not.toContain(PASSWORD);
      expect(out).not.toContain(key.data.key);
      expect(out).not.toContain(cookie.split('=')[1]!);
    } finally {
      await gw.stop();
      await db.drop();
    }
  });

  it('lets an in-flight request finish on shutdown, then refuses new connections, without waiting out the grace', async () => {
    const d = await drainSetup({
      delayMs: 2_000, // long enough that the stop surely begins while it is in flight
      json: COMPLETION,
    });
    try {
      const pending = d.chat(false).then(async (r) => ({
        status: r.status,
        connection: r.headers.get('connection'),
        body: (await r.json()) as any,
      }));
      // In flight: the gateway has forwarded it (the upstream answers 2 s later).
      await expect.poll(() => d.up.requests.length, { timeout: 5_000, interval: 10 }).toBe(1);
      const stopped = d.gw.stop();
      const r = await pending;
      expect(r.status).toBe(200);
      expect(r.body.choices[0].message.content).toBe('finished');
      // Answered after the stop began: the client is told not to reuse the connection.
      expect(r.connection).toBe('close');
      expect(await within5s(stopped)).toBe('stopped');
      await expect(fetch(`${d.gw.url}/healthz`)).rejects.toThrow();
    } finally {
      await d.close();
    }
  });

  it('lets a stream in flight finish on shutdown: every event and [DONE], and the stop ends with it', async () => {
    const events = sse([
      oaChunk({ role: 'assistant', content: 'one ' }),
      oaChunk({ content: 'two ' }),
      oaChunk({ content: 'three' }, 'stop'),
    ]);
    // Stop begins after the first event; the rest trickle in 300 ms apart.
    const d = await drainSetup({
      sse: [events[0]!, { delayMs: 300 }, events[1]!, { delayMs: 300 }, ...events.slice(2)],
    });
    try {
      const reader = (await d.chat(true)).body!.getReader();
      let text = new TextDecoder().decode((await reader.read()).value);
      const stopped = d.gw.stop();
      for (let r = await reader.read(); !r.done; r = await reader.read())
        text += new TextDecoder().decode(r.value);
      expect(text).toContain('"content":"three"');
      expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
      expect(await within5s(stopped)).toBe('stopped');
    } finally {
      await d.close();
    }
  });
  it("answers a request that reaches it while stopping with a 503 in the gateway's error shape, Retry-After and Connection: close", async () => {
    const d = await drainSetup({ delayMs: 2_000, json: COMPLETION });
    try {
      // A connection busy with a request's head when the stop begins is not idle, so the stop
      // does not close it; the head completes once the stop is under way.
      const socket = connect(Number(new URL(d.gw.url).port), '127.0.0.1');
      await once(socket, 'connect');
      let raw = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        raw += chunk;
      });
      const ended = once(socket, 'close');
      socket.write('GET /v1/models HTTP/1.1\r\nHost: gw\r\n');
      const pending = d.chat(false).then((r) => r.status);
      await expect.poll(() => d.up.requests.length, { timeout: 5_000, interval: 10 }).toBe(1);
      const stopped = d.gw.stop();
      await new Promise((r) => setTimeout(r, 100));
      socket.write('authorization: Bearer nothing\r\n\r\n');
      await ended;
      const [head, body] = raw.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 503 /);
      expect(head).toMatch(/\r\nretry-after: \d+/i);
      expect(head).toMatch(/\r\nconnection: close/i);
      expect(head).toMatch(/\r\nx-request-id: /i);
      expect(JSON.parse(body!)).toMatchObject({
        error: { code: 503, type: 'service_unavailable', message: expect.stringContaining('shutting down') },
      });
      // The request in flight is not affected.
      expect(await pending).toBe(200);
      expect(await within5s(stopped)).toBe('stopped');
    } finally {
      await d.close();
    }
  });
});

describe('requests cut by the shutdown grace', () => {
  /** Log lines at warn (40) or above, parsed. */
  const loud = (text: string) =>
    text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((l) => l.level >= 40);

  it('a request still waiting on its upstream when the grace runs out is logged 503 shutdown, with a warning, not as a client that left', async () => {
    const d = await drainSetup({ delayMs: 30_000, json: {} }, 300);
    try {
      const pending = d.chat(false).then(
        (r) => r.status,
        () => 'cut',
      );
      await expect.poll(() => d.up.requests.length, { timeout: 5_000, interval: 10 }).toBe(1);
      expect(await within5s(d.gw.stop())).toBe('stopped');
      expect(await pending).toBe('cut');
      const { logs } = await d.stored();
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatchObject({ status: 503, error_kind: 'shutdown', provider: 'up' });
      // The try in flight is in the trail, ended by the shutdown.
      expect(JSON.parse(logs[0]!.attempts!)).toEqual([
        {
          model: 'acme/m',
          provider: 'up',
          channel_id: expect.any(Number),
          ok: false,
          error_kind: 'shutdown',
          ms: expect.any(Number),
        },
      ]);
      const lines = loud(d.cap.text());
      expect(lines.map((l) => l.level)).toEqual([40]);
      expect(lines[0].msg).toContain('shutting down');
      expect(lines[0].reqId).toBeTruthy();
      expect(d.cap.text()).not.toContain('client disconnected');
    } finally {
      await d.close();
    }
  });

  it('a client that leaves is logged 499 aborted, with nothing at warn or error level', async () => {
    const d = await drainSetup({ delayMs: 30_000, json: {} }, 300);
    try {
      const abort = new AbortController();
      const pending = d.chat(false, abort.signal).then(
        (r) => r.status,
        () => 'left',
      );
      await expect.poll(() => d.up.requests.length, { timeout: 5_000, interval: 10 }).toBe(1);
      abort.abort();
      expect(await pending).toBe('left');
      await expect.poll(async () => (await d.stored()).logs.length, { timeout: 5_000, interval: 20 }).toBe(1);
      const { logs } = await d.stored();
      expect(logs[0]).toMatchObject({ status: 499, error_kind: 'aborted', provider: 'up' });
      expect(JSON.parse(logs[0]!.attempts!)).toMatchObject([{ ok: false, error_kind: 'client_aborted' }]);
      // A client leaving is not the gateway's fault: no "internal error" lines.
      expect(loud(d.cap.text())).toEqual([]);
    } finally {
      await d.close();
    }
  });

  /**
   * [path, body, what ends the stream in-band]: each ingress's own failure ending, so a client
   * (the openai SDK threw `TypeError: terminated`) learns why its stream stopped.
   */
  const CUT_STREAMS: Array<[string, Record<string, unknown>, (rest: string) => void]> = [
    [
      '/v1/chat/completions',
      { stream_options: { include_usage: true } },
      (rest) => {
        const events = rest
          .split('\n\n')
          .filter((e) => e.startsWith('data: '))
          .map((e) => e.slice(6));
        expect(events.at(-1)).toBe('[DONE]');
        const [failed, usage] = events.slice(-3, -1).map((e) => JSON.parse(e));
        expect(failed.error).toMatchObject({ code: 503, message: expect.stringContaining('shutting down') });
        expect(failed.choices[0].finish_reason).toBe('error');
        expect(usage.usage.completion_tokens).toBeGreaterThan(0);
      },
    ],
    [
      '/v1/messages',
      { max_tokens: 100 },
      (rest) => {
        const last = rest.trim().split('\n\n').at(-1)!;
        expect(last).toMatch(/^event: error\n/);
        expect(JSON.parse(last.split('\n')[1]!.slice(6)).error.message).toContain('shutting down');
      },
    ],
    [
      '/v1/responses',
      {},
      (rest) => {
        const last = rest.trim().split('\n\n').at(-1)!;
        expect(last).toMatch(/^event: response\.failed\n/);
        const { response } = JSON.parse(last.split('\n')[1]!.slice(6));
        expect(response).toMatchObject({
          status: 'failed',
          error: { message: expect.stringContaining('shutting down') },
        });
      },
    ],
  ];

  it.each(CUT_STREAMS)(
    '%s: a stream cut by the grace ends with its in-band error, logged 503 shutdown and billed for what was generated',
    async (path, extra, endsInBand) => {
      const d = await drainSetup(
        {
          sse: [
            ...sse([oaChunk({ role: 'assistant', content: 'some words were generated' })], false),
            'hang',
          ],
        },
        300,
      );
      try {
        const input =
          path === '/v1/responses' ? { input: 'hi' } : { messages: [{ role: 'user', content: 'hi' }] };
        const reader = (await d.post(path, { ...input, ...extra, stream: true })).body!.getReader();
        let seen = '';
        while (!seen.includes('generated')) seen += new TextDecoder().decode((await reader.read()).value);
        const rest = (async () => {
          let text = '';
          try {
            for (let r = await reader.read(); !r.done; r = await reader.read())
              text += new TextDecoder().decode(r.value);
            return { text, ended: true };
          } catch {
            return { text, ended: false };
          }
        })();
        expect(await within5s(d.gw.stop())).toBe('stopped');
        // The stream's own ending, and then the connection closed: not a cut mid-stream.
        const { text, ended } = await rest;
        expect(ended).toBe(true);
        endsInBand(text);
        const { logs, spent } = await d.stored();
        expect(logs).toHaveLength(1);
        expect(logs[0]).toMatchObject({ status: 503, error_kind: 'shutdown', stream: 1 });
        expect(JSON.parse(logs[0]!.attempts!)).toMatchObject([
          { provider: 'up', ok: false, error_kind: 'shutdown' },
        ]);
        expect(logs[0]!.completion_tokens).toBeGreaterThan(0);
        expect(Number(logs[0]!.cost_micros)).toBeGreaterThan(0);
        // Settled on what was generated, like a client that left.
        expect(spent).toBe(Number(logs[0]!.cost_micros));
        expect(loud(d.cap.text()).map((l) => [l.level, l.msg.includes('shutting down')])).toEqual([
          [40, true],
        ]);
      } finally {
        await d.close();
      }
    },
  );

  it('a stream whose client takes nothing is still cut once the grace ran out', async () => {
    const d = await drainSetup(
      { sse: [...sse([oaChunk({ role: 'assistant', content: 'x'.repeat(4 << 20) })], false), 'hang'] },
      300,
    );
    try {
      // The client reads the head only: the 4 MiB answer fills the socket's buffers, and the
      // in-band ending can never be written.
      const res = await d.post('/v1/chat/completions', {
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      });
      expect(res.status).toBe(200);
      expect(await within5s(d.gw.stop())).toBe('stopped');
      const { logs } = await d.stored();
      expect(logs[0]).toMatchObject({ status: 503, error_kind: 'shutdown', stream: 1 });
      await res.body?.cancel().catch(() => {});
    } finally {
      await d.close();
    }
  });
});

/**
 * A gateway whose one upstream answers chat with `route`, with a shutdown grace (60 s) no stop
 * may wait out, and an API key: `chat` sends one request, `close` tears it all down (connections
 * first, so a failed run does not wait out the grace).
 */
async function drainSetup(route: FakeRoutes[string], graceMs = 60_000) {
  const up = await startFakeUpstream({ 'POST /v1/chat/completions': route });
  const { config, db } = await boot({
    channels: [
      { name: 'up', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: ['acme/m'] },
    ],
    models: [
      {
        id: 'acme/m',
        context_length: 1000,
        pricing: { prompt: '0.000001', completion: '0.000002' },
      },
    ],
    log: { level: 'silent' },
    server: { host: '127.0.0.1', port: 0, serve_console: false, shutdown_grace_ms: graceMs },
  });
  const cap = capture();
  const gw = await startGateway(config, cap.log);
  const close = async () => {
    gw.app.server.closeAllConnections();
    await gw.stop();
    await up.close();
    await db.drop();
  };
  try {
    const user = (await gw.services.repos.users.byId(1))!;
    const { secret } = await gw.services.apiKeys.create(user, { name: 'drain' });
    const chat = (stream: boolean, signal?: AbortSignal) =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        signal,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
        body: JSON.stringify({ model: 'acme/m', messages: [{ role: 'user', content: 'hi' }], stream }),
      });
    const post = (path: string, body: Record<string, unknown>) =>
      fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
        body: JSON.stringify({ model: 'acme/m', ...body }),
      });
    /** The request logs and the key's spend, read from the database (works after a stop too). */
    const stored = async () => {
      const d = openDatabase(db.url);
      try {
        const logs = await d.db.selectFrom('request_logs').selectAll().execute();
        const keys = await d.db.selectFrom('api_keys').select('quota_used_micros').execute();
        return { logs, spent: Number(keys[0]?.quota_used_micros ?? 0) };
      } finally {
        await d.close();
      }
    };
    return { up, gw, chat, post, close, cap, stored };
  } catch (err) {
    await close();
    throw err;
  }
}

const within5s = (stopped: Promise<void>) =>
  Promise.race([
    stopped.then(() => 'stopped'),
    new Promise((r) => setTimeout(() => r('still stopping after 5 s'), 5_000).unref()),
  ]);
