import { describe, expect, it } from 'vitest';
import { splitIntoBatches } from '../../src/gateway/embeddings/batch-split.js';
import { bodyLimit } from '../../src/gateway/embeddings/body-weights.js';
import type { EmbeddingAdapter } from '../../src/gateway/embeddings/embedding-adapter.js';
import type { ResolvedEmbeddingRequest } from '../../src/gateway/embeddings/embedding-request.js';
import { UpstreamLimitMemory } from '../../src/gateway/embeddings/upstream-limit-memory.js';
import { inspectImage } from '../../src/gateway/images/image-data.js';
import { openaiEmbeddingAdapter } from '../../src/providers/openai-embeddings/openai-embedding-adapter.js';
import {
  voyageMultimodalAdapter,
  voyageTextAdapter,
} from '../../src/providers/voyage/voyage-embedding-adapter.js';
import { resolvedRequest, textRequest } from '../helpers/embedding-requests.js';
import { makePng } from './test-images.js';

/**
 * A body size remembered for an upstream (docs/embeddings.md, "Batching") splits later requests
 * by the bytes each input adds to the body the adapter builds.
 */
const target = { baseUrl: 'http://tei:8080', upstreamModel: 'bge-m3' };
const bytesOf = (adapter: EmbeddingAdapter, req: ResolvedEmbeddingRequest, inputs: number[]) =>
  Buffer.byteLength(adapter.buildRequest({ ...req, inputs: inputs.map((i) => req.inputs[i]!) }, target).body);

const withImages = resolvedRequest(
  [10, 20, 30, 40].map((w, i) => [
    { type: 'text', text: `caption "${i}" ü` },
    { type: 'image', image: inspectImage(makePng(w, 12)) },
  ]),
);

describe('bodyLimit', () => {
  it.each([
    [
      'openai-compatible',
      openaiEmbeddingAdapter,
      textRequest(['a', 'bb "quoted"', 'ccc ü€', 'd\n'.repeat(50)]),
    ],
    ['voyage text', voyageTextAdapter, textRequest(['a', 'bb "quoted"', 'ccc ü€', 'd\n'.repeat(50)])],
    ['voyage multimodal', voyageMultimodalAdapter, withImages],
  ])('%s: the weights of a batch sum to its body, in bytes', (_, adapter, req) => {
    const all = req.inputs.map((_, i) => i);
    const { weights, max } = bodyLimit(adapter, req, target, all, 10_000);
    const empty = bytesOf(adapter, req, []);
    expect(max).toBe(10_000 - empty + 1);
    for (const batch of [[0], [1, 2], [0, 2, 3], all]) {
      const sum = batch.reduce((s, i) => s + weights[i]!, 0);
      expect(empty - 1 + sum).toBe(bytesOf(adapter, req, batch));
    }
  });

  it('splits a request so each call stays within the body size, on the inputs still to send', () => {
    const req = textRequest(Array.from({ length: 30 }, (_, i) => `input ${i} ${'x'.repeat(i * 3)}`));
    const todo = req.inputs.map((_, i) => i).filter((i) => i % 3 !== 0);
    const limit = bodyLimit(openaiEmbeddingAdapter, req, target, todo, 400);
    const batches = splitIntoBatches(todo, 2048, [limit]);
    expect(batches.length).toBeGreaterThan(1);
    expect(batches.flat()).toEqual(todo);
    for (const b of batches) expect(bytesOf(openaiEmbeddingAdapter, req, b)).toBeLessThanOrEqual(400);
  });
});

describe('UpstreamLimitMemory', () => {
  it('keeps the lower of two values, each kind apart, per upstream', () => {
    const m = new UpstreamLimitMemory();
    m.rememberBodyBytes('1 http://a', 5_000);
    m.rememberBodyBytes('1 http://a', 7_000);
    m.rememberBatchCap('1 http://a', 32);
    expect(m.bodyBytes('1 http://a')).toBe(5_000);
    expect(m.batchCap('1 http://a')).toBe(32);
    expect(m.bodyBytes('1 http://b')).toBeUndefined();
    m.rememberBodyBytes('1 http://a', 3_000);
    expect(m.bodyBytes('1 http://a')).toBe(3_000);
  });
});
