import { Type } from 'typebox';
import { badRequest } from '../../gateway/errors.js';
import { type Endpoint, isAllowed, type ModelInfo } from '../../gateway/registry/index.js';

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
  /** OpenRouter's use-case category: always a 400 here (`filterModels`). */
  category: Type.Optional(Type.String()),
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

export interface ModelFilters {
  endpoint?: Endpoint;
  output_modalities?: string;
  input_modalities?: string;
  supported_parameters?: string;
  q?: string;
  context?: number;
  category?: string;
}

export interface ListParams extends ModelFilters {
  sort?: string;
  offset?: number;
  limit?: number;
}

/** OpenRouter's output modalities (its SDK's `OutputModality`), besides those models here carry. */
const OPENROUTER_OUTPUT_MODALITIES = [
  'text',
  'image',
  'embeddings',
  'audio',
  'video',
  'rerank',
  'speech',
  'transcription',
];
/** OpenRouter's input modalities (its SDK's `InputModality`). */
const OPENROUTER_INPUT_MODALITIES = ['text', 'image', 'file', 'audio', 'video'];

export interface FilterContext {
  /** The key's allow-list (null: every model). */
  allowed: string[] | null;
  /** Whether some enabled upstream serves the model on `endpoint`, as routing decides it. */
  servesOn(modelId: string, endpoint: Endpoint): boolean;
}

/**
 * The models the filters keep, in the order given. Every parameter is checked before any model
 * is looked at, so a mistake is a 400 even when the key may use no model at all.
 */
export function filterModels(models: ModelInfo[], f: ModelFilters, ctx: FilterContext): ModelInfo[] {
  // OpenRouter's categories are rankings of what its users ask models for; the registry has
  // nothing to filter on, and ignoring the parameter would pass every model off as in it.
  if (f.category !== undefined)
    throw badRequest(
      'category: this gateway carries no model categories (OpenRouter ranks its models by what its users use them for); leave category out',
      'category',
    );
  const output = modalityFilter(f.output_modalities, 'output_modalities', models, 'any');
  const input = modalityFilter(f.input_modalities, 'input_modalities', models, 'all');
  const params =
    f.supported_parameters === undefined
      ? undefined
      : commaList(f.supported_parameters, 'supported_parameters');
  // A blank search (a search box left empty) searches for nothing in particular.
  const q = f.q?.trim().toLowerCase() || undefined;
  const { endpoint, context } = f;
  return models.filter(
    (m) =>
      isAllowed(m, ctx.allowed) &&
      (!output || output(m.output_modalities)) &&
      (!input || input(m.input_modalities)) &&
      (!params || params.every((p) => m.supported_parameters.includes(p))) &&
      (q === undefined || m.id.toLowerCase().includes(q) || m.name.toLowerCase().includes(q)) &&
      (context === undefined || m.context_length >= context) &&
      // `endpoint`: only what some enabled upstream serves there, as routing decides it (a
      // model found on a Voyage channel is listed by its modalities as text, yet chats nowhere).
      (!endpoint || ctx.servesOn(m.id, endpoint)),
  );
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
  const known = new Set(output ? ['all', ...OPENROUTER_OUTPUT_MODALITIES] : OPENROUTER_INPUT_MODALITIES);
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
