import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeAnswer, type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { type EmbeddingGateway, startEmbeddingGateway } from './embedding-gateway.js';

/**
 * An embeddings upstream answering 200 with a body that is no JSON (cut short) is a bad answer
 * said as chat says it: 502 `unparseable upstream body: ...` with `upstream_status: 200`, on every
 * embeddings adapter. Before, it was "<kind> answered without a data array" with a null status.
 * Each model has one channel, one try.
 */
const CUT = '{"object":"list","data":[{"embedding":[0.1,';
const MODELS = {
  oa: ['openai/text-embedding-3-small', 'openai-compatible', 'POST /v1/embeddings'],
  voy: ['voyageai/voyage-3.5', 'voyage', 'POST /v1/embeddings'],
  jin: ['jinaai/jina-embeddings-v3', 'jina', 'POST /v1/embeddings'],
  coh: ['cohere/embed-v4.0', 'cohere', 'POST /v2/embed'],
} as const;
type Name = keyof typeof MODELS;
const NAMES = Object.keys(MODELS) as Name[];

const ups = {} as Record<Name, FakeUpstream>;
let g: EmbeddingGateway;

beforeAll(async () => {
  for (const n of NAMES) ups[n] = await startFakeUpstream();
  g = await startEmbeddingGateway(
    {
      gateway: { max_attempts: 1, circuit_failures: 1000 },
      channels: NAMES.map((n) => ({
        name: n,
        kind: MODELS[n][1],
        base_url: ups[n].url,
        keys: [`key-${n}`],
        models: [MODELS[n][0]],
      })),
      models: [],
    },
    () => Object.values(ups),
  );
});
afterAll(() => g?.close());

const answering = (n: Name, a: FakeAnswer) => ups[n].on(MODELS[n][2], a);

describe('an embeddings upstream answering 200 with a body that is no JSON', () => {
  it.each(NAMES)('%s: 502 unparseable upstream body, upstream_status 200', async (n) => {
    answering(n, { headers: { 'content-type': 'application/json' }, body: CUT });
    const r = await g.embed(MODELS[n][0], ['hello']);
    expect(r.status, JSON.stringify(r.body)).toBe(502);
    expect(r.body.error.message).toBe(`upstream failed: unparseable upstream body: ${CUT}`);
    expect(r.body.error.metadata).toMatchObject({ upstream_kind: 'bad_response', upstream_status: 200 });
    expect(r.headers.get('x-modelgate-attempts')).toBe(`${n}/${MODELS[n][0]}=bad_response:200`);
  });

  it('a JSON answer without the vectors carries its status 200 too', async () => {
    answering('oa', { json: { object: 'list' } });
    const r = await g.embed(MODELS.oa[0], ['hello']);
    expect(r.status).toBe(502);
    expect(r.body.error.message).toBe('upstream failed: openai-compatible answered without a data array');
    expect(r.body.error.metadata).toMatchObject({ upstream_kind: 'bad_response', upstream_status: 200 });
  });
});
