import { describe, expect, it } from 'vitest';
import { oaChunk, sse } from '../chat/chat-helpers.js';
import { drainSetup, within5s } from './drain-setup.js';

/** A response as the shutdown's answer is checked: status, Retry-After, Connection, body. */
const answered = async (r: Response) => ({
  status: r.status,
  retryAfter: r.headers.get('retry-after'),
  connection: r.headers.get('connection'),
  body: await r.json(),
});
const SHUTDOWN_ANSWER = {
  status: 503,
  retryAfter: '1',
  connection: 'close',
  body: {
    error: {
      code: 503,
      type: 'service_unavailable',
      param: null,
      message: expect.stringContaining('shutting down'),
    },
  },
};

describe('requests cut by the shutdown grace', () => {
  /** Log lines at warn (40) or above, parsed. */
  const loud = (text: string) =>
    text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((l) => l.level >= 40);

  it('a request still waiting on its upstream when the grace runs out is answered 503, logged 503 shutdown, with a warning, not as a client that left', async () => {
    const d = await drainSetup({ delayMs: 30_000, json: {} }, 300);
    try {
      const pending = d.chat(false).then(answered, () => 'cut');
      await expect.poll(() => d.up.requests.length, { timeout: 5_000, interval: 10 }).toBe(1);
      expect(await within5s(d.gw.stop())).toBe('stopped');
      expect(await pending).toMatchObject(SHUTDOWN_ANSWER);
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

  it('a stream whose head has not gone out when the grace runs out is answered 503 too, and logged so', async () => {
    const d = await drainSetup({ delayMs: 30_000, json: {} }, 300);
    try {
      const pending = d.chat(true).then(answered, () => 'cut');
      await expect.poll(() => d.up.requests.length, { timeout: 5_000, interval: 10 }).toBe(1);
      expect(await within5s(d.gw.stop())).toBe('stopped');
      expect(await pending).toMatchObject(SHUTDOWN_ANSWER);
      const { logs } = await d.stored();
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatchObject({ status: 503, error_kind: 'shutdown', stream: 1 });
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
