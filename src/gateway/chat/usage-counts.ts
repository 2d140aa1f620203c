import type { ChatUsage } from './types.js';

/**
 * Whether an upstream's token count is one: a safe non-negative integer. A string (even
 * `"12"`), a negative or fractional number, NaN, null or an absent field is not, and is counted
 * locally instead (`ChatRunner.finish`), like usage not reported at all.
 */
export function isCount(x: unknown): x is number {
  return typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
}

/**
 * Whether the usage an upstream reported can be billed and shown as it is: its prompt and
 * completion counts are counts, and so is its total when it gives one (without one, the encoders
 * add the two). A few type checks, all an ordinary answer costs.
 */
export function countsWellFormed(u: ChatUsage): boolean {
  return (
    isCount(u.prompt_tokens) &&
    isCount(u.completion_tokens) &&
    (u.total_tokens === undefined || isCount(u.total_tokens))
  );
}
