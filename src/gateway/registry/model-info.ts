import { MAX_EXACT } from '../../store/column-bounds.js';
import { isPlainObject } from '../plain-object.js';

/**
 * The registry entry for one model, in the field names of OpenRouter's model object so
 * `/v1/models` can return it almost as is. Prices are decimal strings of USD per unit.
 */
export type PriceKey =
  | 'prompt'
  | 'completion'
  | 'request'
  | 'image'
  | 'input_cache_read'
  | 'input_cache_write'
  | 'input_cache_write_1h'
  | 'internal_reasoning'
  | 'web_search';

export type Pricing = { prompt: string; completion: string; request: string; image: string } & Partial<
  Record<string, string>
>;

export type ModelSource = 'default' | 'config' | 'admin' | 'discovered';

export interface ModelInfo {
  /** Public id, OpenRouter style (`openai/gpt-4o-mini`), or the upstream's own name for discovered models. */
  id: string;
  name: string;
  /** The name the provider itself uses (`gpt-4o-mini`). */
  upstream_model: string;
  /** Other upstream names of the same model (dated snapshots, `-latest` aliases). */
  aliases: string[];
  /** Unix seconds. */
  created: number;
  context_length: number;
  max_completion_tokens: number | null;
  pricing: Pricing;
  input_modalities: string[];
  output_modalities: string[];
  supported_parameters: string[];
  source: ModelSource;
}

/** What config files and admins may send; every field but `id` is optional. */
export interface ModelInput {
  id: string;
  name?: string;
  upstream_model?: string;
  aliases?: string[];
  created?: number;
  context_length?: number;
  max_completion_tokens?: number | null;
  pricing?: Record<string, string | number>;
  input_modalities?: string[];
  output_modalities?: string[];
  supported_parameters?: string[];
}

/** Context length of a model nobody described (a local server's model that lists none). */
export const FALLBACK_CONTEXT_LENGTH = 8192;

/**
 * A price as OpenRouter writes it: a plain decimal string ("0.00000015", never "1.5e-7"), so
 * clients that parse it with a decimal library and humans reading it agree.
 */
export function normalizePrice(v: string | number, field = 'price'): string {
  const n = typeof v === 'number' ? v : Number(v.trim());
  if (!Number.isFinite(n) || n < 0 || (typeof v === 'string' && v.trim() === ''))
    throw new RangeError(`${field}: must be a non-negative number or numeric string`);
  if (n === 0) return '0';
  // From 1e21 on toFixed answers in exponent form ("1e+300"), which the zero stripping below
  // would cut to "1e+3"; such a number is an integer, written out in full.
  if (n >= 1e21) return BigInt(n).toString();
  const fixed = n.toFixed(15).replace(/0+$/, '').replace(/\.$/, '');
  return fixed === '0' ? n.toExponential() : fixed;
}

/**
 * The largest price an admin may set, in USD per unit (token, request, image, pixel): the largest
 * quota, 2^53 - 1 micro-USD (docs/quotas.md). One unit priced above it would cost more than any
 * quota or spend column can hold; no real price comes near (the dearest tokens cost about
 * 0.0006 USD). Costs still saturate at 2^53 - 1 micro-USD for prices stored before the bound.
 */
export const MAX_PRICE_USD = Math.floor(MAX_EXACT / 1e6);

/** One message per price above MAX_PRICE_USD, each naming its field under `prefix`. */
export function priceBoundProblems(pricing: Record<string, unknown>, prefix = 'pricing'): string[] {
  return Object.entries(pricing)
    .filter(([, v]) => Number(v) > MAX_PRICE_USD)
    .map(([k]) => `${prefix}.${k}: must be a number from 0 to ${MAX_PRICE_USD} (USD per unit)`);
}

export function normalizePricing(p: Record<string, string | number> | undefined, base?: Pricing): Pricing {
  const out: Record<string, string> = { prompt: '0', completion: '0', request: '0', image: '0', ...base };
  for (const [k, v] of Object.entries(p ?? {})) out[k] = normalizePrice(v, `pricing.${k}`);
  return out as Pricing;
}

/** A price key, as `/api/model` accepts it (`prompt`, `input_cache_read`, `image_pixel`, ...). */
const PRICE_KEY = /^[a-z_0-9]{1,64}$/;
/** A price string, as `/api/model` accepts it: digits, a point, an exponent (no hex, no "Infinity"). */
const PRICE_TEXT = /^\s*[0-9.eE+-]+\s*$/;

/** Prices of one model on one channel: registry id -> price key -> decimal string. */
export type PricingOverrides = Record<string, Record<string, string>>;

/** One problem of a pricing override: the field it is about, and the whole message. */
export interface PriceProblem {
  field: string;
  message: string;
}

/**
 * A channel's `settings.pricing` checked and normalized: an object mapping model ids (as the
 * registry knows them) to objects of prices, each priced like a model's own `pricing` (same keys,
 * same numbers or numeric strings, same bound). Ids the registry does not know are kept: a
 * channel's models may be discovered later. `problems` names each bad field under `prefix`
 * (`settings.pricing["acme/m"].prompt`); `value` is undefined when there is any.
 */
export function checkPricingOverrides(
  raw: unknown,
  prefix = 'settings.pricing',
): { value?: PricingOverrides; problems: PriceProblem[] } {
  const problems: PriceProblem[] = [];
  const problem = (field: string, what: string) => problems.push({ field, message: `${field}: ${what}` });
  if (!isPlainObject(raw)) {
    problem(prefix, 'must map model ids to prices ({"<model id>": {"prompt": "0.000001", ...}})');
    return { problems };
  }
  const out: PricingOverrides = {};
  for (const [id, prices] of Object.entries(raw)) {
    const at = `${prefix}[${JSON.stringify(id)}]`;
    if (!id.trim() || id.length > 255 || id !== id.trim()) {
      problem(at, 'must be a model id (1 to 255 characters, no surrounding spaces)');
      continue;
    }
    if (!isPlainObject(prices)) {
      problem(at, 'must be an object of prices (USD per token, request or image)');
      continue;
    }
    const model: Record<string, string> = {};
    for (const [key, v] of Object.entries(prices)) {
      const field = `${at}.${key}`;
      if (!PRICE_KEY.test(key)) {
        problem(
          field,
          'is not a price key (lowercase letters, digits and _, as in prompt or input_cache_read)',
        );
        continue;
      }
      if (!((typeof v === 'string' && PRICE_TEXT.test(v)) || typeof v === 'number')) {
        problem(field, 'must be a non-negative number or numeric string');
        continue;
      }
      try {
        model[key] = normalizePrice(v, field);
      } catch (err) {
        problems.push({ field, message: (err as Error).message });
        continue;
      }
      for (const message of priceBoundProblems({ [key]: model[key] }, at)) problems.push({ field, message });
    }
    out[id] = model;
  }
  return problems.length > 0 ? { problems } : { value: out, problems };
}

/**
 * What a channel charges for `model`: its prices with the channel's override for that model's
 * id laid over them field by field, or the model's own prices (the same object) when the channel
 * overrides none. Worked out once per route target when the catalog is rebuilt. Overrides that
 * do not check (stored by hand, or before they were checked) are ignored rather than failing
 * the rebuild.
 */
export function effectivePricing(model: Pick<ModelInfo, 'id' | 'pricing'>, overrides: unknown): Pricing {
  if (!isPlainObject(overrides)) return model.pricing;
  const mine = overrides[model.id];
  if (mine === undefined) return model.pricing;
  const { value } = checkPricingOverrides({ [model.id]: mine });
  const prices = value?.[model.id];
  return prices && Object.keys(prices).length > 0
    ? ({ ...model.pricing, ...prices } as Pricing)
    : model.pricing;
}

/** Defaults for an entry nobody described, e.g. a model found on a local vLLM/Ollama server. */
export function blankModel(id: string, upstreamModel = id, contextLength?: number): ModelInfo {
  return {
    id,
    name: id,
    upstream_model: upstreamModel,
    aliases: [],
    created: 0,
    context_length: contextLength ?? FALLBACK_CONTEXT_LENGTH,
    max_completion_tokens: null,
    pricing: normalizePricing(undefined),
    input_modalities: ['text'],
    output_modalities: ['text'],
    supported_parameters: [],
    source: 'discovered',
  };
}

/** Layers `input` over `base` (or over blank defaults when there is no base). */
export function mergeModel(base: ModelInfo | undefined, input: ModelInput, source: ModelSource): ModelInfo {
  const start = base ?? blankModel(input.id, input.upstream_model ?? defaultUpstreamName(input.id));
  const pick = <K extends keyof ModelInput>(k: K, fallback: ModelInfo[K & keyof ModelInfo]) =>
    (input[k] !== undefined ? input[k] : fallback) as ModelInfo[K & keyof ModelInfo];
  return {
    id: input.id,
    name: pick('name', base ? start.name : input.id),
    upstream_model: pick('upstream_model', start.upstream_model),
    aliases: pick('aliases', start.aliases),
    created: pick('created', start.created),
    context_length: pick('context_length', start.context_length),
    max_completion_tokens: pick('max_completion_tokens', start.max_completion_tokens),
    pricing: input.pricing ? normalizePricing(input.pricing, start.pricing) : start.pricing,
    input_modalities: pick('input_modalities', start.input_modalities),
    output_modalities: pick('output_modalities', start.output_modalities),
    supported_parameters: pick('supported_parameters', start.supported_parameters),
    source,
  };
}

/** `openai/gpt-4o-mini` -> `gpt-4o-mini`; ids without an author are their own upstream name. */
export function defaultUpstreamName(id: string): string {
  const slash = id.indexOf('/');
  return slash >= 0 ? id.slice(slash + 1) : id;
}

/** The author part of an OpenRouter-style id, or undefined. */
export function authorOf(id: string): string | undefined {
  const slash = id.indexOf('/');
  return slash > 0 ? id.slice(0, slash) : undefined;
}

export function isEmbeddingModel(m: ModelInfo): boolean {
  return m.output_modalities.includes('embeddings');
}
