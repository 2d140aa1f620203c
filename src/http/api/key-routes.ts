import { Type } from 'typebox';
import { Role } from '../../access/roles.js';
import type { Services } from '../../services.js';
import type { App } from '../app.js';
import { requireUser } from '../auth.js';
import { ok, paging } from '../envelope.js';
import { IdParams, INT32_MAX, Nullable, PageQuery, parseIdList, RowId, UnixSeconds } from '../schemas.js';

const KeyFields = {
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  status: Type.Optional(Type.Integer({ minimum: 1, maximum: 2 })),
  expires_time: Type.Optional(Nullable(UnixSeconds)),
  quota_limit: Type.Optional(Nullable(Type.Number({ minimum: 0 }))),
  allowed_models: Type.Optional(
    Nullable(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 1000 })),
  ),
  rpm_limit: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: INT32_MAX }))),
  tpm_limit: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: INT32_MAX }))),
  // Admins, on another user's key: false hands it back to its owner, true holds it as it is
  // (src/access/key-hold.ts). On your own key, only its current value.
  admin_managed: Type.Optional(Type.Boolean()),
};

/** `POST /api/key`; `modelgate key create` checks its options against it too. */
export const CreateKey = Type.Object(
  { ...KeyFields, user_id: Type.Optional(RowId) },
  { additionalProperties: false },
);
const UpdateKey = Type.Object({ id: RowId, ...KeyFields }, { additionalProperties: false });

const OWN_KEYS =
  "Your own keys; admins see every user's and change those of users whose role is below theirs (root: all).";
const HELD =
  ' A key an admin created or changed for another user is admin-managed (admin_managed): its owner may rename, disable and delete it and tighten its limits, but not loosen quota_limit, rpm_limit, tpm_limit, allowed_models or expires_time, nor enable it when an admin disabled it (admin_disabled): 403 naming the field. An admin sends admin_managed false to hand a key back; handing back the last held key of a user also lifts keys_admin_managed, so they may create keys again.';

export function registerKeyRoutes(app: App, services: Services): void {
  const signedIn = requireUser(services, Role.user);
  const tags = ['api keys'];

  app.get(
    '/api/key',
    {
      schema: {
        tags,
        summary: 'List API keys (secrets never shown)',
        description: `${OWN_KEYS} Narrow with user_id (admins) or ids.`,
        querystring: Type.Object({
          ...PageQuery,
          user_id: Type.Optional(RowId),
          // `ids=3,17,42`: only these keys (the console names the keys of a usage chart with
          // it). Paged like the rest of the list; ids not visible to the caller are left out.
          ids: Type.Optional(Type.String()),
        }),
      },
      onRequest: signedIn,
    },
    async (request) => {
      const { offset, limit } = paging(request.query);
      const ids = request.query.ids === undefined ? undefined : parseIdList(request.query.ids, 'ids');
      const { rows, total } = await services.apiKeys.list(
        request.user!,
        request.query.user_id,
        offset,
        limit,
        ids,
      );
      return ok(await services.apiKeys.publicKeys(rows), total);
    },
  );

  app.get(
    '/api/key/:id',
    {
      schema: {
        tags,
        summary: 'Get an API key (secret never shown)',
        description: OWN_KEYS,
        params: IdParams,
      },
      onRequest: signedIn,
    },
    async (request) =>
      ok(await services.apiKeys.publicKey(await services.apiKeys.owned(request.user!, request.params.id))),
  );

  app.post(
    '/api/key',
    {
      schema: {
        tags,
        summary: 'Create an API key for /v1',
        description:
          'The secret (sk-...) is in this answer only. Admins may create one for another user (user_id): it is admin-managed (see PUT), unless admin_managed is false.',
        body: CreateKey,
      },
      onRequest: signedIn,
    },
    async (request) => {
      const { row, secret } = await services.apiKeys.create(request.user!, request.body);
      request.log.info({ actor: request.user!.id, key_id: row.id }, 'api key created');
      return ok({ ...(await services.apiKeys.publicKey(row)), key: secret });
    },
  );

  app.put(
    '/api/key',
    {
      schema: {
        tags,
        summary: 'Update an API key (fields not sent are kept)',
        description: OWN_KEYS + HELD,
        body: UpdateKey,
      },
      onRequest: signedIn,
    },
    async (request) => {
      const { id, ...patch } = request.body;
      const row = await services.apiKeys.update(request.user!, id, patch);
      request.log.info(
        { actor: request.user!.id, key_id: id, fields: Object.keys(patch) },
        'api key updated',
      );
      return ok(await services.apiKeys.publicKey(row));
    },
  );

  app.delete(
    '/api/key/:id',
    {
      schema: { tags, summary: 'Delete an API key', description: OWN_KEYS, params: IdParams },
      onRequest: signedIn,
    },
    async (request) => {
      await services.apiKeys.delete(request.user!, request.params.id);
      request.log.info({ actor: request.user!.id, key_id: request.params.id }, 'api key deleted');
      return ok(null);
    },
  );
}
