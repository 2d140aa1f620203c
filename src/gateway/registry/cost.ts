import { MAX_EXACT } from '../../store/column-bounds.js';
import type { ModelInfo, Pricing } from './model-info.js';

export interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
  /**
   * Of the completion tokens, those the model spent reasoning (a subset of completion_tokens),
   * billed at `internal_reasoning` when the model has that price, else at `completion`.
   */
  reasoning_tokens?: number;
  /** Prompt tokens served from the provider's cache (a subset of prompt_tokens). */
  cached_tokens?: number;
  /** Prompt tokens written to the cache (a subset of prompt_tokens), where the provider bills them apart. */
  cache_write_tokens?: number;
  /**
   * Of the cache writes, those kept for an hour (a subset of cache_write_tokens: Anthropic's
   * `ttl: "1h"`), billed at `input_cache_write_1h`; the rest are 5-minute writes.
   */
  cache_write_1h_tokens?: number;
  /** Input images, priced per image. */
  images?: number;
  /** Upstream requests billed per request; 1 unless told otherwise. */
  requests?: number;
  /** Web searches the upstream ran (Anthropic's web search tool), priced per search at `web_search`. */
  web_searches?: number;
}

// Prices are held as integer pico-USD (1e-12) so a per-token price of "0.00000015" multiplies
// without the binary rounding that would make 1000 tokens cost 150.00000000000003 micro-USD.
const PICO_PER_USD = 1e12;
const PICO_PER_MICRO = 1e6;
/**
 * Costs saturate at the largest spend the quota columns hold, 2^53 - 1 micro-USD (9 billion USD;
 * src/store/column-bounds.ts). Admin prices are bounded below it (MAX_PRICE_USD), but a price
 * stored before that bound (1e300 USD per token) made the cost Infinity: the reservation threw
 * (a 500 for every request of a key with a quota) and the settlement billed 0.
 */
const MAX_PICO = MAX_EXACT * PICO_PER_MICRO;

function pico(price: string | undefined): number {
  if (!price) return 0;
  const n = Number(price);
  // Bounded, so that a count of 0 times an absurd price is 0, not NaN.
  return Number.isFinite(n) && n > 0 ? Math.min(MAX_PICO, Math.round(n * PICO_PER_USD)) : 0;
}

/**
 * Cost in pico-USD, exact for real prices and saturated at 2^53 - 1 micro-USD; cached and
 * cache-write tokens fall back to the prompt price when unpriced, one-hour cache writes to
 * the (5-minute) cache-write price, and reasoning tokens to the completion price. Web searches cost nothing without a `web_search` price.
 */
export function costPico(pricing: Pricing, usage: Usage): number {
  const total = unboundedPico(pricing, usage);
  return total < MAX_PICO ? total : Number.isNaN(total) ? 0 : MAX_PICO;
}

/**
 * A count as an upstream reported it, for billing: a number (or a numeric string) at least 0.
 * Anything else (a malformed field, `"n/a"`, an object) counts 0 for that part alone. Before, one
 * such field made the whole cost NaN, which bills 0: a broken upstream made every call free.
 */
function count(x: unknown): number {
  const n = typeof x === 'number' ? x : typeof x === 'string' ? Number(x) : Number.NaN;
  return Number.isFinite(n) && n > 0 ? n : 0;
}

function unboundedPico(pricing: Pricing, usage: Usage): number {
  const prompt = count(usage.prompt_tokens);
  const cached = Math.min(prompt, count(usage.cached_tokens));
  const written = Math.min(prompt - cached, count(usage.cache_write_tokens));
  const written1h = Math.min(written, count(usage.cache_write_1h_tokens));
  const p = pico(pricing.prompt);
  const cacheRead = pricing.input_cache_read !== undefined ? pico(pricing.input_cache_read) : p;
  const cacheWrite = pricing.input_cache_write !== undefined ? pico(pricing.input_cache_write) : p;
  const cacheWrite1h =
    pricing.input_cache_write_1h !== undefined ? pico(pricing.input_cache_write_1h) : cacheWrite;
  const completion = count(usage.completion_tokens);
  const c = pico(pricing.completion);
  // OpenRouter's `internal_reasoning`: the reasoning part of the completion at its own price.
  const reasoning = Math.min(completion, count(usage.reasoning_tokens));
  const r = pricing.internal_reasoning !== undefined ? pico(pricing.internal_reasoning) : c;
  return (
    (prompt - cached - written) * p +
    cached * cacheRead +
    (written - written1h) * cacheWrite +
    written1h * cacheWrite1h +
    (completion - reasoning) * c +
    reasoning * r +
    (usage.requests === undefined ? 1 : count(usage.requests)) * pico(pricing.request) +
    count(usage.images) * pico(pricing.image) +
    count(usage.web_searches) * pico(pricing.web_search)
  );
}

/**
 * Cost of one call in integer micro-USD (what quotas and request logs store), rounded to the
 * nearest micro-USD: unbiased over many calls, and at most half a micro-USD off on one (rounding
 * up would bill a call worth 0.01 micro-USD a whole one). Clients see this figure too (`costUsd`).
 */
export function costOf(model: Pick<ModelInfo, 'pricing'>, usage: Usage): number {
  return Math.min(MAX_EXACT, Math.round(costPico(model.pricing, usage) / PICO_PER_MICRO));
}

/** Micro-USD as USD, as request logs show them (`cost`). */
export function usdOfMicros(micros: number): number {
  return micros / PICO_PER_MICRO;
}

/**
 * The `usage.cost` returned to clients: exactly what was charged and logged (`costOf`, in USD),
 * not the unrounded price, so a client adding up its costs finds its quota spend.
 */
export function costUsd(model: Pick<ModelInfo, 'pricing'>, usage: Usage): number {
  return usdOfMicros(costOf(model, usage));
}
