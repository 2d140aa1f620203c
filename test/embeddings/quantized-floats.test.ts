import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FakeUpstream, ReceivedRequest } from '../helpers/fake-upstream.js';
import { startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  clearRequests,
  type EmbeddingGateway,
  embeddingModel,
  startEmbeddingGateway,
} from './embedding-gateway.js';

/**
 * A quantized `output_dtype` (int8, uint8, binary, ubinary) answered with float vectors by a
 * misbehaving upstream (one that ignores `output_dtype`) is a malformed answer: passed on, it
 * would be labelled int8 and, as base64, cut to bytes the client decodes as garbage. Floats are
 * not converted (Voyage's quantization is its own, calibrated per model), so the answer is
 * refused: the next upstream is tried, and a 502 comes when none answers in the dtype asked.
 */
const MODEL = 'voyage-3.5';
const RANGES = { int8: [-128, 127], uint8: [0, 255], binary: [-128, 127], ubinary: [0, 255] } as const;

/** Voyage's `/v1/embeddings` answer with the given vector for every input. */
const answer = (r: ReceivedRequest, vector: (dtype: string) => number[]) => ({
  json: {
    object: 'list',
    data: (r.json.input as string[]).map((_, index) => ({
      object: 'embedding',
      embedding: vector(r.json.output_dtype ?? 'float'),
      index,
    })),
    model: MODEL,
    usage: { total_tokens: 3 },
  },
});
/** Ignores output_dtype: floats always. */
const floats = (r: ReceivedRequest) => answer(r, () => [0.125, -0.5, 0.75]);
/** Honours output_dtype: whole numbers at both ends of its range. */
const honours = (r: ReceivedRequest) =>
  answer(r, (dtype) => {
    const [lo, hi] = RANGES[dtype as keyof typeof RANGES] ?? [0.5, 0.25];
    return [lo, hi, 1];
  });

let bad: FakeUpstream;
let good: FakeUpstream;
let g: EmbeddingGateway;

beforeAll(async () => {
  bad = await startFakeUpstream({ 'POST /v1/embeddings': floats });
  good = await startFakeUpstream({ 'POST /v1/embeddings': honours });
  const channel = (name: string, up: FakeUpstream, models: string[], priority: number) => ({
    name,
    kind: 'voyage',
    base_url: up.url,
    keys: [`key-${name}`],
    models,
    priority,
  });
  g = await startEmbeddingGateway(
    {
      channels: [channel('bad', bad, [MODEL, 'acme/only-bad'], 10), channel('good', good, [MODEL], 0)],
      models: [embeddingModel(MODEL), embeddingModel('acme/only-bad')],
    },
    () => [bad, good],
  );
});
afterAll(async () => g?.close());
beforeEach(() => clearRequests([bad, good]));

describe('a quantized output_dtype answered with floats', () => {
  it('is refused as a malformed answer and the next upstream serves, for every quantized dtype', async () => {
    for (const dtype of ['int8', 'uint8', 'binary', 'ubinary'] as const) {
      clearRequests([bad, good]);
      const r = await g.embed(MODEL, ['a', 'b'], { body: { output_dtype: dtype } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const [lo, hi] = RANGES[dtype];
      expect(r.body.data.map((d: { embedding: number[] }) => d.embedding)).toEqual([
        [lo, hi, 1],
        [lo, hi, 1],
      ]);
      expect(bad.requests.length).toBeGreaterThanOrEqual(1);
      expect(bad.requests[0]!.json.output_dtype).toBe(dtype);
      expect(good.requests).toHaveLength(1);
    }
  });

  it('is a 502 naming the dtype when no upstream answers in it; float requests are untouched', async () => {
    const r = await g.embed('acme/only-bad', ['a'], { body: { output_dtype: 'int8' } });
    expect(r.status, JSON.stringify(r.body)).toBe(502);
    expect(r.body.error.message).toMatch(/int8/);
    const f = await g.embed('acme/only-bad', ['a']);
    expect(f.status, JSON.stringify(f.body)).toBe(200);
    expect(f.body.data[0].embedding).toEqual([0.125, -0.5, 0.75]);
  });

  it('a whole number out of the dtype range is refused too (uint8 answered with int8 values)', async () => {
    good.on('POST /v1/embeddings', (r) => answer(r, () => [-3, 5, 7]));
    try {
      const r = await g.embed(MODEL, ['a'], { body: { output_dtype: 'uint8' } });
      expect(r.status, JSON.stringify(r.body)).toBe(502);
      const ok = await g.embed(MODEL, ['a'], { body: { output_dtype: 'int8' } });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect(ok.body.data[0].embedding).toEqual([-3, 5, 7]);
    } finally {
      good.on('POST /v1/embeddings', honours);
    }
  });
});
