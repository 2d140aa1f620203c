import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KeyPrincipal } from '../access/api-keys.js';
import { Role, Status } from '../access/roles.js';
import { SIGNED_OUT } from '../access/user-sessions.js';
import { forbidden, GatewayError, unauthorized } from '../gateway/errors.js';
import type { Services } from '../services.js';
import type { UserRow } from '../store/users-repo.js';
import { limitPerMinute } from './address-limit.js';

export const SESSION_COOKIE = 'mg_session';

declare module 'fastify' {
  interface FastifyRequest {
    user: UserRow | null;
    principal: KeyPrincipal | null;
  }
}

const BEARER = /^Bearer\s+(.+)$/i;
/** Printable ASCII, never whitespace (`\s` also matches U+00A0 and other Latin-1 spaces). */
const visible = (c: number) => c > 32 && c < 127;

function bearer(request: FastifyRequest): string | undefined {
  const h = request.headers.authorization;
  if (!h) return undefined;
  // The usual form, "Bearer <token>" with one space and nothing to trim, without the regex.
  if (h.startsWith('Bearer ') && visible(h.charCodeAt(7)) && visible(h.charCodeAt(h.length - 1)))
    return h.slice(7);
  const m = BEARER.exec(h);
  return m ? m[1]!.trim() : undefined;
}

/** The signed-in user from the session cookie or a personal access token, or null. */
export async function resolveUser(services: Services, request: FastifyRequest): Promise<UserRow | null> {
  const token = bearer(request);
  if (token) {
    if (token.startsWith('sk-'))
      throw unauthorized('API keys are for /v1 calls; use a session or access token');
    const user = await services.users.byAccessToken(token);
    if (!user) throw unauthorized('invalid or revoked access token');
    // Still a 401 (the credential does not sign anyone in now), told apart as API keys' owners are:
    // the token works again when the user is enabled again.
    if (user.status !== Status.enabled) throw unauthorized('the owner of this access token is disabled');
    return user;
  }
  const session = request.cookies?.[SESSION_COOKIE];
  if (session) return (await services.users.bySession(session)) ?? null;
  return null;
}

type OpenApiSecurity = Array<Record<string, string[]>>;
const SECURITY = new WeakMap<object, OpenApiSecurity>();
const USER_SECURITY: OpenApiSecurity = [{ session: [] }, { accessToken: [] }];
const API_KEY_SECURITY: OpenApiSecurity = [{ apiKey: [] }];

/**
 * The OpenAPI `security` of a route whose onRequest hooks include `requireUser` or
 * `requireApiKey`, so /docs shows which credential each operation takes (app.ts fills it in for
 * routes that do not declare their own).
 */
export function securityOf(hooks: unknown): OpenApiSecurity | undefined {
  for (const h of [hooks].flat()) if (typeof h === 'function' && SECURITY.has(h)) return SECURITY.get(h);
  return undefined;
}

/** onRequest hook (runs before body parsing, so 401/403 come before 400): a signed-in user with at least `minRole`. */
export function requireUser(services: Services, minRole: number = Role.user) {
  const countWrite = apiWriteLimit(services);
  const hook = async (request: FastifyRequest, reply: FastifyReply) => {
    const user = await resolveUser(services, request);
    if (!user) throw unauthorized(SIGNED_OUT);
    if (user.role < minRole) throw forbidden(`requires the ${minRole >= Role.root ? 'root' : 'admin'} role`);
    request.user = user;
    await countWrite(request, reply, user);
  };
  SECURITY.set(hook, USER_SECURITY);
  return hook;
}

/**
 * onRequest hook of a public route that changes something (counting a catalog download): a
 * caller whose session or access token signs someone in makes the write as that user
 * (`request.user`), and it counts against their `auth.api_write_rate_per_minute` like any other
 * write of theirs; they are exempt from the per-address catalog limit (limit-hooks), so it is
 * the one limit they have there. Anyone else is anonymous, limited per address only: a
 * credential that signs no one in is no error on a public route, just no user.
 */
export function optionalUser(services: Services) {
  const countWrite = apiWriteLimit(services);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (!request.headers.authorization && !request.headers.cookie) return;
    const user = await resolveUser(services, request).catch(() => null);
    if (!user) return;
    request.user = user;
    await countWrite(request, reply, user);
  };
}

/**
 * Counts a write of `user` against `auth.api_write_rate_per_minute` (a no-op for reads, or with
 * the limit off). Per user, whatever the credential (every session and token of theirs share
 * it), and for every role: a stolen admin token is the one that can do the most. Called by the
 * one hook of a route that signs its caller in (`requireUser` or `optionalUser`), so a write
 * counts once.
 */
function apiWriteLimit(services: Services) {
  const perMinute = services.config.auth.api_write_rate_per_minute;
  const what = `changes through /api are limited to ${perMinute} a minute per user`;
  return async (request: FastifyRequest, reply: FastifyReply, user: UserRow): Promise<void> => {
    if (perMinute > 0 && isWrite(request.method))
      await limitPerMinute(services.rateLimiter, `api-write:${user.id}`, reply, {
        scope: 'api_write_user',
        perMinute,
        what,
      });
  };
}

/** A method that changes something: what `auth.api_write_rate_per_minute` counts. */
const isWrite = (method: string) => method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';

/** How a 401 tells the client to send its key: the OpenAI-style header, what /v1 clients send. */
export const BEARER_KEY = 'Authorization: Bearer sk-...';
/** The Anthropic ingress's: its SDKs and Claude Code send `x-api-key` (Bearer is taken too). */
export const X_API_KEY = 'x-api-key: sk-... (or Authorization: Bearer sk-...)';

/**
 * onRequest hook for /v1: a valid API key (`Authorization: Bearer sk-...`, or `x-api-key`).
 * Callback style: a key verified within the credential cache's TTL is accepted without a promise.
 * `send` is how a 401 says to send the key (`BEARER_KEY`, or `X_API_KEY` on the Anthropic ingress).
 */
export function requireApiKey(services: Services, send: string = BEARER_KEY) {
  const missing = `missing API key: send ${send}`;
  const mixup = `access tokens (mgt-...) are for /api calls; /v1 needs an API key: ${send}`;
  const hook = (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
    const token = bearer(request) ?? (request.headers['x-api-key'] as string | undefined);
    if (!token) return done(unauthorized(missing));
    let cached: KeyPrincipal | undefined;
    try {
      cached = services.apiKeys.verifyCached(token);
    } catch (err) {
      return done(err as Error);
    }
    if (cached) {
      request.principal = cached;
      return done();
    }
    services.apiKeys.verify(token).then(
      (p) => {
        request.principal = p;
        done();
      },
      // An access token sent to /v1 (the other mix-up) is told what it is; the hot path of a
      // valid key is untouched.
      (err: Error) =>
        done(
          token.startsWith('mgt-') && err instanceof GatewayError && err.status === 401
            ? unauthorized(mixup)
            : err,
        ),
    );
  };
  SECURITY.set(hook, API_KEY_SECURITY);
  return hook;
}
