import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../gateway/errors.js';
import { sendError } from './error-handler.js';

/**
 * CORS for browser clients (docs/architecture.md, "Browser clients (CORS)"): the API surface
 * (`/v1/*` and its `/api/v1/*` alias) and the public catalog reads answer other origins; the rest
 * of `/api` (session cookie, management) does not. Credentials (cookies) are never allowed
 * cross-origin: the API takes its keys in headers.
 *
 * Written here rather than with @fastify/cors: its app-wide hook builds two route-option objects,
 * a merged options object and a closure on every request, with or without an Origin, and a
 * request without one must pay one property look-up here (docs/performance.md).
 */

/** Headers the gateway sets that browser clients read (SDKs' request ids, retries, rate limits). */
const EXPOSED = [
  'x-request-id',
  'request-id',
  'retry-after',
  'x-modelgate-attempts',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-tokens',
].join(', ');

const API_METHODS = 'GET, HEAD, POST';
const CATALOG_READ_METHODS = 'GET, HEAD';
const CATALOG_DOWNLOAD_METHODS = 'POST';
/** Chromium caps a preflight's cache at two hours. */
const MAX_AGE = '7200';
/** A list of header names as browsers send it in Access-Control-Request-Headers. */
const HEADER_LIST = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:[ \t]*,[ \t]*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*$/;
const MAX_HEADER_LIST = 4096;

/**
 * The methods another origin may use on `url`, or undefined when the path is not open to other
 * origins: `/v1` and `/api/v1` (every route there takes an API key), and the public catalog
 * (`GET /api/app...`, `POST /api/app/download/:id`, interface.md §4 rule 1). The catalog's admin
 * writes (`POST`/`PUT /api/app`, `DELETE /api/app/:id`) are left out by their method.
 */
export function corsMethodsOf(url: string, method: string): string | undefined {
  if (url.startsWith('/v1/') || url.startsWith('/api/v1/')) return API_METHODS;
  if (!url.startsWith('/api/app')) return undefined;
  const rest = url.charCodeAt(8);
  // `/api/app`, `/api/app?...`, `/api/app/...`; not `/api/apps`.
  if (!Number.isNaN(rest) && rest !== 47 && rest !== 63) return undefined;
  if (method === 'GET' || method === 'HEAD') return CATALOG_READ_METHODS;
  if (method === 'POST' && /^\/api\/app\/download\/[^/?]+\/?(?:\?|$)/.test(url))
    return CATALOG_DOWNLOAD_METHODS;
  return undefined;
}

/** Which origins may call: every one (`*`), or a list of exact origins and `*.` subdomain patterns. */
export class CorsPolicy {
  readonly any: boolean;
  private readonly exact: Set<string>;
  /** `https://*.example.com` as [`https://`, `.example.com`] (port included in the suffix). */
  private readonly patterns: Array<[string, string]>;

  constructor(origins: readonly string[]) {
    this.any = origins.includes('*');
    this.exact = new Set(origins.filter((o) => !o.includes('*')));
    this.patterns = origins
      .filter((o) => o !== '*' && o.includes('*'))
      .map((o) => {
        const at = o.indexOf('*');
        return [o.slice(0, at), o.slice(at + 1)];
      });
  }

  allows(origin: string): boolean {
    if (this.any || this.exact.has(origin)) return true;
    for (const [scheme, suffix] of this.patterns) {
      // At least one label before the suffix, and no further path or credentials in it.
      if (
        origin.length > scheme.length + suffix.length &&
        origin.startsWith(scheme) &&
        origin.endsWith(suffix) &&
        !origin.slice(scheme.length, origin.length - suffix.length).includes('/')
      )
        return true;
    }
    return false;
  }

  /**
   * An answer to a request carrying `Origin`: the headers that let its page read it, when the
   * origin is allowed on this path. Set in the first onRequest hook, so every answer has them:
   * errors from auth, limits and the shutdown, 404s under `/v1`, and streams (which send the
   * reply's headers when they start).
   */
  onRequest(request: FastifyRequest, reply: FastifyReply, origin: string): void {
    if (corsMethodsOf(request.url, request.method) === undefined || !this.allows(origin)) return;
    this.allowOrigin(reply, origin);
    reply.header('access-control-expose-headers', EXPOSED);
  }

  private allowOrigin(reply: FastifyReply, origin: string): void {
    if (this.any) reply.header('access-control-allow-origin', '*');
    else reply.header('access-control-allow-origin', origin).header('vary', 'Origin');
  }

  /** A preflight to an allowed path from an allowed origin: 204 with what it may send. */
  preflight(request: FastifyRequest, reply: FastifyReply, origin: string, methods: string): FastifyReply {
    this.allowOrigin(reply, origin);
    reply.header('access-control-allow-methods', methods).header('access-control-max-age', MAX_AGE);
    // Every header the client asks for: none changes what a key may do, and SDKs add their own
    // (x-stainless-*, anthropic-*, openai-*, http-referer, x-title) release by release.
    const asked = request.headers['access-control-request-headers'];
    if (typeof asked === 'string' && asked.length <= MAX_HEADER_LIST && HEADER_LIST.test(asked.trim()))
      reply.header('access-control-allow-headers', asked.trim());
    if (!this.any) reply.header('vary', 'Origin, Access-Control-Request-Headers');
    else reply.header('vary', 'Access-Control-Request-Headers');
    // Chromium's Private Network Access: a page on a public site calling a gateway on the
    // operator's machine or network; allowed for the origins the operator allowed.
    if (request.headers['access-control-request-private-network'] === 'true')
      reply.header('access-control-allow-private-network', 'true');
    return reply.code(204).header('content-length', '0').send();
  }
}

/** The policy of `server.cors_origins`; undefined when it is empty (CORS off). */
export function corsPolicy(origins: readonly string[] | undefined): CorsPolicy | undefined {
  return origins === undefined || origins.length === 0 ? undefined : new CorsPolicy(origins);
}

/**
 * A CORS preflight (OPTIONS with Origin and Access-Control-Request-Method; no route takes
 * OPTIONS, so it reaches the not-found handler): answered for the paths and origins CORS opens,
 * refused with a 403 that says why for another origin, and left to the 404 elsewhere (false).
 */
export function answerPreflight(
  policy: CorsPolicy | undefined,
  request: FastifyRequest,
  reply: FastifyReply,
): boolean {
  const origin = request.headers.origin;
  const asked = request.headers['access-control-request-method'];
  if (request.method !== 'OPTIONS' || origin === undefined || typeof asked !== 'string') return false;
  const methods = corsMethodsOf(request.url, asked.toUpperCase());
  if (methods === undefined) return false;
  if (policy?.allows(origin)) {
    policy.preflight(request, reply, origin, methods);
    return true;
  }
  sendError(
    reply,
    new GatewayError(
      403,
      policy
        ? `origin ${origin.slice(0, 200)} may not call this gateway from a browser: server.cors_origins does not list it`
        : 'this gateway answers no browser calls from other origins: server.cors_origins is empty',
    ),
  );
  return true;
}
