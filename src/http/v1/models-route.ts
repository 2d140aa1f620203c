import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { ModelInfo } from '../../gateway/registry/index.js';
import type { Services } from '../../services.js';
import type { App } from '../app.js';
import { requireApiKey } from '../auth.js';
import { toWireEndpoints } from './model-endpoints.js';
import {
  CountQuery,
  type FilterContext,
  filterModels,
  type ListParams,
  ListQuery,
  type ModelFilters,
} from './model-list.js';
import { usableModel } from './model-lookup.js';
import { pageOf, parseSort, type Speed, sortModels } from './model-order.js';
import { type ModelsPrefix, toWireModel } from './model-wire.js';

/**
 * What this gateway can serve, limited to the key's allow-list (docs/models.md): the list, its
 * count, one model, and the upstreams serving one model, under `/v1` and `/api/v1`.
 */
export function registerModelsRoute(app: App, services: Services): void {
  const auth = requireApiKey(services);
  const tags = ['models'];

  const list = (prefix: ModelsPrefix) => async (request: FastifyRequest) => {
    const query = request.query as ListParams; // checked by ListQuery
    const sort = parseSort(query.sort);
    // Absent `output_modalities`: no filter, unlike OpenRouter (text only), so the list clients
    // have always read (the openai SDK's models.list()) keeps its embedding models.
    let models = filterModels(services.registry.servableModels(), query, filterContext(services, request));
    if (sort) models = sortModels(models, sort, (m) => speedOf(services, m));
    const page = pageOf(models, query, request.url);
    return { object: 'list', ...page, data: page.data.map((m) => toWireModel(m, prefix)) };
  };
  app.get(
    '/v1/models',
    {
      schema: {
        tags,
        summary: 'List the models this key can use (OpenAI/OpenRouter list shape)',
        description:
          "Models an enabled channel serves, within the key's allowed_models, in id order. OpenRouter's filters: `output_modalities` (a comma list, any of them, or `all`; absent = every model), `input_modalities` (a comma list, all of them), `supported_parameters` (a comma list, all of them), `q` (a case-insensitive substring of the id or name), `context` (at least that many tokens), `model_authors` (a comma list of the id's authors), `providers` (a comma list of provider names, matched against the enabled channels serving the model as `provider.only` matches), `zdr=true` (some channel declaring zero data retention serves it), `min_price`/`max_price` and `min_output_price`/`max_output_price` (the model's prompt and completion prices, USD per million tokens), `min_age_days`/`max_age_days` (days since `created`). `category`, `arch`, `distillable`, `region` and the benchmark and tool-success ranges are a 400 (no such figures here). `endpoint=chat` (or `embeddings`) keeps those some enabled channel serves on that endpoint. `sort`: newest, pricing-low-to-high, pricing-high-to-low, context-high-to-low, throughput-high-to-low, latency-low-to-high. `offset`/`limit` (default 500, at most 1000) page the list; `total_count` counts it before paging and `links.next` is the next page's URL, or null.",
        querystring: ListQuery,
      },
      onRequest: auth,
    },
    list('/v1'),
  );
  // Also where the OpenRouter SDK looks, beside chat (`serverURL: <gateway>/api/v1`).
  app.get(
    '/api/v1/models',
    { schema: { tags, hide: true, querystring: ListQuery }, onRequest: auth },
    list('/api/v1'),
  );

  // OpenRouter's list "filtered by user provider preferences" (@openrouter/sdk `listForUser`).
  // A key's only preferences are its allow-list, which every list here applies: the same list.
  // Only under /api/v1, as the count: `/v1/models/user` is the model named `user`.
  app.get(
    '/api/v1/models/user',
    {
      schema: {
        tags,
        summary: 'List the models this key can use (OpenRouter listForUser)',
        description:
          "`GET /api/v1/models` under OpenRouter's per-user path, with the same parameters: the key's allowed_models is the only per-key preference there is.",
        querystring: ListQuery,
      },
      onRequest: auth,
    },
    list('/api/v1'),
  );

  app.get(
    '/api/v1/models/count',
    {
      schema: {
        tags,
        summary: 'Count the models this key can use (OpenRouter)',
        description:
          "`{data: {count}}`: how many models `GET /api/v1/models` lists with the same filters (without paging). Not served under `/v1/models/`, where `count` would be a model's name.",
        querystring: CountQuery,
      },
      onRequest: auth,
    },
    async (request) => {
      const query = request.query as ModelFilters; // checked by CountQuery
      const models = filterModels(
        services.registry.servableModels(),
        query,
        filterContext(services, request),
      );
      return { data: { count: models.length } };
    },
  );

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
    async (request) =>
      toWireModel(
        usableModel(services.registry, request.principal!.allowedModels, request.params['*']),
        '/v1',
      ),
  );

  // OpenRouter's single model, wrapped (@openrouter/sdk `models.get`). A path of its own, apart
  // from `/v1/models/*`, so it can be served under both prefixes.
  const AuthorSlug = Type.Object({ author: Type.String(), slug: Type.String() });
  const one = (prefix: ModelsPrefix) => async (request: FastifyRequest) => {
    const { author, slug } = request.params as { author: string; slug: string }; // checked by AuthorSlug
    return {
      data: toWireModel(
        usableModel(services.registry, request.principal!.allowedModels, `${author}/${slug}`),
        prefix,
      ),
    };
  };
  app.get(
    '/api/v1/model/:author/:slug',
    {
      schema: {
        tags,
        summary: 'Get one model this key can use, as {data: Model} (OpenRouter)',
        description:
          'The model `author/slug` (an alias answers the model it names) as the list shows it, in `data`; 404 when no channel serves it or the key may not use it.',
        params: AuthorSlug,
      },
      onRequest: auth,
    },
    one('/api/v1'),
  );
  app.get(
    '/v1/model/:author/:slug',
    { schema: { tags, hide: true, params: AuthorSlug }, onRequest: auth },
    one('/v1'),
  );

  // OpenRouter's endpoints list (@openrouter/sdk `endpoints.list`). A path more specific than
  // `/v1/models/*`, which keeps answering `/v1/models/{author}/{slug}` itself.
  const endpointsOf = (request: FastifyRequest, id: string) => {
    const model = usableModel(services.registry, request.principal!.allowedModels, id);
    return {
      data: toWireEndpoints(model, {
        registry: services.registry,
        health: services.chat.health,
        adapterParams: services.chat.planDeps.adapterParams,
      }),
    };
  };
  const endpoints = async (request: FastifyRequest) => {
    const { author, slug } = request.params as { author: string; slug: string }; // checked by AuthorSlug
    return endpointsOf(request, `${author}/${slug}`);
  };
  app.get(
    '/v1/models/:author/:slug/endpoints',
    {
      schema: {
        tags,
        summary: 'List the upstreams serving one model (OpenRouter endpoints list)',
        description:
          '`{data: {id, name, created, description, architecture, endpoints}}`: one endpoint per enabled channel serving the model `author/slug`, best priority first: its name, provider_name, tag (the name `provider.order` takes), context_length, its own pricing, the supported_parameters it takes, quantization, and status (0, -5 half-open circuit, -10 open circuit or every key rejected). No addresses or keys. 404 when no channel serves the model or the key may not use it.',
        params: AuthorSlug,
      },
      onRequest: auth,
    },
    endpoints,
  );
  app.get(
    '/api/v1/models/:author/:slug/endpoints',
    { schema: { tags, hide: true, params: AuthorSlug }, onRequest: auth },
    endpoints,
  );
  // The same list for a model whose id has one segment (known from a local server's listing:
  // `local-llama`, `llama3:8b`), where its `links.details` points. Under `/v1`, a path this
  // route takes from `/v1/models/*` (`/v1/models/acme/endpoints`) still answers the model
  // `acme/endpoints` when there is no model `acme`.
  const OneId = Type.Object({ id: Type.String() });
  app.get(
    '/v1/models/:id/endpoints',
    { schema: { tags, hide: true, params: OneId }, onRequest: auth },
    async (request) => {
      const { id } = request.params as { id: string }; // checked by OneId
      try {
        return endpointsOf(request, id);
      } catch (err) {
        if ((err as { status?: number }).status !== 404) throw err;
        try {
          return toWireModel(
            usableModel(services.registry, request.principal!.allowedModels, `${id}/endpoints`),
            '/v1',
          );
        } catch {
          throw err;
        }
      }
    },
  );
  app.get(
    '/api/v1/models/:id/endpoints',
    { schema: { tags, hide: true, params: OneId }, onRequest: auth },
    async (request) => endpointsOf(request, (request.params as { id: string }).id),
  );
}

/**
 * A model's measured speed, for the throughput and latency sorts: the best figures among the
 * upstreams serving it, from the same health records `provider.sort` routes by (per upstream
 * and model, in this instance's memory; docs/routing.md, "Health and the circuit breaker").
 */
function speedOf(services: Services, m: ModelInfo): Speed {
  let tokensPerSec = Number.NaN;
  let latencyMs = Number.NaN;
  for (const endpoint of ['chat', 'embeddings'] as const)
    for (const t of services.registry.targetsFor(m.id, { endpoint })) {
      const f = services.chat.health.figures(`${t.channelId}:${m.id}`);
      tokensPerSec = best(tokensPerSec, f.tokensPerSec, Math.max);
      latencyMs = best(latencyMs, f.latencyMs, Math.min);
    }
  return { tokensPerSec, latencyMs };
}

/** The better of two figures by `pick`, an unmeasured one (NaN) giving way to the other. */
function best(a: number, b: number, pick: (a: number, b: number) => number): number {
  if (Number.isNaN(a)) return b;
  return Number.isNaN(b) ? a : pick(a, b);
}

function filterContext(services: Services, request: FastifyRequest): FilterContext {
  const { registry } = services;
  return {
    allowed: request.principal!.allowedModels,
    registry,
    servesOn: (id, endpoint) => registry.targetsFor(id, { endpoint }).length > 0,
    upstreams: (id, endpoint) =>
      endpoint
        ? registry.targetsFor(id, { endpoint })
        : [
            ...registry.targetsFor(id, { endpoint: 'chat' }),
            ...registry.targetsFor(id, { endpoint: 'embeddings' }),
          ],
    now: Math.floor(Date.now() / 1000),
  };
}
