import { Type } from 'typebox';
import { badRequest } from '../../gateway/errors.js';
import { type Endpoint, isAllowed, type ModelInfo, type NameResolver } from '../../gateway/registry/index.js';
import { INPUT_MODALITIES, OUTPUT_MODALITIES } from '../../gateway/registry/modalities.js';
import { authorOf } from '../../gateway/registry/model-info.js';
import { matchesAny } from '../../gateway/routing/plan.js';
import type { RouteTarget } from '../../gateway/routing/types.js';
import { RangeFields, type RangeFilters, rangeFilter } from './model-list-ranges.js';
import { RefusedFields, type RefusedFilters, refuseUnavailable } from './model-list-refused.js';

/**
 * What `GET /v1/models` (and `/api/v1/models`) takes beside the path: OpenRouter's list
 * parameters (reference openrouter.md §11, @openrouter/sdk's `models.list`), checked and applied
 * to the registry's servable models. The filters are shared with `/api/v1/models/count`, so a
 * count agrees with the list it counts.
 */
export const FilterFields = {
  /** A gateway extension beside OpenRouter's list: the endpoint a model must be served on. */
  endpoint: Type.Optional(Type.Enum(['chat', 'embeddings'])),
  /** OpenRouter's: a comma list of output modalities (any of them), or `all`. */
  output_modalities: Type.Optional(Type.String()),
  /** OpenRouter's: a comma list of input modalities (every one of them). */
  input_modalities: Type.Optional(Type.String()),
  /** OpenRouter's: a comma list of request parameters (every one of them). */
  supported_parameters: Type.Optional(Type.String()),
  /** OpenRouter's free-text search: a case-insensitive substring of the id or the name. */
  q: Type.Optional(Type.String({ maxLength: 200 })),
  /** OpenRouter's minimum context length, in tokens. */
  context: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  /** OpenRouter's: a comma list of authors, the part of the id before `/` (any of them). */
  model_authors: Type.Optional(Type.String()),
  /** OpenRouter's: a comma list of provider names, matched as `provider.only` matches upstreams. */
  providers: Type.Optional(Type.String()),
  /** OpenRouter's: `true` keeps the models some upstream serves with zero data retention. */
  zdr: Type.Optional(Type.String()),
  /** OpenRouter's prices and ages (model-list-ranges.ts). */
  ...RangeFields,
  /** OpenRouter's parameters about figures the gateway does not keep: 400s (model-list-refused.ts). */
  ...RefusedFields,
};

/** The most a page holds, and what it holds when only `offset` is given (OpenRouter's figures). */
export const MAX_PAGE = 1000;
export const DEFAULT_PAGE = 500;

export const ListQuery = Type.Object({
  ...FilterFields,
  sort: Type.Optional(Type.String()),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE })),
});

/** `/api/v1/models/count`: the list's filters, so a count agrees with the list it counts. */
export const CountQuery = Type.Object(FilterFields);

export interface ModelFilters extends RangeFilters, RefusedFilters {
  endpoint?: Endpoint;
  output_modalities?: string;
  input_modalities?: string;
  supported_parameters?: string;
  q?: string;
  context?: number;
  model_authors?: string;
  providers?: string;
  zdr?: string;
}

export interface ListParams extends ModelFilters {
  sort?: string;
  offset?: number;
  limit?: number;
}

/** What the `providers` and `zdr` filters read of an upstream (what routing reads of it). */
export type UpstreamFacts = Pick<RouteTarget, 'channelName' | 'kind' | 'settings'>;

export interface FilterContext {
  /** The key's allow-list (null: every model), read with `registry` (registry/allow-list.ts). */
  allowed: string[] | null;
  registry: NameResolver;
  /** Whether some enabled upstream serves the model on `endpoint`, as routing decides it. */
  servesOn(modelId: string, endpoint: Endpoint): boolean;
  /** The enabled upstreams serving the model on `endpoint`, or on either when it is undefined. */
  upstreams(modelId: string, endpoint: Endpoint | undefined): UpstreamFacts[];
  /** Unix seconds, for the age filters. */
  now: number;
}

/**
 * The models the filters keep, in the order given. Every parameter is checked before any model
 * is looked at, so a mistake is a 400 even when the key may use no model at all.
 */
export function filterModels(models: ModelInfo[], f: ModelFilters, ctx: FilterContext): ModelInfo[] {
  refuseUnavailable(f);
  const output = modalityFilter(f.output_modalities, 'output_modalities', models, 'any');
  const input = modalityFilter(f.input_modalities, 'input_modalities', models, 'all');
  const params =
    f.supported_parameters === undefined
      ? undefined
      : commaList(f.supported_parameters, 'supported_parameters');
  // A blank search (a search box left empty) searches for nothing in particular.
  const q = f.q?.trim().toLowerCase() || undefined;
  const { endpoint, context } = f;
  const authors = f.model_authors === undefined ? undefined : lowerList(f.model_authors, 'model_authors');
  const upstream = upstreamFilter(f);
  const ranges = rangeFilter(f, ctx.now);
  return models.filter(
    (m) =>
      isAllowed(m, ctx.allowed, ctx.registry) &&
      (!output || output(m.output_modalities)) &&
      (!input || input(m.input_modalities)) &&
      (!params || params.every((p) => m.supported_parameters.includes(p))) &&
      (q === undefined || m.id.toLowerCase().includes(q) || m.name.toLowerCase().includes(q)) &&
      (context === undefined || m.context_length >= context) &&
      // `endpoint`: only what some enabled upstream serves there, as routing decides it (a
      // model found on a Voyage channel is listed by its modalities as text, yet chats nowhere).
      (!endpoint || ctx.servesOn(m.id, endpoint)) &&
      (!authors || authors.includes(authorOf(m.id)?.toLowerCase() ?? '')) &&
      (!ranges || ranges(m)) &&
      (!upstream || ctx.upstreams(m.id, endpoint).some(upstream)),
  );
}

/**
 * `providers` and `zdr` as one predicate over a model's upstreams, or undefined for no filter:
 * both are about the upstream a request would go to, so one upstream must meet both (a model
 * whose `acme` channel retains data and whose zero-retention channel is another's is not kept
 * by `providers=acme&zdr=true`). With `endpoint`, only the upstreams serving that endpoint count.
 *
 * `providers` matches as `provider.only` does (routing/plan.ts `matchesAny`): a channel's name,
 * kind or `settings.provider`, whatever the case, a base slug matching its variants. `zdr=true`
 * keeps what `provider.zdr: true` routes to: channels declaring `settings.zdr: true`.
 */
function upstreamFilter(f: ModelFilters): ((u: UpstreamFacts) => boolean) | undefined {
  const names = f.providers === undefined ? undefined : commaList(f.providers, 'providers');
  if (f.zdr !== undefined && f.zdr !== 'true' && f.zdr !== 'false')
    throw badRequest(
      'zdr: must be true (the models some upstream serves with zero data retention) or false (no filter)',
      'zdr',
    );
  const zdr = f.zdr === 'true';
  if (!names && !zdr) return undefined;
  return (u) => (!names || matchesAny(u, names)) && (!zdr || u.settings.zdr === true);
}

/** A comma list (commaList), lower-cased for a case-insensitive match. */
function lowerList(value: string, param: string): string[] {
  return commaList(value, param).map((x) => x.toLowerCase());
}

/** The items of a comma list (spaces around them ignored); an empty list or item is a 400. */
function commaList(value: string, param: string): string[] {
  const items = value.split(',').map((x) => x.trim());
  if (items.some((x) => x === ''))
    throw badRequest(`${param}: must be a comma-separated list of names, without empty items`, param);
  return items;
}

/**
 * A modality list as a predicate over a model's modalities, or undefined for no filter. A name
 * neither OpenRouter nor any model here knows is a 400, so a typo is not an empty list.
 *
 * Output is matched on any of the names, as OpenRouter does (`text,image`: text models and image
 * models), and `all` among them is no filter. Input is matched on every name: a client asking
 * for `text,image` is about to send both, and a model that takes only one of them would fail it.
 */
function modalityFilter(
  value: string | undefined,
  param: 'output_modalities' | 'input_modalities',
  models: ModelInfo[],
  match: 'any' | 'all',
): ((modalities: string[]) => boolean) | undefined {
  if (value === undefined) return undefined;
  const wanted = commaList(value, param);
  const output = param === 'output_modalities';
  // OpenRouter's names, besides those models here carry.
  const known = new Set(output ? ['all', ...OUTPUT_MODALITIES] : INPUT_MODALITIES);
  for (const m of models) for (const x of output ? m.output_modalities : m.input_modalities) known.add(x);
  const unknown = wanted.find((w) => !known.has(w));
  if (unknown !== undefined) {
    const names = [...known].filter((k) => k !== 'all').join(', ');
    throw badRequest(
      `${param}: unknown modality ${JSON.stringify(unknown)}; expected a comma-separated list of ${names}${output ? ', or all' : ''}`,
      param,
    );
  }
  if (output && wanted.includes('all')) return undefined;
  return match === 'any'
    ? (ms) => ms.some((x) => wanted.includes(x))
    : (ms) => wanted.every((w) => ms.includes(w));
}
