import { Type } from 'typebox';
import { Role } from '../../access/roles.js';
import { GatewayError, upstreamToGateway } from '../../gateway/errors.js';
import type { PublicChannel } from '../../gateway/registry/channel.js';
import { CHANNEL_KINDS } from '../../gateway/registry/channel-kinds.js';
import { ListingFailedError } from '../../gateway/registry/channel-service.js';
import type { Services } from '../../services.js';
import type { App } from '../app.js';
import { requireUser } from '../auth.js';
import { ok, paging } from '../envelope.js';
import { ADMIN_ONLY, IdParams, INT32_MAX, PageQuery, RowId } from '../schemas.js';

const ChannelFields = {
  kind: Type.Union(
    CHANNEL_KINDS.map((k) => Type.Literal(k)),
    { description: 'upstream wire format' },
  ),
  base_url: Type.String({
    maxLength: 2048,
    description:
      'default per kind when empty; no credentials in it (keys go in keys, other headers in settings.headers)',
  }),
  keys: Type.Array(Type.String({ minLength: 1, maxLength: 4096 }), {
    maxItems: 100,
    description: 'write-only; answers show them masked, and masked values sent back keep the stored key',
  }),
  models: Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 5000 }),
  model_mapping: Type.Record(Type.String(), Type.String({ minLength: 1, maxLength: 255 }), {
    propertyNames: { minLength: 1, maxLength: 255 },
  }),
  priority: Type.Integer({ minimum: -INT32_MAX, maximum: INT32_MAX }),
  weight: Type.Integer({ minimum: 1, maximum: INT32_MAX }),
  status: Type.Integer({ minimum: 1, maximum: 2 }),
  settings: Type.Record(Type.String(), Type.Unknown(), {
    description:
      'provider (the provider name provider.order/only/ignore also select it by, docs/routing.md "Provider preferences"), data_collection, zdr, quantization, rpm, headers, pricing (what this upstream charges per model id, over the model prices: {"<model id>": {"prompt": "0.000001", ...}}, docs/routing.md "Prices per upstream"), and kind-specific options',
  }),
};

const optional = <T extends Record<string, any>>(o: T) =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Type.Optional(v)])) as {
    [K in keyof T]: ReturnType<typeof Type.Optional<T[K]>>;
  };

/** Control, bidi and invisible characters are refused by the service (validateChannel), with a message naming the one found. */
const ChannelName = Type.String({
  minLength: 1,
  maxLength: 128,
  description:
    'trimmed; unique; no control characters (line breaks, tabs, escapes) nor U+2028/U+2029, no bidi controls or invisible characters (docs/catalog.md)',
});

/** `POST /api/channel`; `modelgate channel add` checks its options against it too. */
export const CreateChannel = Type.Object(
  {
    name: ChannelName,
    ...optional(ChannelFields),
    kind: ChannelFields.kind,
  },
  { additionalProperties: false },
);
/** `PUT /api/channel`; `modelgate channel enable|disable` checks against it too. */
export const UpdateChannel = Type.Object(
  {
    id: RowId,
    revision: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: INT32_MAX,
        description:
          'optional precondition: the revision the change was made from (as a GET answered it); when the stored one differs (someone changed the channel since), the answer is 409 and nothing is written',
      }),
    ),
    name: Type.Optional(ChannelName),
    ...optional(ChannelFields),
  },
  { additionalProperties: false },
);
const TestBody = Type.Object(
  { model: Type.Optional(Type.String({ minLength: 1 })) },
  { additionalProperties: false },
);

/** What the answers carry beyond the writable fields (no response schema: it would drop fields). */
const LISTED =
  'Each channel has the writable fields (keys masked), id, created_time, updated_time, revision (moves ' +
  'on by one with every change; PUT may send it back as a precondition) and source: ' +
  '"api" (made in the console or this API), "config" (declared in the config file) or "env" (an ' +
  'environment shortcut, env-<p>). A start puts a config/env channel back as declared, so edits ' +
  'and deletes of one last until the next restart (docs/configuration.md, "Declared channels"). ' +
  'served_models: the model ids it serves now, declared, listed by its GET /models or its ' +
  "provider's own; empty while its model list could not be read (POST /api/channel/:id/models/refresh). " +
  'listing: the outcome of its last model listing (at start, in the periodic rounds, when it was ' +
  'created or changed, or refreshed; on any instance), null when it was never listed: time (Unix ' +
  'seconds, when it ended), ok, models (how many it listed; null when it failed), error_kind (null ' +
  'on success; else the kinds a failed test answers, or empty: an empty list a background listing ' +
  'did not store over the models listed before), upstream_status (null when the upstream never ' +
  'answered) and message.';

const REFRESHED =
  "Reads the upstream's model listing, stores it, and answers the names found. When the listing " +
  'fails, the answer is the upstream failure (502, 504, 429, ...) with data the outcome as the ' +
  "channel's listing now shows it: {time, ok: false, models: null, error_kind, upstream_status, message}.";

const UPDATED =
  'Only the fields sent change, laid over the channel as stored when it is written: two changes ' +
  'of different fields at the same time both land, on one instance or several. With revision ' +
  '(from a GET, POST or PUT answer), the change is made only if the channel is still at that ' +
  'revision, else 409 Conflict and nothing is written: a client that sends fields it did not ' +
  'change (a whole form, settings it read) cannot overwrite a change it has not seen. The answer ' +
  'is the channel as stored, with its new revision.';

const TESTED =
  'Calls the given model, or one the channel serves, with the smallest request (a one-word chat, ' +
  'or one short text to embed). Answers 200 either way, with success false on the envelope and in ' +
  'data when the upstream failed; data has success, latency_ms, model (the id tried), ' +
  'upstream_model (the name sent for it, after model_mapping), endpoint ("chat" or "embeddings"), ' +
  'upstream_status (the HTTP status the upstream failed with; null on success or when it never ' +
  'answered), error_kind (null on success; else auth, payment, not_found, connection, timeout, ' +
  'rate_limited, overloaded, server_error, bad_response, bad_request, context_length, ' +
  'content_filter or too_large; null when the channel cannot make the call at all) and message ' +
  "(the answer's first words, or where it failed and the upstream's message).";

/** `/api/channel`: upstreams, admin only. Keys are masked in every answer and never logged. */
export function registerChannelRoutes(app: App, services: Services): void {
  const admin = requireUser(services, Role.admin);
  const tags = ['channels'];
  const channels = services.registry.channels;
  const served = (c: PublicChannel) => ({ ...c, served_models: channels.servedModels(c.id) });

  app.get(
    '/api/channel',
    {
      schema: {
        tags,
        summary: 'List channels (keys masked)',
        description: `${ADMIN_ONLY} ${LISTED}`,
        querystring: Type.Object(PageQuery),
      },
      onRequest: admin,
    },
    async (request) => {
      const { offset, limit } = paging(request.query);
      const { rows, total } = await channels.list(offset, limit);
      return ok(rows.map(served), total);
    },
  );

  app.get(
    '/api/channel/:id',
    {
      schema: {
        tags,
        summary: 'Get a channel (keys masked)',
        description: `${ADMIN_ONLY} ${LISTED}`,
        params: IdParams,
      },
      onRequest: admin,
    },
    async (request) => ok(served(await channels.get(request.params.id))),
  );

  app.post(
    '/api/channel',
    {
      schema: {
        tags,
        summary: 'Add a channel (an upstream and its keys)',
        description: ADMIN_ONLY,
        body: CreateChannel,
      },
      onRequest: admin,
    },
    async (request) => {
      const { channel } = await channels.create(request.body);
      request.log.info({ actor: request.user!.id, channel_id: channel.id }, 'channel created');
      return ok(served(channel));
    },
  );

  app.put(
    '/api/channel',
    {
      schema: {
        tags,
        summary: 'Update a channel (fields not sent are kept)',
        description: `${ADMIN_ONLY} ${UPDATED}`,
        body: UpdateChannel,
      },
      onRequest: admin,
    },
    async (request) => {
      const { id, revision, ...patch } = request.body;
      const { channel } = await channels.update(id, patch, revision);
      request.log.info(
        { actor: request.user!.id, channel_id: id, fields: Object.keys(patch) },
        'channel updated',
      );
      return ok(served(channel));
    },
  );

  app.delete(
    '/api/channel/:id',
    {
      schema: { tags, summary: 'Delete a channel', description: ADMIN_ONLY, params: IdParams },
      onRequest: admin,
    },
    async (request) => {
      await channels.delete(request.params.id);
      request.log.info({ actor: request.user!.id, channel_id: request.params.id }, 'channel deleted');
      return ok(null);
    },
  );

  app.post(
    '/api/channel/:id/test',
    {
      schema: {
        tags,
        summary: 'Test a channel with one small chat or embeddings call',
        description: `${ADMIN_ONLY} ${TESTED}`,
        params: IdParams,
        body: TestBody,
      },
      onRequest: admin,
      // The body is optional: no body reads as `{}` (the schema would refuse undefined).
      preValidation: (request, _reply, done) => {
        request.body ??= {};
        done();
      },
    },
    async (request) => {
      const result = await channels.test(request.params.id, request.body?.model);
      return { success: result.success, message: result.success ? '' : result.message, data: result };
    },
  );

  app.post(
    '/api/channel/:id/models/refresh',
    {
      schema: {
        tags,
        summary: "Discover the channel's models again from its upstream",
        description: `${ADMIN_ONLY} ${REFRESHED}`,
        params: IdParams,
      },
      onRequest: admin,
    },
    async (request) => {
      try {
        return ok(await channels.refreshModels(request.params.id));
      } catch (err) {
        if (!(err instanceof ListingFailedError)) throw err;
        const e = upstreamToGateway(err);
        throw new GatewayError(e.status, e.message, {
          type: e.type,
          metadata: e.metadata,
          retryAfter: e.retryAfter,
          data: err.listing,
        });
      }
    },
  );
}
