import { describe, expect, it } from 'vitest';
import { drainSetup, within5s } from './drain-setup.js';

/**
 * Every finished /v1 request leaves one `request` line in the process log (url, status, ms), a
 * client that left too: with status 499, as in the request log, also during a shutdown's drain.
 * Before, Fastify's onResponse hook, which writes the line, runs only for an answer that was
 * written, and a client that left left no line at all.
 */
const requestLines = (text: string) =>
  text
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l))
    .filter((l) => l.msg === 'request');

describe('the process log of a client that left', () => {
  it('has its request line, status 499', async () => {
    const d = await drainSetup({ delayMs: 30_000, json: {} });
    try {
      const abort = new AbortController();
      const pending = d.chat(false, abort.signal).catch(() => 'left');
      await expect.poll(() => d.up.requests.length, { timeout: 5_000, interval: 10 }).toBe(1);
      abort.abort();
      expect(await pending).toBe('left');
      await expect.poll(async () => (await d.stored()).logs.length, { timeout: 5_000, interval: 20 }).toBe(1);
      await expect
        .poll(() => requestLines(d.cap.text()).filter((l) => l.url === '/v1/chat/completions'), {
          timeout: 5_000,
          interval: 20,
        })
        .toHaveLength(1);
      const [line] = requestLines(d.cap.text()).filter((l) => l.url === '/v1/chat/completions');
      expect(line).toMatchObject({ method: 'POST', url: '/v1/chat/completions', status: 499 });
      expect(line.ms).toBeGreaterThanOrEqual(0);
      expect(line.reqId).toBeTruthy();
    } finally {
      await d.close();
    }
  });

  it('has it during a shutdown drain too', async () => {
    const d = await drainSetup({ delayMs: 30_000, json: {} });
    try {
      const abort = new AbortController();
      const pending = d.chat(true, abort.signal).catch(() => 'left');
      await expect.poll(() => d.up.requests.length, { timeout: 5_000, interval: 10 }).toBe(1);
      const stopped = d.gw.stop();
      // The stop is under way (the server no longer accepts) when the client goes.
      await new Promise((r) => setTimeout(r, 50));
      abort.abort();
      await pending;
      expect(await within5s(stopped)).toBe('stopped');
      const lines = requestLines(d.cap.text()).filter((l) => l.url === '/v1/chat/completions');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ method: 'POST', status: 499 });
    } finally {
      await d.close();
    }
  });
});
