import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { defaultType, GatewayError, UpstreamError, upstreamToGateway } from '../gateway/errors.js';
import { isDatabaseTimeout, isDatabaseUnavailable } from '../store/db-errors.js';
import { validationError } from './validation.js';
import { anthropicErrorBody } from './wire/anthropic-errors.js';

/**
 * A body in a media type no route reads: every body the gateway takes is JSON, and Fastify's own
 * 415 said only "Unsupported Media Type", not what to send.
 */
export function unsupportedMediaType(contentType: string | undefined): GatewayError {
  const given = contentType?.split(';')[0]?.trim();
  return new GatewayError(415, `content-type: must be application/json (got ${given || 'none'})`);
}

/** Turns any thrown error into a GatewayError; unknown errors become a 500 with the request id. */
export function toGatewayError(err: unknown, request: FastifyRequest): GatewayError {
  if (err instanceof GatewayError) return err;
  if (err instanceof UpstreamError) return upstreamToGateway(err);
  const fe = err as FastifyError & { validationContext?: string };
  if (fe.validation) return validationError(fe.validation as any, fe.validationContext);
  const status = fe.statusCode;
  if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return unsupportedMediaType(request.headers['content-type']);
  if (status && status >= 400 && status < 500) {
    const message =
      fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError
        ? `body: malformed JSON (${fe.message})`
        : fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          ? 'body: request body is too large'
          : fe.message;
    return new GatewayError(status, message);
  }
  if (isDatabaseTimeout(err)) {
    // A statement cancelled by database.statement_timeout_ms (a lock held too long, an overloaded
    // server) or no pool connection within database.connect_timeout_ms: the service, not the input.
    request.log.error({ err }, 'database timeout');
    return new GatewayError(
      503,
      `database timeout: the database did not answer in time, try again later (request id ${request.id})`,
      { retryAfter: 1 },
    );
  }
  if (isDatabaseUnavailable(err)) {
    // The database server went away or refuses connections (or SQLite stays locked): nothing
    // the client sent; /readyz says the same to a load balancer.
    request.log.error({ err }, 'database unavailable');
    return new GatewayError(
      503,
      `database unavailable: the database cannot be reached now, try again later (request id ${request.id})`,
      { retryAfter: 1 },
    );
  }
  request.log.error({ err }, 'internal error');
  return new GatewayError(500, `internal error (request id ${request.id})`, { type: 'server_error' });
}

export type Surface = 'openai' | 'voyage' | 'anthropic' | 'api';

export function surfaceOf(url: string): Surface {
  // The router reads a run of slashes as one (app.ts), so `/v1//multimodalembeddings` is that
  // route, and its errors carry Voyage's `detail` too.
  const clean = url.includes('//') ? url.replace(/\/{2,}/g, '/') : url;
  // `/api/v1/...` serves the same wire as `/v1/...` (the OpenRouter SDK's base path).
  const path = clean.startsWith('/api/v1/') ? clean.slice(4) : clean;
  if (path.startsWith('/v1/')) {
    if (path.startsWith('/v1/multimodalembeddings')) return 'voyage';
    // `/v1/messages` and `/v1/messages/count_tokens` (not `/v1/messagesx`).
    if (path.startsWith('/v1/messages') && /^\/v1\/messages(?:[/?]|$)/.test(path)) return 'anthropic';
    return 'openai';
  }
  return 'api';
}

/**
 * The error body for each surface (decisions.md "Errors"); the Anthropic ingress answers in
 * Anthropic's shape, `{"type":"error","error":{type, message},"request_id"}`. The `/api` envelope
 * carries the error's `metadata` when it has one, as `/v1` does inside `error` (a rate limit's
 * `{scope, limit}`: which limit refused, docs/scaling.md), and its `data` when it has one (a
 * failed model refresh's listing outcome).
 */
export function errorBody(e: GatewayError, surface: Surface, requestId?: string): unknown {
  if (surface === 'api')
    return {
      success: false,
      message: e.message,
      ...(e.metadata === undefined ? {} : { metadata: e.metadata }),
      ...(e.data === undefined ? {} : { data: e.data }),
    };
  if (surface === 'anthropic') return anthropicErrorBody(e, requestId);
  const body: Record<string, unknown> = {
    error: {
      code: e.status,
      message: e.message,
      type: e.type ?? defaultType(e.status),
      param: e.param,
      metadata: e.metadata ?? {},
    },
  };
  if (surface === 'voyage') body.detail = e.message;
  return body;
}

export function sendError(reply: FastifyReply, e: GatewayError): FastifyReply {
  if (e.retryAfter !== undefined) reply.header('retry-after', String(e.retryAfter));
  return reply
    .code(e.status)
    .type('application/json')
    .send(errorBody(e, surfaceOf(reply.request.url), reply.request.id));
}

export function errorHandler(err: unknown, request: FastifyRequest, reply: FastifyReply) {
  return sendError(reply, toGatewayError(err, request));
}
