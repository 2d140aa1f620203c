import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeAnswer, type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { clearRequests, type EmbeddingGateway, startEmbeddingGateway } from './embedding-gateway.js';

/**
 * The `x-modelgate-attempts` header on embeddings failures (docs/routing.md, "attempt trail"):
 * a request that was routed and failed, with a 4xx or a 5xx, carries the trail of the upstream
 * tries it made, as chat does; a request refused before any upstream was tried carries none.
 * Each model has two channels (priority 10 first, then 0), one try each.
 */
const OPENAI = 'openai/text-embedding-3-small';
const VOYAGE = 'voyageai/voyage-multimodal-3';
const OA_ROUTE = 'POST /v1/embeddings';
const VOYAGE_ROUTE = 'POST /v1/multimodalembeddings';

const fixture = (path: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8')) as unknown;
const answer = (status: number, path: string): FakeAnswer => ({ status, json: fixture(path) });

let a: FakeUpstream;
let b: FakeUpstream;
let v1: FakeUpstream;
let v2: FakeUpstream;
let g: EmbeddingGateway;

beforeAll(async () => {
  [a, b, v1, v2] = await Promise.all([
    startFakeUpstream(),
    startFakeUpstream(),
    startFakeUpstream(),
    startFakeUpstream(),
  ]);
  const channel = (name: string, up: FakeUpstream, kind: string, model: string, priority: number) => ({
    name,
    kind,
    base_url: `${up.url}/v1`,
    keys: [`key-${name}`],
    models: [model],
    priority,
  });
  g = await startEmbeddingGateway(
    {
      gateway: { max_attempts: 1, circuit_failures: 1000 },
      channels: [
        {
          ...channel('a', a, 'openai-compatible', OPENAI, 10),
          model_mapping: { [OPENAI]: 'text-embedding-3-small' },
        },
        {
          ...channel('b', b, 'openai-compatible', OPENAI, 0),
          model_mapping: { [OPENAI]: 'text-embedding-3-small' },
        },
        channel('v1', v1, 'voyage', VOYAGE, 10),
        channel('v2', v2, 'voyage', VOYAGE, 0),
      ],
      models: [
        { id: OPENAI, pricing: { prompt: '0.00000002' } },
        { id: VOYAGE, pricing: { prompt: '0.00000012' } },
      ],
    },
    () => [a, b, v1, v2],
  );
});
afterAll(() => g?.close());
beforeEach(() => clearRequests([a, b, v1, v2]));

const embed = (model = OPENAI) =>
  g.gw.call('POST', '/v1/embeddings', { token: g.key, body: { model, input: ['hello', 'world'] } });
const multimodal = (model = VOYAGE) =>
  g.gw.call('POST', '/v1/multimodalembeddings', {
    token: g.key,
    body: { model, inputs: [{ content: [{ type: 'text', text: 'hello' }] }] },
  });

describe('/v1/embeddings failures carry the attempt trail', () => {
  it('every upstream failed: the 5xx names each try', async () => {
    a.on(OA_ROUTE, answer(500, 'openai/error-500.json'));
    b.on(OA_ROUTE, answer(503, 'openai/error-503.json'));
    const r = await embed();
    expect(r.status).toBe(503);
    expect(r.body.error).toBeDefined();
    expect(r.headers.get('x-modelgate-attempts')).toBe(
      `a/${OPENAI}=server_error:500, b/${OPENAI}=overloaded:503`,
    );
  });

  it("an upstream's 400 (a prompt too long, turned into the client's 400 about input) names its try", async () => {
    a.on(OA_ROUTE, answer(400, 'openai-embeddings/error-400.json'));
    const r = await embed();
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ param: 'input' });
    expect(r.headers.get('x-modelgate-attempts')).toBe(`a/${OPENAI}=context_length:400`);
    expect(b.requests).toEqual([]);
  });

  it('refused before any upstream was tried (unknown model, bad body): no header', async () => {
    const unknown = await embed('nope/nothing');
    expect(unknown.status).toBe(404);
    const bad = await g.gw.call('POST', '/v1/embeddings', {
      token: g.key,
      body: { model: OPENAI, input: [''] },
    });
    expect(bad.status).toBe(400);
    for (const r of [unknown, bad]) expect(r.headers.get('x-modelgate-attempts')).toBeNull();
    expect(a.requests).toEqual([]);
  });
});

describe('/v1/multimodalembeddings failures carry the attempt trail', () => {
  it('every upstream failed: the answer names each try', async () => {
    v1.on(VOYAGE_ROUTE, answer(429, 'voyage/error-429.json'));
    v2.on(VOYAGE_ROUTE, { status: 502, body: 'Bad Gateway' });
    const r = await multimodal();
    expect(r.status).toBe(503);
    expect(r.body.detail).toEqual(expect.any(String));
    expect(r.headers.get('x-modelgate-attempts')).toBe(
      `v1/${VOYAGE}=rate_limited:429, v2/${VOYAGE}=overloaded:502`,
    );
  });

  it("Voyage's 400 reaches the client with detail, and names its try", async () => {
    v1.on(VOYAGE_ROUTE, answer(400, 'voyage/error-400.json'));
    const r = await multimodal();
    expect(r.status).toBe(400);
    expect(r.body.detail).toContain("Value 'doc' supplied for argument 'input_type' is not valid");
    expect(r.headers.get('x-modelgate-attempts')).toBe(`v1/${VOYAGE}=bad_request:400`);
    expect(v2.requests).toEqual([]);
  });

  it('refused before any upstream was tried (unknown model, bad body): no header', async () => {
    const unknown = await multimodal('nope/nothing');
    expect(unknown.status).toBe(404);
    const bad = await g.gw.call('POST', '/v1/multimodalembeddings', {
      token: g.key,
      body: { model: VOYAGE, inputs: [] },
    });
    expect(bad.status).toBe(400);
    for (const r of [unknown, bad]) expect(r.headers.get('x-modelgate-attempts')).toBeNull();
    expect(v1.requests).toEqual([]);
  });
});
