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
 * Runs `call` per batch of `splitIntoBatches`, a few at a time. Once a batch fails the whole call
 * has failed: no further batch is started (`runLimited`).
 */
export function sendInBatches<T>(
  items: readonly T[],
  max: number,
  call: (batch: T[]) => Promise<void>,
  concurrency = 4,
  limit?: WeightLimit,
): Promise<void> {
  const batches = splitIntoBatches(items, max, limit);
  return runLimited(batches.length, concurrency, (i) => call(batches[i]!));
}
