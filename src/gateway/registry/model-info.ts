import { MAX_EXACT } from '../../store/column-bounds.js';

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
  | 'internal_reasoning';

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

/** Every name a model goes by (id, upstream name, slug, aliases), as key allow-lists match it. */
export function modelNames(m: ModelInfo): string[] {
  return [m.id, m.upstream_model, defaultUpstreamName(m.id), ...m.aliases];
}

/** The author part of an OpenRouter-style id, or undefined. */
export function authorOf(id: string): string | undefined {
  const slash = id.indexOf('/');
  return slash > 0 ? id.slice(0, slash) : undefined;
}

export function isEmbeddingModel(m: ModelInfo): boolean {
  return m.output_modalities.includes('embeddings');
}
