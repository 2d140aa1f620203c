import type { CancelSignal } from '../cancel.js';

/**
 * Runs `task(0)` .. `task(count - 1)`, at most `concurrency` at a time, in index order. The first
 * failure is the result: no further task starts (those in flight finish), since the caller's
 * request has already failed and more work would be wasted (an upstream billing batches whose
 * vectors are thrown away, images downloaded for a request that is already a 400). The same
 * holds once `signal` fires (the client left): the run fails with its reason before the next task.
 */
export async function runLimited(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
  signal?: CancelSignal,
): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < count) {
      try {
        if (signal?.aborted) throw signal.reason;
        await task(next++);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}
