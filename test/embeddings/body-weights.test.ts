import { describe, expect, it } from 'vitest';
import { splitIntoBatches } from '../../src/gateway/embeddings/batch-split.js';
import { bodyLimit } from '../../src/gateway/embeddings/body-weights.js';
import type { EmbeddingAdapter } from '../../src/gateway/embeddings/embedding-adapter.js';
import type { ResolvedEmbeddingRequest } from '../../src/gateway/embeddings/embedding-request.js';
import { UpstreamLimitMemory } from '../../src/gateway/embeddings/upstream-limit-memory.js';
import { inspectImage } from '../../src/gateway/images/image-data.js';
import { cohereEmbeddingAdapter } from '../../src/providers/cohere/cohere-embedding-adapter.js';
import { jinaEmbeddingAdapter } from '../../src/providers/jina/jina-embedding-adapter.js';
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

  // Jina and Cohere send a batch with an image otherwise than one without: Jina wraps each text
  // in {"text": ...}, Cohere moves every input from `texts` to `inputs[].content[]`. So a text
  // input weighs more in a batch with an image than alone. The estimate is never under the body,
  // and exact for every batch with an image.
  const texts = [
    'plain',
    'quote " backslash \\ newline \n tab \t',
    'control \u0001\u001f del \u007f',
    'ü€ 日本語 😀 \u2028\u2029',
    'lone surrogate \ud800 and \udfff',
  ];
  const mixedBatch = resolvedRequest(
    [
      ...texts.map((text) => [{ type: 'text' as const, text }]),
      [{ type: 'image', image: inspectImage(makePng(9, 7)) }],
      [
        { type: 'text', text: 'caption "é" \\' },
        { type: 'image', image: inspectImage(makePng(5, 3)) },
      ],
      [
        { type: 'text', text: 'two' },
        { type: 'text', text: 'parts ✓' },
      ],
    ],
    { inputType: 'query', dimensions: 256 },
  );
  it.each([
    ['jina', jinaEmbeddingAdapter],
    ['cohere', cohereEmbeddingAdapter],
  ])(
    '%s: the estimate of every batch of a mixed request is at least its body, and exact with an image',
    (_, adapter) => {
      const all = mixedBatch.inputs.map((_, i) => i);
      const { weights, max } = bodyLimit(adapter, mixedBatch, target, all, 100_000);
      const base = 100_000 - max; // empty - 1
      const hasImage = (i: number) => mixedBatch.inputs[i]!.some((p) => p.type === 'image');
      // Every non-empty subset of the inputs, in order (the batches are consecutive slices of
      // what is still to send, which may be any subset).
      for (let mask = 1; mask < 1 << all.length; mask++) {
        const batch = all.filter((i) => mask & (1 << i));
        const estimate = base + batch.reduce((s, i) => s + weights[i]!, 0);
        const body = bytesOf(adapter, mixedBatch, batch);
        if (batch.some(hasImage)) expect(estimate, `batch ${batch}`).toBe(body);
        else expect(estimate, `batch ${batch}`).toBeGreaterThanOrEqual(body);
      }
    },
  );

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
