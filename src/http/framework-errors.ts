import { maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';
import {
  errorCodes,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { badRequest, GatewayError } from '../gateway/errors.js';
import { errorHandler, sendError } from './error-handler.js';
import { MAX_JSON_DEPTH, tooDeepText } from './nesting.js';
import { noSniffOutsideRoutes } from './security-headers.js';

/**
 * Errors Fastify and Node raise themselves, answered in the gateway's shapes (decisions.md
 * "Errors") instead of theirs (`{"error":"Bad Request","code":"FST_ERR_BAD_URL",...}`), which
 * neither the console (`success`, `message`) nor an SDK reading an integer `error.code` could read.
 */

/** The longest path shown back in a message: a path is up to the header limit long. */
const SHOWN_PATH = 200;

/**
 * Fastify's `frameworkErrors`: the router's refusals of a URL, raised before a route is chosen.
 * The URL is known, so each answers in the shape of its family, as a route's errors do.
 */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  // What the onRequest hooks would have set: no route ran them.
  reply.header('x-request-id', request.id);
  noSniffOutsideRoutes(request.url, reply);
  if (err.code === 'FST_ERR_BAD_URL') {
    const path = request.url.length > SHOWN_PATH ? `${request.url.slice(0, SHOWN_PATH)}...` : request.url;
    return sendError(
      reply,
      badRequest(`url: ${path} is not a valid URL path (a % must start UTF-8 bytes written as %XX)`, 'url'),
    );
  }
  // Path parameters up to the header limit reach their routes (ROUTER_MAX_PARAM_LENGTH), whose
  // schemas name them; this is the router's refusal should a longer one ever get there.
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH')
    return sendError(
      reply,
      badRequest(`url: a path segment is longer than ${ROUTER_MAX_PARAM_LENGTH} characters`, 'url'),
    );
  return errorHandler(err, request, reply);
}

/**
 * The router's longest path parameter. find-my-way's default of 100 answered a longer one with
 * its own 414 before the route could say which parameter was wrong (`GET /api/app/<200 digits>`);
 * the request line is bounded by Node's header limit anyway, and no route has a regex parameter
 * (the one thing this bound protects from backtracking).
 */
export const ROUTER_MAX_PARAM_LENGTH = maxHeaderSize;

/**
 * The body of an error Node's HTTP parser raises (server `clientError`): it comes before the
 * request line is read whole, so before its family is known. One body both read: the `/api`
 * envelope's `success` and `message` beside the `/v1` `error` object (whose `type` and `message`
 * Anthropic's SDKs read too).
 */
export function neutralErrorBody(e: GatewayError): Record<string, unknown> {
  return {
    success: false,
    message: e.message,
    error: { code: e.status, message: e.message, type: e.type, param: null, metadata: {} },
  };
}

const REASON: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/**
 * Fastify's `clientErrorHandler`: a request Node cannot parse (a raw non-ASCII byte in the request
 * line, an invalid header), headers past the size limit, or headers that did not arrive in time.
 * Answered with the neutral body above, then the connection closes (Node cannot read on past it).
 */
export function clientErrorHandler(
  this: { log: FastifyBaseLogger },
  err: NodeJS.ErrnoException & { reason?: string },
  socket: Socket,
): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  let e: GatewayError;
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    const limit = (socket as Socket & { server?: { maxHeaderSize?: number } }).server?.maxHeaderSize;
    e = new GatewayError(
      431,
      `headers: the request line and headers must be at most ${limit ?? maxHeaderSize} bytes`,
    );
  } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    e = new GatewayError(408, 'request: the request headers did not arrive in time');
  } else {
    e = new GatewayError(
      400,
      `request: not a valid HTTP/1.1 request (${err.reason ?? err.code ?? 'unreadable'})`,
    );
  }
  this.log.trace({ err }, 'client error');
  if (socket.writable) {
    const body = JSON.stringify(neutralErrorBody(e));
    socket.write(
      `HTTP/1.1 ${e.status} ${REASON[e.status]}\r\nContent-Type: application/json\r\n` +
        'X-Content-Type-Options: nosniff\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

type Done = (err: Error | null, body?: unknown) => void;
type CallbackParser = (request: FastifyRequest, body: string, done: Done) => void;

/**
 * The JSON body parser, refusing as Fastify's own does (secure-json-parse) `__proto__` keys and
 * `constructor.prototype`, which could pollute prototypes, but saying so, naming where the key
 * is (before, valid JSON with one read "malformed JSON"). Its other refusals are Fastify's.
 *
 * Every step is one linear pass, and none is done twice:
 * - a body nested past MAX_JSON_DEPTH is refused from its text, before it is parsed
 *   (nesting.ts): JSON.parse of megabytes of `[[[[` took seconds, and only then was the depth
 *   checked;
 * - JSON.parse, without a reviver;
 * - the parsed value is walked for such keys only when the text has one (a regular expression
 *   over the text, as secure-json-parse does). Before, secure-json-parse refused it and the
 *   body was parsed again to find where.
 */
export function jsonBodyParser(): CallbackParser {
  return (_request, text, done) => {
    const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    // No body, as an empty text/plain one (app.ts): a client that sends the JSON type on every
    // call (a DELETE, logout) is served, and a route that needs a body says `body: must be
    // object`. Fastify's refusal named no field, and refused the routes that take none.
    if (body.length === 0) return done(null, undefined);
    const deep = tooDeepText(body);
    if (deep !== undefined) {
      const where = deep.join('.');
      return done(badRequest(`${where}: nested more than ${MAX_JSON_DEPTH} levels`, where), undefined);
    }
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      return done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
    }
    done((SUSPECT_KEY.test(body) && forbiddenKeyIn(value)) || null, value);
  };
}

/** A `"__proto__":` or `"constructor":` key, written plain or with \u escapes (what secure-json-parse looks for). */
const SUSPECT_KEY =
  /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:|"(?:c|\\u0063)(?:o|\\u006[Ff])(?:n|\\u006[Ee])(?:s|\\u0073)(?:t|\\u0074)(?:r|\\u0072)(?:u|\\u0075)(?:c|\\u0063)(?:t|\\u0074)(?:o|\\u006[Ff])(?:r|\\u0072)"\s*:/;

/** A value reached from the body, with how: its parent's entry and its key there. */
type Reached = { node: unknown; parent: Reached | undefined; key: string };

function pathOf(at: Reached): string {
  const keys: string[] = [];
  for (let r: Reached | undefined = at; r?.parent; r = r.parent) keys.push(r.key);
  return keys.length === 0 ? 'body' : keys.reverse().join('.');
}

/** The 400 for the first key secure-json-parse would refuse in a parsed body, or undefined. */
export function forbiddenKeyIn(value: unknown): GatewayError | undefined {
  // Breadth first, as secure-json-parse looks; each value keeps a link to its parent rather than
  // a copy of its path, so the walk is linear however the body nests.
  let level: Reached[] = [{ node: value, parent: undefined, key: '' }];
  while (level.length > 0) {
    const next: Reached[] = [];
    for (const at of level) {
      const node = at.node;
      if (node === null || typeof node !== 'object') continue;
      if (Object.hasOwn(node, '__proto__')) {
        const where = pathOf(at);
        return badRequest(`${where}: the key "__proto__" is not allowed`, where);
      }
      const ctor = (node as { constructor?: unknown }).constructor;
      if (
        Object.hasOwn(node, 'constructor') &&
        ctor !== null &&
        typeof ctor === 'object' &&
        Object.hasOwn(ctor, 'prototype')
      ) {
        const where = pathOf(at);
        return badRequest(`${where}: the key "constructor" must not hold a "prototype"`, where);
      }
      for (const [k, v] of Object.entries(node)) next.push({ node: v, parent: at, key: k });
    }
    level = next;
  }
  return undefined;
}
