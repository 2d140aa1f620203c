import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ChatGateway,
  model,
  oaChunk,
  oaCompletion,
  sse,
  startChatGateway,
} from '../chat/chat-helpers.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';

/**
 * A non-streamed answer's headers come only once the whole answer is generated: its wait is
 * `gateway.non_stream_timeout_ms`, not the first byte's (which a stream's first chunk keeps).
 * Cut at the first byte's, a long answer was paid for upstream, thrown away and asked again.
 */
let up: FakeUpstream;
let c: ChatGateway;
const ROUTE = 'POST /v1/chat/completions';

beforeAll(async () => {
  up = await startFakeUpstream({});
  c = await startChatGateway({
    channels: [
      { name: 'slow', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: ['acme/m'] },
    ],
    models: [model('acme/m')],
    gateway: { retry_base_ms: 1, max_attempts: 1, first_byte_timeout_ms: 300, discover_models: false },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const chat = (stream: boolean) =>
  c.gw.call('POST', '/v1/chat/completions', {
    token: c.key,
    body: { model: 'acme/m', messages: [{ role: 'user', content: 'write a long essay' }], stream },
  });

describe('a non-streamed answer that takes longer than the first-byte timeout', () => {
  it('is waited for (non_stream_timeout_ms, 10 min by default), and asked for once', async () => {
    up.on(ROUTE, { delayMs: 1500, json: oaCompletion('a long essay') });
    const before = up.requests.length;
    const r = await chat(false);
    expect(r.status).toBe(200);
    expect(r.body.choices[0].message.content).toBe('a long essay');
    expect(up.requests.length - before).toBe(1);
  });

  it('a stream still has only the first byte timeout to show something', async () => {
    up.on(ROUTE, { delayMs: 1500, sse: sse([oaChunk({ content: 'late' }), oaChunk({}, 'stop')]) });
    const r = await chat(true);
    expect(r.status).toBe(504);
  });
});
