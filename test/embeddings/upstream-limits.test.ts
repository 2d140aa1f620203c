import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeAnswer, type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { type EmbeddingGateway, startEmbeddingGateway } from './embedding-gateway.js';

/**
 * Size limits on embeddings answers (docs/routing.md, "Size limits"): an answer past
 * `gateway.max_embedding_response_bytes` is a bad upstream answer (502, next upstream) and is not
 * read past the limit; an error body is read up to `max_error_body_bytes`. Channel a (priority
 * 10) misbehaves, b serves. The limits are small here so the answers stay small.
 */
const ROUTE = 'POST /v1/embeddings';
const MODEL = 'openai/text-embedding-3-small';
const BODY_LIMIT = 256 * 1024;

let a: FakeUpstream;
let b: FakeUpstream;
let g: EmbeddingGateway;

const vectors = (r: { json: any }): FakeAnswer => ({
  json: {
    object: 'list',
    data: (r.json.input as string[]).map((_, index) => ({
      object: 'embedding',
      index,
      embedding: [0.5, -0.25],
    })),
    model: 'text-embedding-3-small',
    usage: { prompt_tokens: 2, total_tokens: 2 },
  },
});

/** `size` bytes in 8 KiB writes (chunked, no declared length), then the upstream holds on. */
const endless = (status: number, size: number): FakeAnswer => ({
  status,
  headers: { 'content-type': 'application/json' },
  sse: [...Array.from({ length: Math.ceil(size / 8192) }, () => ' '.repeat(8192)), 'hang'],
});

beforeAll(async () => {
  a = await startFakeUpstream();
  b = await startFakeUpstream();
  const channel = (name: string, up: FakeUpstream, priority: number) => ({
    name,
    kind: 'openai-compatible',
    base_url: `${up.url}/v1`,
    keys: [`key-${name}`],
    models: [MODEL],
    model_mapping: { [MODEL]: 'text-embedding-3-small' },
    priority,
  });
  g = await startEmbeddingGateway(
    {
      gateway: {
        max_attempts: 1,
        circuit_failures: 1000,
        max_embedding_response_bytes: BODY_LIMIT,
        max_error_body_bytes: 4096,
      },
      channels: [channel('a', a, 10), channel('b', b, 0)],
      models: [{ id: MODEL, pricing: { prompt: '0.00000002' } }],
    },
    () => [a, b],
  );
});
afterAll(() => g?.close());
beforeEach(() => {
  b.on(ROUTE, vectors);
  a.requests.length = 0;
  b.requests.length = 0;
});

const embed = () =>
  g.gw.call('POST', '/v1/embeddings', { token: g.key, body: { model: MODEL, input: ['hello', 'world'] } });

describe('embeddings answers over the limits', () => {
  it('an answer over max_embedding_response_bytes: the next upstream serves, the answer is not read on', async () => {
    a.on(ROUTE, endless(200, 4 * BODY_LIMIT));
    const r = await embed();
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(2);
    expect(r.headers.get('x-modelgate-attempts')).toBe(`a/${MODEL}=bad_response:200, b/${MODEL}=ok`);
    expect(await a.requests[0]!.closed).toEqual({ completed: false });
  });

  it('over the limit on every upstream: 502', async () => {
    a.on(ROUTE, endless(200, 4 * BODY_LIMIT));
    b.on(ROUTE, endless(200, 4 * BODY_LIMIT));
    const r = await embed();
    expect(r.status).toBe(502);
    expect(r.body.error.message).toMatch(/larger than the gateway's limit \(262144 bytes\)/);
  });

  it('an endless error body is classified by its status from its first bytes', async () => {
    a.on(ROUTE, endless(503, 4 * BODY_LIMIT));
    const r = await embed();
    expect(r.status).toBe(200);
    expect(r.headers.get('x-modelgate-attempts')).toBe(`a/${MODEL}=overloaded:503, b/${MODEL}=ok`);
    expect(await a.requests[0]!.closed).toEqual({ completed: false });
  });
});
