import { InvalidArgumentError } from 'commander';
import { MAX_QUOTA_USD } from '../access/limit-values.js';
import { INT32_MAX } from '../store/column-bounds.js';

// Option values are checked as they are parsed, so commander's message names the option
// (`option '--quota <usd>' argument 'abc' is invalid. must be ...`), not the stored field.
// Ranges the admin API's schema holds are left to it (see checkBody in cli-support.ts), except
// where a parser already says them.

/** Number, not parseFloat: `2.5abc` is a mistake, not 2.5; nor is an empty value 0. */
const decimal = (v: string) => (v.trim() === '' ? Number.NaN : Number(v));

export const positiveInt = (v: string) => {
  const n = decimal(v);
  if (!Number.isInteger(n) || n < 1 || n > INT32_MAX)
    throw new InvalidArgumentError(`must be a whole number from 1 to ${INT32_MAX}`);
  return n;
};

/** Any whole number; its range is the admin API's (`priority`, `weight`). */
export const wholeNumber = (v: string) => {
  const n = decimal(v);
  if (!Number.isSafeInteger(n)) throw new InvalidArgumentError('must be a whole number');
  return n;
};

export const usd = (v: string) => {
  const n = decimal(v);
  if (!Number.isFinite(n) || n < 0 || n > MAX_QUOTA_USD)
    throw new InvalidArgumentError(`must be a number from 0 to ${MAX_QUOTA_USD} (USD)`);
  return n;
};

/** `a, b,c,` -> ['a', 'b', 'c']: items trimmed, empty ones dropped. */
export const commaList = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const UNIT_SECONDS = { h: 3600, d: 86_400, w: 604_800 } as const;
const DURATION = /^(\d+)([hdw])$/;
const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ]([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d{1,3})?)?(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)?)?$/;

/**
 * `--expires`: a duration from now (`12h`, `30d`, `8w`) or an ISO 8601 date or time
 * (`2027-01-31` is 00:00 UTC that day; a time without an offset is this machine's local time,
 * as JavaScript reads ISO 8601). Returns Unix seconds; a moment that has passed is refused.
 */
export function expiresAt(v: string, nowMs = Date.now()): number {
  const text = v.trim();
  const d = DURATION.exec(text);
  let ms: number;
  if (d) {
    ms = nowMs + Number(d[1]) * UNIT_SECONDS[d[2] as keyof typeof UNIT_SECONDS] * 1000;
  } else {
    const m = ISO.exec(text);
    const [year, month, day] = m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [0, 0, 0];
    // Date.parse rolls 2027-02-30 over to March 2: a day the month lacks is a typo.
    const real = m && month >= 1 && new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day;
    ms = real ? Date.parse(text.replace(' ', 'T')) : Number.NaN;
    if (!Number.isFinite(ms))
      throw new InvalidArgumentError(
        'must be a duration from now (12h, 30d, 8w) or an ISO 8601 date or time (2027-01-31, 2027-01-31T18:00Z)',
      );
  }
  if (ms <= nowMs) throw new InvalidArgumentError(`must be in the future (${text} has passed)`);
  return Math.floor(ms / 1000);
}

/**
 * `--pricing`: a channel's prices as JSON, `{"<model id>": {"prompt": "0.000001", ...}}`. Only the
 * shape is read here; the prices are checked as the admin API checks `settings.pricing`.
 */
export function pricingJson(v: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new InvalidArgumentError(
      'must be a JSON object of model ids and their prices: {"<model id>": {"prompt": "0.000001", "completion": "0.000002"}}',
    );
  return parsed as Record<string, unknown>;
}
