/**
 * Reading a model listing's facts, for the adapters' `listModels.parse`. Each reader checks one
 * value's shape and bounds and answers undefined when it does not hold, so an odd field of one
 * model leaves that fact out instead of failing the whole listing (the models stay served). The
 * bounds are those `/api/model` takes from an admin, so a listed fact never holds what an admin
 * could not write.
 */
import { isPlainObject } from '../../gateway/plain-object.js';
import { INT32_MAX } from '../../store/column-bounds.js';

type Item = Record<string, unknown>;

/**
 * The model objects of a listing's array (`data`; Gemini's `models`). Absent is an empty listing;
 * anything else that is no array is no listing at all (throws, and the refresh fails with
 * "unparseable model list"); items that are no objects are skipped.
 */
export function listItems(v: unknown): Item[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new TypeError('the model list is not an array');
  return v.filter(isPlainObject);
}

/** The field of `v` when `v` is an object, else undefined (`top_provider.max_completion_tokens`). */
export function field(v: unknown, name: string): unknown {
  return isPlainObject(v) ? v[name] : undefined;
}

/** A number of tokens: a whole number from 1 to 2^31 - 1. */
export function tokenCount(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 && v <= INT32_MAX ? v : undefined;
}

/** A listed date later than now plus this is not believed (milliseconds, a bad clock). */
const CREATED_FUTURE_SLACK_S = 86_400;

/** Unix seconds (OpenAI's `created`): a positive whole number, at most a day in the future. */
export function unixSeconds(v: unknown): number | undefined {
  const latest = Math.floor(Date.now() / 1000) + CREATED_FUTURE_SLACK_S;
  return typeof v === 'number' && Number.isInteger(v) && v > 0 && v <= latest ? v : undefined;
}

/** An RFC 3339 date-time (Anthropic's `created_at`) as Unix seconds; the epoch ("unknown") is none. */
export function isoSeconds(v: unknown): number | undefined {
  if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(v)) return undefined;
  const ms = Date.parse(v);
  return Number.isFinite(ms) ? unixSeconds(Math.floor(ms / 1000)) : undefined;
}

/** A display name: a string of 1 to 255 characters once trimmed, without control characters. */
export function label(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const s = v.trim();
  return s.length >= 1 && s.length <= 255 && !/[\u0000-\u001f\u007f]/.test(s) ? s : undefined;
}

/** `text`, `image`, `file`, `audio`, `video`, `embeddings`, ... */
const MODALITY = /^[a-z][a-z0-9_-]{0,31}$/;
/** `tools`, `max_tokens`, `reasoning_effort`, ... */
const PARAMETER = /^[a-z][a-z0-9_]{0,63}$/;
/** As many names as `/api/model` takes in one list. */
const MAX_NAMES = 200;

/** OpenRouter's `architecture.input_modalities` / `output_modalities`: undefined when none checks. */
export function modalities(v: unknown): string[] | undefined {
  return names(v, MODALITY);
}

/**
 * OpenRouter's `supported_parameters`. An empty list is none: the gateway reads an empty list as
 * "not known" (every parameter goes), not as "takes nothing".
 */
export function parameters(v: unknown): string[] | undefined {
  return names(v, PARAMETER);
}

function names(v: unknown, pattern: RegExp): string[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out = [...new Set(v.filter((x): x is string => typeof x === 'string' && pattern.test(x)))];
  return out.length > 0 ? out.slice(0, MAX_NAMES) : undefined;
}

/**
 * The prices the gateway bills or shows (the registry's `PriceKey`); OpenRouter's others
 * (`audio`, `image_output`, `discount`, `overrides`, ...) are left out, as no bill reads them.
 */
const PRICE_KEYS = [
  'prompt',
  'completion',
  'request',
  'image',
  'input_cache_read',
  'input_cache_write',
  'input_cache_write_1h',
  'internal_reasoning',
  'web_search',
] as const;
/**
 * A price as OpenRouter writes it: a string of a non-negative decimal number (USD per unit).
 * OpenRouter's "-1" (a router whose price is decided per request) is no price.
 */
const PRICE = /^\d+(\.\d+)?([eE][-+]?\d+)?$/;

/** OpenRouter's `pricing`: the known keys whose value is a price string; undefined when none. */
export function prices(v: unknown): Record<string, string> | undefined {
  if (!isPlainObject(v)) return undefined;
  const out: Record<string, string> = {};
  for (const k of PRICE_KEYS) {
    const p = v[k];
    if (typeof p === 'string' && PRICE.test(p)) out[k] = p;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
