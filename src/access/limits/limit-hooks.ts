import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../gateway/errors.js';
import type { Services } from '../../services.js';
import { addressKey } from '../rate-limit/address-key.js';
import type { RateLimitResult } from '../rate-limit/rate-limiter.js';
import { estimatePromptTokens } from './prompt-estimate.js';
import {
  type Admission,
  binding,
  type CallerLimits,
  type LimitOutcome,
  type LimitScope,
  RequestLimits,
} from './request-limits.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route body as a chat request, for the tokens-per-minute estimate (`chatBodyOf`). */
    chatRequestOf?: (body: unknown, request: FastifyRequest) => unknown;
    /**
     * false: the route consumes no tokens (Anthropic's count_tokens): its requests count against
     * requests per minute, never against tokens per minute.
     */
    chargesTokens?: boolean;
  }
}

export interface LimitHookOptions {
  /** Called once per refused request (metrics). */
  onReject?: (scope: LimitScope) => void;
  /** Where the per-response cleanup goes (the app's one onResponse hook, http/response-taps). */
  taps: { add(tap: (request: FastifyRequest) => void): void };
  /**
   * Whether the request's session or access token signs someone in (http/auth's resolveUser):
   * such callers are exempt from the per-address catalog limit. Absent: no one is.
   */
  signedIn?: (request: FastifyRequest) => Promise<boolean>;
}

interface Pending {
  keyId: number;
  tpm: number;
  charged: number;
}

/**
 * Rate limits as app-wide hooks, so routes stay unaware of them:
 * - API-key routes (any route whose onRequest set `request.principal`): per-key rpm/tpm and
 *   per-user rpm, in a preHandler (after auth and body validation, before any upstream work);
 * - public catalog routes: per client address (`limits.catalog_ip_rpm`, 0 = off; search keeps
 *   its own stricter limit, `catalog.search_rate_per_minute`).
 * A refusal is a 429 GatewayError, so each surface's error handler shapes the body (OpenAI or
 * Voyage error for /v1, the envelope for /api) and sets Retry-After.
 */
export function registerLimitHooks(app: FastifyInstance, services: Services, opts: LimitHookOptions): void {
  const { limits: cfg } = services.config;
  const limits = new RequestLimits(services.rateLimiter, { userRpm: cfg.user_rpm });
  /**
   * Requests of keys with a tpm limit in flight, by request id. The id can be the client's own
   * (`x-request-id`), so several requests may share one, across keys too: each entry is matched
   * by its key, and each request takes out only its own (`mine`).
   */
  const pending = new Map<string, Pending[]>();
  const mine = new WeakMap<FastifyRequest, Pending>();
  const takeOut = (id: string, match: (p: Pending) => boolean): Pending | undefined => {
    const list = pending.get(id);
    const i = list ? list.findIndex(match) : -1;
    if (i < 0) return undefined;
    const [p] = list!.splice(i, 1);
    if (list!.length === 0) pending.delete(id);
    return p;
  };
  const userRpm = cfg.user_rpm > 0;

  // Correct the up-front prompt estimate with the usage the call reported (one extra limiter
  // hit, only on keys with a tpm limit and only when the call used more than was charged).
  services.requestLogs.observe((e) => {
    if (pending.size === 0) return; // no key with a tpm limit is in flight
    const p = takeOut(e.request_id, (q) => q.keyId === e.key_id);
    if (!p) return;
    const extra = (e.prompt_tokens ?? 0) + (e.completion_tokens ?? 0) - p.charged;
    if (extra > 0) void limits.chargeTokens(p.keyId, p.tpm, extra).catch(() => {});
  });

  const admit = async (request: FastifyRequest, reply: FastifyReply, caller: CallerLimits) => {
    const prompt = caller.tpm ? tpmPromptTokens(chatBodyOf(request), services.registry) : 0;
    const admission = await limits.admit(caller, prompt);
    setHeaders(reply, admission);
    if (!admission.allowed) {
      const denied = admission.binding!;
      opts.onReject?.(denied.scope);
      throw tooMany(denied.scope, denied.limit, denied.result);
    }
    if (caller.tpm && request.method === 'POST') {
      const p = { keyId: caller.keyId, tpm: caller.tpm, charged: Math.min(caller.tpm, prompt) };
      const list = pending.get(request.id);
      if (list) list.push(p);
      else pending.set(request.id, [p]);
      mine.set(request, p);
    }
  };

  // Callback style: a caller without limits (the common case) passes without a promise.
  app.addHook('preHandler', (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    const principal = request.principal;
    // Limits count the calls that reach a model (all POSTs); the lookups around them (`GET
    // /v1/models...`) take nothing from a key's minute (docs/scaling.md).
    if (!principal || request.method === 'GET') return done();
    // The common key has no limit: pass without building anything.
    if (!principal.key.rpm_limit && !principal.key.tpm_limit && !userRpm) return done();
    const caller: CallerLimits = {
      keyId: principal.key.id,
      userId: principal.user.id,
      rpm: principal.key.rpm_limit,
      tpm: request.routeOptions.config?.chargesTokens === false ? null : principal.key.tpm_limit,
    };
    if (!limits.applies(caller)) return done();
    admit(request, reply, caller).then(() => done(), done);
  });

  opts.taps.add((request: FastifyRequest) => {
    if (pending.size === 0) return;
    const p = mine.get(request);
    if (p) takeOut(request.id, (q) => q === p);
  });

  const ipRpm = cfg.catalog_ip_rpm;
  if (ipRpm > 0) {
    app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      const route = request.routeOptions.url ?? '';
      if (!route.startsWith('/api/app') || route === '/api/app/search') return;
      // Signed-in callers (console, scripts) are not anonymous traffic; a header that signs no
      // one in (any cookie, a made-up token) is, or adding one would lift the limit.
      if ((request.headers.authorization || request.headers.cookie) && (await opts.signedIn?.(request)))
        return;
      const result = await services.rateLimiter.hit(`ip:${addressKey(request.ip)}:catalog`, ipRpm, 60_000);
      writeHeaders(reply, ipRpm, result);
      if (!result.allowed) {
        opts.onReject?.('ip_rpm');
        throw tooMany('ip_rpm', ipRpm, result);
      }
    });
  }
}

/**
 * The body to estimate the prompt of: a route whose wire is not the chat request's (the Anthropic
 * `/v1/messages`: system apart, tool results and thinking as blocks) names its translation in its
 * route config (`chatRequestOf`), so its prompt is counted as the chat pipeline will see it.
 */
function chatBodyOf(request: FastifyRequest): unknown {
  const of = request.routeOptions.config?.chatRequestOf;
  return of ? of(request.body, request) : request.body;
}

/**
 * The prompt tokens a request is charged up front against tokens per minute. With middle-out
 * (`transforms: ["middle-out"]`), at most the widest context among the models it asks for:
 * middle-out cuts a longer prompt to fit the model that takes it, and what it sent is what the
 * usage correction counts. Before, a huge prompt cut to fit an 8 K model was charged whole,
 * which emptied the key's allowance for the minute (an overestimate is not refunded).
 */
export function tpmPromptTokens(
  body: unknown,
  registry: { resolve(modelId: string): { context_length: number } | undefined },
): number {
  const estimate = estimatePromptTokens(body);
  const b = body as { model?: unknown; models?: unknown; transforms?: unknown } | null;
  if (!b || !Array.isArray(b.transforms) || !b.transforms.includes('middle-out')) return estimate;
  const ids = [b.model, ...(Array.isArray(b.models) ? b.models : [])];
  let widest = 0;
  for (const id of ids) {
    const m = typeof id === 'string' ? registry.resolve(id) : undefined;
    if (m) widest = Math.max(widest, m.context_length);
  }
  return widest > 0 ? Math.min(estimate, widest) : estimate;
}

function setHeaders(reply: FastifyReply, a: Admission): void {
  if (a.binding) writeHeaders(reply, a.binding.limit, a.binding.result);
  // OpenAI's names, which SDKs and dashboards read, per kind of limit. Requests are the key's or
  // the user's, whichever binds (refuses, else has the least left by share): before, the key's
  // always, so a 429 of the user's limit said the key had 97 of 100 left.
  const shown: Partial<Record<'requests' | 'tokens', LimitOutcome>> = {};
  for (const o of a.outcomes) {
    const kind = o.scope === 'key_tpm' ? 'tokens' : 'requests';
    const other = shown[kind];
    shown[kind] = other ? binding([other, o]) : o;
  }
  for (const [kind, o] of Object.entries(shown)) {
    reply.header(`x-ratelimit-limit-${kind}`, String(o.limit));
    reply.header(`x-ratelimit-remaining-${kind}`, String(o.result.remaining));
    reply.header(`x-ratelimit-reset-${kind}`, `${Math.ceil(o.result.resetMs / 1000)}s`);
  }
}

function writeHeaders(reply: FastifyReply, limit: number, r: RateLimitResult): void {
  reply.header('x-ratelimit-limit', String(limit));
  reply.header('x-ratelimit-remaining', String(r.remaining));
  reply.header('x-ratelimit-reset', String(Math.ceil(r.resetMs / 1000)));
}

const WHAT: Record<LimitScope, string> = {
  key_rpm: 'requests a minute for this API key',
  key_tpm: 'tokens a minute for this API key',
  user_rpm: 'requests a minute for this user',
  ip_rpm: 'requests a minute per client address',
};

function tooMany(scope: LimitScope, limit: number, r: RateLimitResult): GatewayError {
  return new GatewayError(429, `rate limit exceeded: ${limit} ${WHAT[scope]}; retry in ${r.retryAfterSec}s`, {
    retryAfter: r.retryAfterSec,
    metadata: { scope, limit },
  });
}
