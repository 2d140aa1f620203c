import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomToken } from '../../access/secrets.js';
import type { Services } from '../../services.js';
import type { App } from '../app.js';
import { requireApiKey } from '../auth.js';
import { KEEP_ALIVE } from '../wire/openai-chat-encode.js';
import { decodeResponsesRequest, type ResponsesRequestBody } from '../wire/responses-decode.js';
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
 * request log (endpoint `responses`) and metrics as /v1/chat/completions. Errors have the /v1
 * OpenAI shape.
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
    // A key with a tokens-per-minute limit is charged the prompt as the chat pipeline sees it.
    config: { chatRequestOf: (body: unknown) => decodeResponsesRequest(body as ResponsesRequestBody) },
  };
  const handler = (request: FastifyRequest, reply: FastifyReply) => {
    const body = request.body as ResponsesRequestBody;
    const req = decodeResponsesRequest(body);
    return handleChat(services, responsesWire(responsesEcho(body)), request, reply, req);
  };
  app.post('/v1/responses', opts, handler);
  app.post('/api/v1/responses', { ...opts, schema: { ...opts.schema, hide: true } }, handler);
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
