import type { ParsedEmbeddingResponse } from './embedding-adapter.js';
import type { UpstreamEmbeddingUsage } from './embedding-request.js';
import { runLimited } from './run-limited.js';

/** Consecutive slices of at most `max` items, so reassembly by concatenation keeps input order. */
export function splitIntoBatches<T>(items: readonly T[], max: number): T[][] {
  if (!Number.isInteger(max) || max < 1)
    throw new RangeError(`batch size must be a positive integer, got ${max}`);
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += max) out.push(items.slice(i, i + max));
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
): Promise<ParsedEmbeddingResponse> {
  const batches = splitIntoBatches(items, max);
  const results: ParsedEmbeddingResponse[] = new Array(batches.length);
  await runLimited(batches.length, concurrency, async (i) => {
    results[i] = await call(batches[i], i * max);
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
