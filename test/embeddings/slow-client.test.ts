/**
 * An embeddings client that never reads its answer: one that does not take the part of the
 * answer its socket could not hold within `gateway.client_stall_ms` is disconnected, instead of
 * keeping the connection and megabytes of vectors in the gateway for good.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { postAndReadLate } from '../helpers/read-late.js';

const INPUTS = 512;
const DIMS = 2048; // 512 x 2048 floats: ~20 MB of JSON, more than both loopback sockets hold
const vector = Array.from({ length: DIMS }, (_, i) => Math.sin(i + 0.5) / 3);

let up: FakeUpstream;
let gw: TestGateway;
let key: string;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/embeddings': (r) => ({
      json: {
        object: 'list',
        data: (r.json.input as string[]).map((_, index) => ({
          object: 'embedding',
          index,
          embedding: vector,
        })),
        model: 'text-embedding-3-small',
        usage: { prompt_tokens: INPUTS, total_tokens: INPUTS },
      },
    }),
  });
  gw = await startTestGateway({
    gateway: { discover_models: false, max_attempts: 1, client_stall_ms: 1_000 },
    channels: [
      {
        name: 'openai',
        kind: 'openai-compatible',
        base_url: `${up.url}/v1`,
        keys: ['k'],
        models: ['openai/text-embedding-3-small'],
      },
    ],
    models: [{ id: 'openai/text-embedding-3-small', pricing: { prompt: '0.000001' } }],
  });
  const cookie = await gw.login();
  key = (await gw.call('POST', '/api/key', { cookie, body: { name: 'emb' } })).body.data.key;
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

/** Asks for the vectors, leaves the answer unread for `pauseMs`, then reads what arrives. */
const readLate = (pauseMs: number) =>
  postAndReadLate(
    `${gw.url}/v1/embeddings`,
    key,
    { model: 'openai/text-embedding-3-small', input: Array.from({ length: INPUTS }, (_, i) => `text ${i}`) },
    pauseMs,
  );

describe('an embeddings client that does not read its answer', () => {
  it('gets it whole when it reads within client_stall_ms', async () => {
    const r = await readLate(200);
    expect(r.length).toBeGreaterThan(16 * 1024 * 1024);
    expect(r).toMatchObject({ status: 200, outcome: 'whole', got: r.length });
  }, 30_000);

  it('is disconnected after client_stall_ms when the rest did not fit its socket', async () => {
    const r = await readLate(2_000);
    expect(r.status).toBe(200);
    expect(r.outcome).toBe('cut');
    expect(r.got).toBeLessThan(r.length);
  }, 30_000);
});
