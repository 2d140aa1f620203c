import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomToken } from '../../access/secrets.js';
import { GatewayError, UpstreamError, upstreamToGateway } from '../../gateway/errors.js';
import type { Services } from '../../services.js';
import type { App } from '../app.js';
import { requireApiKey } from '../auth.js';
import { withClientBetas } from '../wire/anthropic-beta.js';
import { KEEP_ALIVE } from '../wire/openai-chat-encode.js';
import {
  decodeResponsesRequest,
  type ResponsesRequestBody,
  responsesParam,
} from '../wire/responses-decode.js';
import {
  encodeResponse,
  type ResponseHead,
  type ResponsesEcho,
  responsesEcho,
} from '../wire/responses-encode.js';
import { ResponsesRequestSchema } from '../wire/responses-request-schema.js';
import { ResponsesStreamEncoder } from '../wire/responses-stream.js';
import { type ChatWire, handleChat, type Served } from './chat-pipeline.js';

/**
 * OpenAI Responses API ingress (docs/responses-ingress.md): `POST /v1/responses`, also under
 * `/api/v1` (OpenRouter's path), for Codex CLI, the OpenAI Agents SDK and `client.responses` of
 * the `openai` SDKs. Stateless: the body is decoded into the canonical chat request and runs
 * through the chat pipeline (`handleChat`): the same auth, plan, quota, retries and fallbacks,
 * request log (endpoint `responses`) and metrics as /v1/chat/completions, whose `x-anthropic-beta`
 * header it reads too (`withClientBetas`). Errors have the /v1 OpenAI shape.
 */
export function registerResponsesRoutes(app: App, services: Services): void {
  const opts = {
    schema: {
      tags: ['responses'],
      summary: 'Response (OpenAI Responses-compatible, stateless), streamed with stream: true',
      description:
        'Runs through the chat pipeline (models, fallbacks, quotas, logs) as /v1/chat/completions does; nothing is stored, so previous_response_id and conversation are refused.',
      body: ResponsesRequestSchema,
      security: [{ apiKey: [] }],
    },
    onRequest: requireApiKey(services),
    bodyLimit: services.config.server.chat_body_limit_bytes,
    // A key with a tokens-per-minute limit is charged the prompt as the chat pipeline sees it.
    config: { chatRequestOf: (body: unknown) => decodeResponsesRequest(body as ResponsesRequestBody) },
  };
  const handler = (request: FastifyRequest, reply: FastifyReply) => {
    const body = request.body as ResponsesRequestBody;
    const origins: string[] = [];
    const req = withClientBetas(decodeResponsesRequest(body, origins), request.headers['x-anthropic-beta']);
    return handleChat(services, responsesWire(responsesEcho(body)), request, reply, req).catch(
      (err: unknown) => {
        throw withResponsesNames(err, origins);
      },
    );
  };
  app.post('/v1/responses', opts, handler);
  app.post('/api/v1/responses', { ...opts, schema: { ...opts.schema, hide: true } }, handler);
}

/**
 * The plan checks the completion limit under the chat request's name (`max_tokens: must be below
 * the context length...`, a quota refusal's "a lower max_tokens may fit"): this client sent
 * `max_output_tokens`, and looks for that name in the message and in `param`. An upstream's
 * refusal of a prompt too long names `messages`: this client sent it in `input`. An adapter's
 * refusal of a message (`messages.3.content: empty; ...`, an image type the upstream does not
 * take) names it in the chat request, its index shifted by `instructions`: named here as this
 * client sent it (`input.2.content`, `responsesParam`).
 */
function withResponsesNames(thrown: unknown, origins: readonly string[]): unknown {
  const err = thrown instanceof UpstreamError ? upstreamToGateway(thrown) : thrown;
  if (!(err instanceof GatewayError)) return err;
  const param = err.param === 'messages' ? 'input' : err.param && responsesParam(err.param, origins);
  if (param) {
    const old = err.param!;
    const message = err.message.startsWith(`${old}:`) ? param + err.message.slice(old.length) : err.message;
    return new GatewayError(err.status, message, {
      type: err.type,
      param,
      metadata: err.metadata,
      retryAfter: err.retryAfter,
    });
  }
  if (err.param !== 'max_tokens' && !(err.status === 402 && err.message.includes('max_tokens'))) return err;
  return new GatewayError(err.status, err.message.replace(/\bmax_tokens\b/g, 'max_output_tokens'), {
    type: err.type,
    param: err.param === 'max_tokens' ? 'max_output_tokens' : err.param,
    metadata: err.metadata,
    retryAfter: err.retryAfter,
  });
}

// Response ids: a random per-process prefix and a counter, as the chat completion ids.
const ID_PREFIX = randomToken(12);
let idCounter = 0;

const head = (served: Served, echo: ResponsesEcho): ResponseHead => ({
  id: `resp_${ID_PREFIX}${(++idCounter).toString(36)}`,
  createdAt: Math.floor(served.startedAt / 1000),
  model: served.model,
  echo,
});

/** The wire of one request: the Response echoes the request's settings. */
function responsesWire(echo: ResponsesEcho): ChatWire {
  return {
    endpoint: 'responses',
    // A comment: SSE parsers (the openai SDK's included) skip it, before response.created too.
    keepAlive: KEEP_ALIVE,
    complete: (served, result, bill) => encodeResponse(head(served, echo), result, bill.usage),
    stream: (served) => {
      const enc = new ResponsesStreamEncoder(head(served, echo));
      return {
        chunk: (choices) => enc.chunk(choices),
        end: (bill, failure) => enc.end(bill.usage, failure),
      };
    },
    // No upstream answered after keep-alives committed the stream: created, then failed.
    failedStream: (served, e) => new ResponsesStreamEncoder(head(served, echo)).end(undefined, e),
  };
}
