import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openAiCompatibleAdapter } from '../../src/providers/openai-compatible/openai-compatible-adapter.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  type ChatGateway,
  model,
  oaCompletion,
  requestLogs,
  startChatGateway,
  userMsg,
} from './chat-helpers.js';

/**
 * A non-streamed request whose client left while the gateway was still busy with a large
 * upstream answer (reading it, parsing it, counting it, encoding it: seconds for 20 MB, in which
 * the gateway does not look at its client's socket): the client was gone before the answer was
 * written, so the request is logged 499 (`aborted`) like any client that left, and still billed
 * for the answer the upstream completed. Before, it was logged 200, as if the answer had been
 * delivered. Here the client's socket is destroyed while the gateway parses the upstream's answer
 * (a 2 MB one), so its close is waiting when the gateway would write the answer.
 */
const BIG = 'word '.repeat(400_000);
let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': {
      json: oaCompletion(BIG, { prompt_tokens: 5, completion_tokens: 400_000 }),
    },
  });
  c = await startChatGateway({
    channels: [
      { name: 'up', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: ['acme/m'] },
    ],
    models: [model('acme/m')],
    gateway: { retry_base_ms: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

describe('a client that left while the gateway read a large answer', () => {
  it('is logged 499 and billed for the completed answer, the try ok', async () => {
    const u = new URL(c.gw.url);
    let leave: () => void = () => {};
    const real = openAiCompatibleAdapter.parseChatResponse;
    const spy = vi.spyOn(openAiCompatibleAdapter, 'parseChatResponse').mockImplementation((...args) => {
      leave();
      return real(...args);
    });
    try {
      const outcome = await new Promise<string>((resolve) => {
        const req = request({
          host: u.hostname,
          port: u.port,
          path: '/v1/chat/completions',
          method: 'POST',
          headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
        });
        req.on('error', () => resolve('left'));
        req.on('response', (res) => {
          res.resume();
          resolve(`answered ${res.statusCode}`);
        });
        leave = () => req.destroy();
        req.end(JSON.stringify({ model: 'acme/m', messages: userMsg('hi') }));
      });
      expect(outcome).toBe('left');
      expect(spy).toHaveBeenCalledTimes(1);
      let log: any;
      await expect
        .poll(
          async () => {
            log = (await requestLogs(c))[0];
            return log?.status;
          },
          { timeout: 10_000, interval: 50 },
        )
        .toBeDefined();
      expect(log).toMatchObject({
        status: 499,
        provider: 'up',
        error_kind: 'aborted',
        completion_tokens: 400_000,
      });
      expect(log.cost).toBeGreaterThan(0);
      expect(log.attempts).toEqual([
        { model: 'acme/m', provider: 'up', channel_id: expect.any(Number), ok: true, ms: expect.any(Number) },
      ]);
    } finally {
      spy.mockRestore();
    }
  });

  it('a client that stays gets the large answer, logged 200', async () => {
    const res = await fetch(`${c.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'acme/m', messages: userMsg('hi') }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).choices[0].message.content).toBe(BIG);
    const [log] = await requestLogs(c);
    expect(log).toMatchObject({ status: 200, provider: 'up', error_kind: null, completion_tokens: 400_000 });
  });
});
