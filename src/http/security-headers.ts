import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify';

/**
 * The console's content security policy: everything from the gateway itself, except app
 * thumbnails, which are any http(s) image an administrator linked (`thumbnail_url`). No inline
 * script or style: the built console has none (Vite emits files; React sets styles through the
 * DOM, which a policy does not govern). Checked in Chromium: test/e2e/security-headers.e2e.test.ts.
 */
const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: https: http:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Headers of every console file (index.html, the build files, icons): no page of another site
 * may frame the console (clickjacking an administrator's session), no file is sniffed into
 * another type, and the console's URLs (an app id, a page) are not sent to other sites.
 */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONSOLE_CSP,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
};

/**
 * Headers of the API docs (Swagger UI at `/docs`, its files and `/docs/json`): no other site may
 * frame them either (a framed page can be overlaid to make its visitor click in it, the
 * "Authorize" dialog that takes a token included). Only the framing part of the console's
 * policy: the rest of it was written for the console's own build, not for Swagger UI's.
 */
export const DOCS_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
};

/** Gives every `/docs` route DOCS_HEADERS (an `onRoute` hook added before Swagger UI registers). */
export function addDocsHeaders(routeOptions: RouteOptions): void {
  const url = routeOptions.url;
  if (url !== '/docs' && !url.startsWith('/docs/')) return;
  prepend(routeOptions, docsHeaders);
}

function docsHeaders(_request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  reply.headers(DOCS_HEADERS);
  done();
}

/**
 * `/api` answers (JSON) are not sniffed into another type either. Added per route (`onRoute`),
 * like the NUL guard, so the `/v1` request path (and its `/api/v1` alias) never runs it.
 */
export function addApiHeaders(routeOptions: RouteOptions): void {
  if (isApiUrl(routeOptions.url)) prepend(routeOptions, noSniff);
}

/** An `/api` path, not its `/v1` alias (`/api/v1/...`). */
const isApiUrl = (url: string) => url.startsWith('/api/') && !url.startsWith('/api/v1/');

/**
 * The header `addApiHeaders` gives `/api` routes, on an answer no route made (no route found, the
 * router's refusal of a URL).
 */
export function noSniffOutsideRoutes(url: string, reply: FastifyReply): void {
  if (isApiUrl(url)) reply.header('x-content-type-options', 'nosniff');
}

type OnRequest = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;

function prepend(routeOptions: RouteOptions, hook: OnRequest): void {
  const on = routeOptions.onRequest;
  routeOptions.onRequest = on === undefined ? hook : [hook, ...(Array.isArray(on) ? on : [on])];
}

function noSniff(_request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  reply.header('x-content-type-options', 'nosniff');
  done();
}
