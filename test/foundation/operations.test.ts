import { once } from 'node:events';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startGateway } from '../../src/main.js';
import { oaChunk, sse } from '../chat/chat-helpers.js';
import { boot, capture, drainSetup, PASSWORD, within5s } from './drain-setup.js';

const COMPLETION = {
  id: 'x',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'finished' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
};

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
      socket.write('authorization: Bearer nothing\r\norigin: https://page.example\r\n\r\n');
      await ended;
      const [head, body] = raw.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 503 /);
      expect(head).toMatch(/\r\nretry-after: \d+/i);
      expect(head).toMatch(/\r\nconnection: close/i);
      expect(head).toMatch(/\r\nx-request-id: /i);
      // A browser's page reads it too (docs/architecture.md, "Browser clients (CORS)").
      expect(head).toMatch(/\r\naccess-control-allow-origin: \*/i);
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
