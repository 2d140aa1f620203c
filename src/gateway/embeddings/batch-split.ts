import type { ParsedEmbeddingResponse } from './embedding-adapter.js';
import type { UpstreamEmbeddingUsage } from './embedding-request.js';
import { runLimited } from './run-limited.js';

/** A cap on the summed weights of one batch (estimated tokens), besides its item count. */
export interface WeightLimit {
  /** One per item. */
  weights: readonly number[];
  max: number;
}

/**
 * Consecutive slices of at most `max` items (and, with `limit`, at most `limit.max` in summed
 * weight; an item heavier than that on its own goes alone, for the upstream to judge), so
 * reassembly by concatenation keeps input order.
 */
export function splitIntoBatches<T>(items: readonly T[], max: number, limit?: WeightLimit): T[][] {
  if (!Number.isInteger(max) || max < 1)
    throw new RangeError(`batch size must be a positive integer, got ${max}`);
  const out: T[][] = [];
  let start = 0;
  let weight = 0;
  for (let i = 0; i < items.length; i++) {
    const w = limit ? limit.weights[i]! : 0;
    if (i > start && (i - start === max || (limit && weight + w > limit.max))) {
      out.push(items.slice(start, i));
      start = i;
      weight = 0;
    }
    weight += w;
  }
  if (start < items.length) out.push(items.slice(start));
  return out;
}

/**
 * Runs `call` per batch (a few at a time) and stitches the vectors back in input order.
 * Usage fields are summed when every batch reported them; a field missing from any batch is
 * left out so the caller computes it for the whole request instead of mixing sources.
 * Once a batch fails the whole call has failed: no further batch is started (`runLimited`).
 */
export async function runInBatches<T>(
  items: readonly T[],
  max: number,
  call: (batch: T[], offset: number) => Promise<ParsedEmbeddingResponse>,
  concurrency = 4,
  limit?: WeightLimit,
): Promise<ParsedEmbeddingResponse> {
  const batches = splitIntoBatches(items, max, limit);
  // Slices cut by weight differ in length: each offset is the items before it.
  const offsets = new Array<number>(batches.length);
  for (let i = 0, at = 0; i < batches.length; at += batches[i]!.length, i++) offsets[i] = at;
  const results: ParsedEmbeddingResponse[] = new Array(batches.length);
  await runLimited(batches.length, concurrency, async (i) => {
    results[i] = await call(batches[i]!, offsets[i]!);
  });
  return {
    vectors: results.flatMap((r) => r.vectors),
    usage: sumUsage(results.map((r) => r.usage)),
    dtype: results[0]?.dtype,
  };
}

function sumUsage(list: (UpstreamEmbeddingUsage | undefined)[]): UpstreamEmbeddingUsage | undefined {
  const out: UpstreamEmbeddingUsage = {};
  for (const key of ['textTokens', 'imagePixels', 'totalTokens'] as const) {
    if (list.length > 0 && list.every((u) => u?.[key] !== undefined)) {
      out[key] = list.reduce((sum, u) => sum + (u![key] as number), 0);
    }
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
