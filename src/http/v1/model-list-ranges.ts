import { Type } from 'typebox';
import type { ModelInfo } from '../../gateway/registry/index.js';

/**
 * OpenRouter's range filters of the models list that the registry can answer: prices, from the
 * model's own `pricing` (what the list shows, and what the `pricing-*` sorts order by), and age,
 * from its `created`. Bounds are inclusive; a lower bound above the upper one lists nothing.
 */
const Price = Type.Optional(Type.Number({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }));
const Days = Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }));

export const RangeFields = {
  /** OpenRouter's: the least prompt price, USD per million input tokens. */
  min_price: Price,
  /** OpenRouter's: the most prompt price, USD per million input tokens. */
  max_price: Price,
  /** OpenRouter's: the least completion price, USD per million output tokens. */
  min_output_price: Price,
  /** OpenRouter's: the most completion price, USD per million output tokens. */
  max_output_price: Price,
  /** OpenRouter's: the least age, in days since the model's `created`. */
  min_age_days: Days,
  /** OpenRouter's: the most age, in days since the model's `created`. */
  max_age_days: Days,
};

export interface RangeFilters {
  min_price?: number;
  max_price?: number;
  min_output_price?: number;
  max_output_price?: number;
  min_age_days?: number;
  max_age_days?: number;
}

/**
 * The registry's prices are decimal strings per token, the bounds per million tokens: the
 * product is not exact in binary (0.0000001 * 1e6 is 0.09999999999999999), so a bound is met
 * within a billionth of a dollar per million, as routing's `provider.max_price` is.
 */
const SLACK = 1e-9;
const DAY = 86_400;

/** A predicate over models for the ranges given, or undefined when none is. */
export function rangeFilter(f: RangeFilters, nowSeconds: number): ((m: ModelInfo) => boolean) | undefined {
  const checks: ((m: ModelInfo) => boolean)[] = [];
  const perMillion = (price: string) => Number(price) * 1e6;
  const within = (x: number, min: number | undefined, max: number | undefined) =>
    (min === undefined || x >= min - SLACK) && (max === undefined || x <= max + SLACK);
  if (f.min_price !== undefined || f.max_price !== undefined)
    checks.push((m) => within(perMillion(m.pricing.prompt), f.min_price, f.max_price));
  if (f.min_output_price !== undefined || f.max_output_price !== undefined)
    checks.push((m) => within(perMillion(m.pricing.completion), f.min_output_price, f.max_output_price));
  if (f.min_age_days !== undefined || f.max_age_days !== undefined)
    // `created` 0 is a model no one dated (a local server's): its age is unknown, so it meets no
    // bound, rather than passing for 56 years old.
    checks.push(
      (m) => m.created > 0 && within((nowSeconds - m.created) / DAY, f.min_age_days, f.max_age_days),
    );
  if (checks.length === 0) return undefined;
  return (m) => checks.every((c) => c(m));
}
