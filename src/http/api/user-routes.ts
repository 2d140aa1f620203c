import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { toPublicUser } from '../../access/public-user.js';
import { Role } from '../../access/roles.js';
import { notFound } from '../../gateway/errors.js';
import type { Services } from '../../services.js';
import { limitPerAddress } from '../address-limit.js';
import type { App } from '../app.js';
import { requireUser, resolveUser, SESSION_COOKIE } from '../auth.js';
import { anonymousBodyLimit } from '../body-limits.js';
import { ok, paging } from '../envelope.js';
import { ADMIN_ONLY, IdParams, INT32_MAX, Nullable, PageQuery, RowId, UnixSeconds } from '../schemas.js';

const Login = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 64 }),
    password: Type.String({ minLength: 1, maxLength: 256 }),
  },
  { additionalProperties: false },
);

const UserFields = {
  username: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  password: Type.Optional(Type.String({ minLength: 8, maxLength: 256 })),
  display_name: Type.Optional(Type.String({ maxLength: 128 })),
  email: Type.Optional(Type.String({ maxLength: 255 })),
  role: Type.Optional(Type.Integer({ minimum: -INT32_MAX, maximum: INT32_MAX })),
  status: Type.Optional(Type.Integer({ minimum: 1, maximum: 2 })),
  default_model: Type.Optional(Type.String({ maxLength: 255 })),
  quota_limit: Type.Optional(Nullable(Type.Number({ minimum: 0 }))),
  // An admin manages the user's API keys: new ones come from an admin (docs/architecture.md).
  keys_admin_managed: Type.Optional(Type.Boolean()),
};

const SelfPatch = Type.Object(
  {
    password: UserFields.password,
    current_password: Type.Optional(Type.String({ maxLength: 256 })),
    display_name: UserFields.display_name,
    email: UserFields.email,
    default_model: UserFields.default_model,
  },
  { additionalProperties: false },
);

const CreateUser = Type.Object(
  {
    ...UserFields,
    username: Type.String({ minLength: 1, maxLength: 64 }),
    password: Type.String({ minLength: 8, maxLength: 256 }),
  },
  { additionalProperties: false },
);
const UpdateUser = Type.Object({ id: RowId, ...UserFields }, { additionalProperties: false });

const CreateToken = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128 }),
    expires_time: Type.Optional(Nullable(UnixSeconds)),
  },
  { additionalProperties: false },
);

export function registerUserRoutes(app: App, services: Services): void {
  const signedIn = requireUser(services, Role.user);
  const admin = requireUser(services, Role.admin);
  const tags = ['users'];
  const { cookie_secure } = services.config.auth;
  /** The session cookie's attributes, the same for setting it and for clearing it. */
  const sessionCookie = (request: FastifyRequest) => ({
    httpOnly: true,
    sameSite: 'strict' as const,
    path: '/',
    secure: cookie_secure === 'auto' ? request.protocol === 'https' : cookie_secure,
  });

  app.post(
    '/api/user/login',
    {
      schema: {
        tags,
        summary: 'Sign in with a username and password',
        description:
          'Sets the mg_session cookie and answers the user. The username matches in any letter case (usernames are unique ignoring case). Limited per client address (auth.login_rate_per_minute): 429 with Retry-After past it.',
        body: Login,
      },
      bodyLimit: anonymousBodyLimit(services.config),
      // Counted before the body is read: a malformed or schema-failing body is an attempt too,
      // else it could be sent without end, each one parsed.
      onRequest: async (request, reply) => {
        const perMinute = services.config.auth.login_rate_per_minute;
        if (perMinute > 0)
          await limitPerAddress(services.rateLimiter, request, reply, {
            name: 'login',
            scope: 'login_ip',
            perMinute,
            what: `sign-in is limited to ${perMinute} attempts`,
          });
      },
    },
    async (request, reply) => {
      const { user, session, maxAge } = await services.users.login(
        request.body.username,
        request.body.password,
      );
      reply.setCookie(SESSION_COOKIE, session, { ...sessionCookie(request), maxAge });
      request.log.info({ user_id: user.id }, 'user signed in');
      return ok(toPublicUser(user));
    },
  );

  app.post(
    '/api/user/logout',
    {
      schema: {
        tags,
        summary: 'Sign out',
        description: 'Ends the session of the mg_session cookie, if any, and clears the cookie.',
      },
      bodyLimit: anonymousBodyLimit(services.config),
    },
    async (request, reply) => {
      const session = request.cookies[SESSION_COOKIE];
      if (session) await services.users.logout(session);
      // With the attributes it was set with: a browser matches the cookie by name and path, but a
      // clearing cookie without them was itself a cookie without HttpOnly and with SameSite=Lax.
      reply.clearCookie(SESSION_COOKIE, sessionCookie(request));
      return ok(null);
    },
  );

  app.get(
    '/api/user/self',
    { schema: { tags, summary: 'The signed-in user' }, onRequest: signedIn },
    async (request) => ok(toPublicUser(request.user!)),
  );

  // What the console asks on every page load: signed out is an answer (data null), not a 401 a
  // browser logs as a failed request.
  app.get(
    '/api/user/session',
    {
      schema: {
        tags,
        summary: 'The signed-in user, or null',
        description:
          'As GET /api/user/self, but 200 with data null when no session cookie or access token is sent, or the session has ended. An invalid access token is still a 401.',
      },
    },
    async (request) => {
      const user = await resolveUser(services, request);
      return ok(user ? toPublicUser(user) : null);
    },
  );

  app.put(
    '/api/user/self',
    {
      schema: {
        tags,
        summary: 'Update your own profile or password',
        description:
          "A new password needs current_password, and ends the user's other sessions (this one stays). Emails are unique ignoring letter case: another user's is a 409.",
        body: SelfPatch,
      },
      onRequest: signedIn,
    },
    async (request) =>
      ok(
        toPublicUser(
          await services.users.updateSelf(request.user!, request.body, request.cookies[SESSION_COOKIE]),
        ),
      ),
  );

  app.get(
    '/api/user/tokens',
    { schema: { tags, summary: 'List your personal access tokens' }, onRequest: signedIn },
    async (request) => {
      const rows = await services.users.listTokens(request.user!);
      return ok(
        rows.map(({ token_hash: _h, ...t }) => t),
        rows.length,
      );
    },
  );

  app.post(
    '/api/user/tokens',
    {
      schema: {
        tags,
        summary: 'Create a personal access token for /api',
        description: 'The token is in this answer only.',
        body: CreateToken,
      },
      onRequest: signedIn,
    },
    async (request) => {
      const { row, secret } = await services.users.createToken(
        request.user!,
        request.body.name,
        request.body.expires_time ?? null,
      );
      const { token_hash: _h, ...rest } = row;
      return ok({ ...rest, token: secret });
    },
  );

  app.delete(
    '/api/user/tokens/:id',
    {
      schema: { tags, summary: 'Delete one of your personal access tokens', params: IdParams },
      onRequest: signedIn,
    },
    async (request) => {
      await services.users.deleteToken(request.user!, request.params.id);
      return ok(null);
    },
  );

  app.get(
    '/api/user',
    {
      schema: {
        tags,
        summary: 'List users',
        description: `${ADMIN_ONLY} keyword matches a literal part of the username, ignoring case.`,
        querystring: Type.Object({ ...PageQuery, keyword: Type.Optional(Type.String({ maxLength: 64 })) }),
      },
      onRequest: admin,
    },
    async (request) => {
      const { offset, limit } = paging(request.query);
      const { rows, total } = await services.users.list(offset, limit, request.query.keyword);
      return ok(rows.map(toPublicUser), total);
    },
  );

  app.get(
    '/api/user/:id',
    { schema: { tags, summary: 'Get a user', description: ADMIN_ONLY, params: IdParams }, onRequest: admin },
    async (request) => {
      const user = await services.users.get(request.params.id);
      if (!user) throw notFound(`user ${request.params.id} not found`);
      return ok(toPublicUser(user));
    },
  );

  app.post(
    '/api/user',
    {
      schema: {
        tags,
        summary: 'Create a user',
        description: `${ADMIN_ONLY} Below root, the role must be below your own (only root makes admins and roots). Usernames, and emails where set, are unique ignoring letter case: another spelling of a taken one is a 409 naming the field.`,
        body: CreateUser,
      },
      onRequest: admin,
    },
    async (request) => {
      const user = await services.users.create(request.user!, request.body);
      request.log.info({ actor: request.user!.id, user_id: user.id, role: user.role }, 'user created');
      return ok(toPublicUser(user));
    },
  );

  app.put(
    '/api/user',
    {
      schema: {
        tags,
        summary: 'Update a user (fields not sent are kept)',
        description: `${ADMIN_ONLY} Yourself or users whose role is below yours (a root: anyone), changed only while their role is still below yours; roles below your own (a root: any). Below root, your own role, status, quota and password are not changed here (403; your password: PUT /api/user/self). A new password ends the user's sessions. Renaming to another spelling of a taken name, or changing the email to another user's (both unique ignoring letter case), is a 409.`,
        body: UpdateUser,
      },
      onRequest: admin,
    },
    async (request) => {
      const { id, ...patch } = request.body;
      const user = await services.users.update(request.user!, id, patch, request.cookies[SESSION_COOKIE]);
      request.log.info({ actor: request.user!.id, user_id: id, fields: Object.keys(patch) }, 'user updated');
      return ok(toPublicUser(user));
    },
  );

  app.delete(
    '/api/user/:id',
    {
      schema: {
        tags,
        summary: 'Delete a user',
        description: `${ADMIN_ONLY} Not yourself (403); users whose role is below yours, or anyone for a root (the last root stays).`,
        params: IdParams,
      },
      onRequest: admin,
    },
    async (request) => {
      await services.users.delete(request.user!, request.params.id);
      request.log.info({ actor: request.user!.id, user_id: request.params.id }, 'user deleted');
      return ok(null);
    },
  );
}
