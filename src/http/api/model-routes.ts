import { Type } from 'typebox';
import { Role } from '../../access/roles.js';
import type { Services } from '../../services.js';
import type { App } from '../app.js';
import { requireUser } from '../auth.js';
import { ok, paging } from '../envelope.js';
import { ADMIN_ONLY, INT32_MAX, Nullable, PageQuery, UnixSeconds } from '../schemas.js';

const Price = Type.Union([
  Type.String({ pattern: '^\\s*[0-9.eE+-]+\\s*$', 'x-accepts': 'a numeric string' }),
  Type.Number({ minimum: 0 }),
]);
const Names = Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 200 });

const ModelFields = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  // null: no admin value, the config/default description (or the id's own name) applies again.
  upstream_model: Nullable(Type.String({ minLength: 1, maxLength: 255 })),
  // null: no admin list, the lower layers' list applies again (as for each list below).
  aliases: Nullable(Names),
  created: UnixSeconds,
  context_length: Nullable(Type.Integer({ minimum: 1, maximum: INT32_MAX })),
  max_completion_tokens: Type.Union([Type.Integer({ minimum: 1, maximum: INT32_MAX }), Type.Null()]),
  // null: no admin price for that key (PUT removes it; the lower layers' price, else 0, applies).
  pricing: Type.Record(Type.String({ pattern: '^[a-z_0-9]{1,64}$' }), Nullable(Price), {
    description:
      'USD per token (prompt, completion, input_cache_read, input_cache_write, input_cache_write_1h, ...), per request, per image; null removes the admin price of that key',
    // Keys outside the pattern are refused (otherwise their values would skip the Price check).
    additionalProperties: false,
  }),
  input_modalities: Nullable(Names),
  output_modalities: Nullable(Names),
  supported_parameters: Nullable(Names),
};
const ModelBody = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 255, pattern: '^\\S+$' }),
    ...Object.fromEntries(Object.entries(ModelFields).map(([k, v]) => [k, Type.Optional(v)])),
  },
  { additionalProperties: false },
);
const WildcardId = Type.Object({ '*': Type.String({ minLength: 1, maxLength: 255 }) });

/** `/api/model`: the registry; anyone signed in reads, admins write. Ids contain a slash. */
export function registerModelRoutes(app: App, services: Services): void {
  const signedIn = requireUser(services, Role.user);
  const admin = requireUser(services, Role.admin);
  const tags = ['models'];
  const models = services.registry.models;

  app.get(
    '/api/model',
    {
      schema: {
        tags,
        summary: 'List the model registry',
        description:
          'Every known model with pricing, whether an enabled channel serves it (servable), whether an admin entry changes it (overridden) and what describes it below that entry (base_source: default, config, discovered or null); q matches id or name.',
        querystring: Type.Object({
          ...PageQuery,
          servable: Type.Optional(Type.Boolean()),
          q: Type.Optional(Type.String({ maxLength: 100 })),
        }),
      },
      onRequest: signedIn,
    },
    async (request) => {
      const { offset, limit } = paging(request.query);
      const all = models.list({ servable: request.query.servable, q: request.query.q });
      return ok(all.slice(offset, offset + limit), all.length);
    },
  );

  app.get(
    '/api/model/*',
    { schema: { tags, summary: 'Get one model of the registry', params: WildcardId }, onRequest: signedIn },
    async (request) => ok(models.get(request.params['*'])),
  );

  app.post(
    '/api/model',
    {
      schema: {
        tags,
        summary: 'Add an admin entry for a model',
        description: `${ADMIN_ONLY} 409 when one exists, or when the default file or the config file describes the model (use PUT); a model only channels name (discovered) takes a POST of the fields to set.`,
        body: ModelBody,
      },
      onRequest: admin,
    },
    async (request) => {
      const m = await models.create(request.body as any);
      request.log.info({ actor: request.user!.id, model: m.id }, 'model created');
      return ok(m);
    },
  );

  app.put(
    '/api/model',
    {
      schema: {
        tags,
        summary: "Change a model's fields",
        description: `${ADMIN_ONLY} Fields not sent are kept; null unsets upstream_model, context_length, aliases, input_modalities, output_modalities, supported_parameters and a single price (pricing.<key>: null), which then come from the layers below the admin entry again. An empty modality list is a 400; an empty supported_parameters is stored (parameters not known: every one goes).`,
        body: ModelBody,
      },
      onRequest: admin,
    },
    async (request) => {
      const m = await models.update(request.body as any);
      request.log.info({ actor: request.user!.id, model: m.id }, 'model updated');
      return ok(m);
    },
  );

  app.delete(
    '/api/model/*',
    {
      schema: {
        tags,
        summary: "Delete a model's admin entry",
        description: `${ADMIN_ONLY} The model reverts to its configured, listed or default description (base_source), if any; 404 for a model without an admin entry.`,
        params: WildcardId,
      },
      onRequest: admin,
    },
    async (request) => {
      await models.delete(request.params['*']);
      request.log.info({ actor: request.user!.id, model: request.params['*'] }, 'model entry deleted');
      return ok(null);
    },
  );
}
