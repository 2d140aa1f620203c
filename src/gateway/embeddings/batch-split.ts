import { runLimited } from './run-limited.js';

/** A cap on the summed weights of one batch (estimated tokens, body bytes), besides its item count. */
export interface WeightLimit {
  /** One per item. */
  weights: readonly number[];
  max: number;
}

/**
 * Consecutive slices of at most `max` items (and, for each of `limits`, at most its `max` in
 * summed weight; an item heavier than that on its own goes alone, for the upstream to judge), so
 * reassembly by concatenation keeps input order.
 */
export function splitIntoBatches<T>(
  items: readonly T[],
  max: number,
  limits: readonly WeightLimit[] = [],
): T[][] {
  if (!Number.isInteger(max) || max < 1)
    throw new RangeError(`batch size must be a positive integer, got ${max}`);
  const out: T[][] = [];
  const sums = limits.map(() => 0);
  let start = 0;
  for (let i = 0; i < items.length; i++) {
    const over = limits.some((l, k) => sums[k]! + l.weights[i]! > l.max);
    if (i > start && (i - start === max || over)) {
      out.push(items.slice(start, i));
      start = i;
      sums.fill(0);
    }
    limits.forEach((l, k) => {
      sums[k]! += l.weights[i]!;
    });
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
  limits: readonly WeightLimit[] = [],
): Promise<void> {
  const batches = splitIntoBatches(items, max, limits);
  return runLimited(batches.length, concurrency, (i) => call(batches[i]!));
}
