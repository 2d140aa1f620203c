import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { notFound } from '../../gateway/errors.js';
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

/** A gateway extension beside OpenRouter's list: the endpoint a model must be served on. */
const ListQuery = Type.Object({ endpoint: Type.Optional(Type.Enum(['chat', 'embeddings'])) });

/** `GET /v1/models`: what this gateway can serve, limited to the key's allow-list. */
export function registerModelsRoute(app: App, services: Services): void {
  const auth = requireApiKey(services);
  const tags = ['models'];

  const list = async (request: FastifyRequest) => {
    const allowed = request.principal!.allowedModels;
    const { endpoint } = request.query as { endpoint?: Endpoint }; // checked by ListQuery
    const data = services.registry
      .servableModels()
      .filter((m) => isAllowed(m, allowed))
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
          "Models an enabled channel serves, within the key's allowed_models. `endpoint=chat` (or `embeddings`) keeps those some enabled channel serves on that endpoint.",
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
