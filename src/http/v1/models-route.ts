import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { badRequest, notFound } from '../../gateway/errors.js';
import type { Endpoint } from '../../gateway/registry/catalog.js';
import { isAllowed, type ModelInfo } from '../../gateway/registry/index.js';
import { authorOf } from '../../gateway/registry/model-info.js';
import type { Services } from '../../services.js';
import type { App } from '../app.js';
import { requireApiKey } from '../auth.js';

/** One model in the OpenAI list shape with OpenRouter's fields (openrouter.md §11, §13). */
export function toWireModel(m: ModelInfo) {
  const input = m.input_modalities;
  const output = m.output_modalities;
  return {
    id: m.id,
    object: 'model' as const,
    created: Math.trunc(m.created),
    owned_by: authorOf(m.id) ?? 'modelgate',
    name: m.name,
    canonical_slug: m.id,
    description: '',
    context_length: m.context_length,
    architecture: {
      modality: `${input.join('+')}->${output.join('+')}`,
      input_modalities: [...input],
      output_modalities: [...output],
    },
    pricing: { ...m.pricing },
    top_provider: {
      context_length: m.context_length,
      max_completion_tokens: m.max_completion_tokens,
      is_moderated: false,
    },
    per_request_limits: null,
    supported_parameters: [...m.supported_parameters],
    // Required (nullable) by @openrouter/sdk's strict Model schema.
    default_parameters: null,
    supported_voices: null,
    links: { details: `/v1/models/${m.id}` },
  };
}

const ListQuery = Type.Object({
  /** A gateway extension beside OpenRouter's list: the endpoint a model must be served on. */
  endpoint: Type.Optional(Type.Enum(['chat', 'embeddings'])),
  /** OpenRouter's: a comma list of output modalities (any of them), or `all`. */
  output_modalities: Type.Optional(Type.String()),
  /** OpenRouter's: a comma list of request parameters (every one of them). */
  supported_parameters: Type.Optional(Type.String()),
});

interface ListFilters {
  endpoint?: Endpoint;
  output_modalities?: string;
  supported_parameters?: string;
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

/** The items of a comma list (spaces around them ignored); an empty list or item is a 400. */
function commaList(value: string, param: string): string[] {
  const items = value.split(',').map((x) => x.trim());
  if (items.some((x) => x === ''))
    throw badRequest(`${param}: must be a comma-separated list of names, without empty items`, param);
  return items;
}

/**
 * `output_modalities` as a predicate, or undefined for no filter (absent, or `all` among the
 * items). A name neither OpenRouter nor any model here knows is a 400, so a typo is not an
 * empty list.
 */
function outputFilter(
  value: string | undefined,
  models: ModelInfo[],
): ((m: ModelInfo) => boolean) | undefined {
  if (value === undefined) return undefined;
  const wanted = commaList(value, 'output_modalities');
  const known = new Set(['all', ...OPENROUTER_OUTPUT_MODALITIES]);
  for (const m of models) for (const o of m.output_modalities) known.add(o);
  const unknown = wanted.find((w) => !known.has(w));
  if (unknown !== undefined)
    throw badRequest(
      `output_modalities: unknown modality ${JSON.stringify(unknown)}; expected a comma-separated list of ${[...known].filter((k) => k !== 'all').join(', ')}, or all`,
      'output_modalities',
    );
  if (wanted.includes('all')) return undefined;
  return (m) => m.output_modalities.some((o) => wanted.includes(o));
}

/** `GET /v1/models`: what this gateway can serve, limited to the key's allow-list. */
export function registerModelsRoute(app: App, services: Services): void {
  const auth = requireApiKey(services);
  const tags = ['models'];

  const list = async (request: FastifyRequest) => {
    const allowed = request.principal!.allowedModels;
    const query = request.query as ListFilters; // checked by ListQuery
    const { endpoint } = query;
    const servable = services.registry.servableModels();
    // Absent: no filter, unlike OpenRouter (text only), so the list clients have always read
    // (the openai SDK's models.list()) keeps its embedding models.
    const output = outputFilter(query.output_modalities, servable);
    const params =
      query.supported_parameters === undefined
        ? undefined
        : commaList(query.supported_parameters, 'supported_parameters');
    const data = servable
      .filter((m) => isAllowed(m, allowed))
      .filter((m) => !output || output(m))
      .filter((m) => !params || params.every((p) => m.supported_parameters.includes(p)))
      // `endpoint`: only what some enabled upstream serves there, as routing decides it (a
      // model found on a Voyage channel is listed by its modalities as text, yet chats nowhere).
      .filter((m) => !endpoint || services.registry.targetsFor(m.id, { endpoint }).length > 0)
      .map(toWireModel);
    // One page: `links.next` and `total_count` as OpenRouter's paged list carries them.
    return { object: 'list', data, links: { next: null }, total_count: data.length };
  };
  app.get(
    '/v1/models',
    {
      schema: {
        tags,
        summary: 'List the models this key can use (OpenAI/OpenRouter list shape)',
        description:
          "Models an enabled channel serves, within the key's allowed_models. `output_modalities` (a comma list, any of them, or `all`; absent = every model) and `supported_parameters` (a comma list, all of them) filter as OpenRouter's list does. `endpoint=chat` (or `embeddings`) keeps those some enabled channel serves on that endpoint.",
        querystring: ListQuery,
      },
      onRequest: auth,
    },
    list,
  );
  // Also where the OpenRouter SDK looks, beside chat (`serverURL: <gateway>/api/v1`).
  app.get('/api/v1/models', { schema: { tags, hide: true, querystring: ListQuery }, onRequest: auth }, list);

  app.get(
    '/v1/models/*',
    {
      schema: {
        tags,
        summary: 'Get one model this key can use',
        description:
          'An alias answers the model it names; 404 when no channel serves it or the key may not use it.',
        params: Type.Object({ '*': Type.String() }),
      },
      onRequest: auth,
    },
    async (request) => {
      const id = request.params['*'];
      const model = services.registry.resolve(id);
      const servable = model && services.registry.servableModels().some((m) => m.id === model.id);
      if (!model || !servable || !isAllowed(model, request.principal!.allowedModels))
        throw notFound(`model ${id} not found`);
      return toWireModel(model);
    },
  );
}
