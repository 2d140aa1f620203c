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

/** A detail count as billing reads it (a number or numeric string), whole, from 0 to `cap`. */
function detail(x: unknown, cap: number): number {
  const n = typeof x === 'number' ? x : typeof x === 'string' ? Number(x) : Number.NaN;
  return Number.isFinite(n) && n > 0 ? Math.min(cap, Math.round(n)) : 0;
}

/**
 * The usage with its details within their totals, as billing reads them: cached tokens at most
 * the prompt, cache writes at most the prompt's uncached rest, one-hour writes at most the
 * writes, reasoning tokens at most the completion; a detail that is no count (negative, a
 * word) is 0. An upstream that reported 50 cached tokens of a 10-token prompt was passed on to
 * the client as it was. The same object when nothing needs it (the ordinary answer); the
 * details' other fields are kept.
 */
export function withDetailsInBounds(u: ChatUsage): ChatUsage {
  const prompt = isCount(u.prompt_tokens) ? u.prompt_tokens : 0;
  const completion = isCount(u.completion_tokens) ? u.completion_tokens : 0;
  let out = u;
  const pd = u.prompt_tokens_details;
  if (pd && typeof pd === 'object') {
    const cached = detail(pd.cached_tokens, prompt);
    const written = detail(pd.cache_write_tokens, prompt - cached);
    const written1h = detail(pd.cache_write_1h_tokens, written);
    if (
      cached !== pd.cached_tokens ||
      (pd.cache_write_tokens !== undefined && written !== pd.cache_write_tokens) ||
      (pd.cache_write_1h_tokens !== undefined && written1h !== pd.cache_write_1h_tokens)
    ) {
      const details = { ...pd, cached_tokens: cached };
      if (pd.cache_write_tokens !== undefined) details.cache_write_tokens = written;
      if (pd.cache_write_1h_tokens !== undefined) details.cache_write_1h_tokens = written1h;
      out = { ...out, prompt_tokens_details: details };
    }
  }
  const cd = u.completion_tokens_details;
  if (cd && typeof cd === 'object' && cd.reasoning_tokens !== undefined && cd.reasoning_tokens !== null) {
    const reasoning = detail(cd.reasoning_tokens, completion);
    if (reasoning !== cd.reasoning_tokens)
      out = { ...out, completion_tokens_details: { ...cd, reasoning_tokens: reasoning } };
  }
  return out;
}
