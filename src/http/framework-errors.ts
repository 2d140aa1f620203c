import { maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';
import type {
  FastifyBaseLogger,
  FastifyBodyParser,
  FastifyError,
  FastifyReply,
  FastifyRequest,
} from 'fastify';
import { badRequest, GatewayError } from '../gateway/errors.js';
import { errorHandler, sendError } from './error-handler.js';
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
 * The JSON body parser: Fastify's own (secure-json-parse, refusing `__proto__` keys and
 * `constructor.prototype`, which could pollute prototypes), with its refusal of such a key said
 * as such, naming where it is. Before, valid JSON with one read "malformed JSON".
 */
export function jsonBodyParser(defaultParser: FastifyBodyParser<string>): CallbackParser {
  const parse = defaultParser as CallbackParser;
  return (request, body, done) =>
    parse(request, body, (err, value) => {
      if (err && (err as FastifyError).code === 'FST_ERR_CTP_INVALID_JSON_BODY')
        done(forbiddenKey(body) ?? err, undefined);
      else done(err, value);
    });
}

/** The 400 for the first key secure-json-parse refuses in `text`; undefined if it is not valid JSON. */
export function forbiddenKey(text: string): GatewayError | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  let level: Array<[unknown, string[]]> = [[value, []]];
  while (level.length > 0) {
    const next: Array<[unknown, string[]]> = [];
    for (const [node, path] of level) {
      if (node === null || typeof node !== 'object') continue;
      const where = path.length === 0 ? 'body' : path.join('.');
      if (Object.hasOwn(node, '__proto__'))
        return badRequest(`${where}: the key "__proto__" is not allowed`, where);
      const ctor = (node as { constructor?: unknown }).constructor;
      if (
        Object.hasOwn(node, 'constructor') &&
        ctor !== null &&
        typeof ctor === 'object' &&
        Object.hasOwn(ctor, 'prototype')
      )
        return badRequest(`${where}: the key "constructor" must not hold a "prototype"`, where);
      for (const [k, v] of Object.entries(node)) next.push([v, [...path, k]]);
    }
    level = next;
  }
  return undefined;
}
