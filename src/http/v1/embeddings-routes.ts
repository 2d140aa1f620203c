import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EmbeddingRequest } from '../../gateway/embeddings/embedding-request.js';
import type { Embedded, EmbeddingEndpoint } from '../../gateway/embeddings/embeddings-service.js';
import { attemptsHeader, attemptsOf } from '../../gateway/routing/execute.js';
import type { Services } from '../../services.js';
import type { App } from '../app.js';
import { requireApiKey } from '../auth.js';
import { disconnectIfNotTaken } from '../client-stall.js';
import { errorBody, type Surface, toGatewayError } from '../error-handler.js';
import { abortOnClose } from '../shutdown-cut.js';
import { decodeEmbeddingsRequest, encodeEmbeddingsResponse } from '../wire/openai-embeddings.js';
import { decodeVoyageMultimodalRequest, encodeVoyageMultimodalResponse } from '../wire/voyage.js';

/**
 * `POST /v1/multimodalembeddings` (Voyage) and `POST /v1/embeddings` (OpenAI, and the voyageai
 * SDK's `embed`), also under `/api/v1` like chat. Bodies are decoded by hand (the wire decoders
 * name the input index in their 400s), so the routes carry no body schema. Each route has its
 * own error handler so the body shape follows the endpoint, not the URL prefix: the Voyage one
 * keeps its top-level `detail` under `/api/v1` too.
 */
interface Endpoint {
  name: EmbeddingEndpoint;
  path: string;
  /** The operation's one line in the OpenAPI document. */
  summary: string;
  surface: Surface;
  decode(body: unknown): EmbeddingRequest;
  encode(result: Parameters<typeof encodeEmbeddingsResponse>[0], encoding: 'float' | 'base64'): unknown;
}

const ENDPOINTS: Endpoint[] = [
  {
    name: 'multimodalembeddings',
    path: '/v1/multimodalembeddings',
    summary: 'Multimodal embeddings of text and images (Voyage-compatible)',
    surface: 'voyage',
    decode: decodeVoyageMultimodalRequest,
    encode: encodeVoyageMultimodalResponse,
  },
  {
    name: 'embeddings',
    path: '/v1/embeddings',
    summary: 'Text embeddings (OpenAI-compatible; also the voyageai SDK embed)',
    surface: 'openai',
    decode: decodeEmbeddingsRequest,
    encode: encodeEmbeddingsResponse,
  },
];

export function registerEmbeddingRoutes(app: App, services: Services): void {
  for (const ep of ENDPOINTS) {
    const opts = {
      schema: { tags: ['embeddings'], summary: ep.summary, security: [{ apiKey: [] }] },
      onRequest: requireApiKey(services),
      bodyLimit: services.config.server.embedding_body_limit_bytes,
      errorHandler: (err: unknown, request: FastifyRequest, reply: FastifyReply) => {
        const e = toGatewayError(err, request);
        if (e.retryAfter !== undefined) reply.header('retry-after', String(e.retryAfter));
        return reply.code(e.status).type('application/json').send(errorBody(e, ep.surface));
      },
    };
    const handler = (request: FastifyRequest, reply: FastifyReply) => handle(services, ep, request, reply);
    app.post(ep.path, opts, handler);
    app.post(`/api${ep.path}`, { ...opts, schema: { ...opts.schema, hide: true } }, handler);
  }
}

async function handle(services: Services, ep: Endpoint, request: FastifyRequest, reply: FastifyReply) {
  const req = ep.decode(request.body);
  const abort = new AbortController();
  // A client that goes away (or a shutdown that cuts the connection) aborts the upstream call at once.
  const settled = abortOnClose(request, reply, abort);
  let embedded: Embedded;
  try {
    embedded = await services.embeddings.embed(req, {
      requestId: request.id,
      principal: request.principal!,
      signal: abort.signal,
      startedAt: Date.now(),
      endpoint: ep.name,
    });
  } catch (err) {
    // A failure that was routed names its tries, as chat's do; one refused before routing has none.
    const attempts = attemptsOf(err);
    if (attempts?.length) reply.header('x-modelgate-attempts', attemptsHeader(attempts));
    throw err;
  } finally {
    // Billed and logged: a stop that cut this request may close the log writer now.
    settled();
  }
  const { result, attempts } = embedded;
  reply.header('x-modelgate-attempts', attemptsHeader(attempts));
  reply.send(ep.encode(result, req.encoding));
  disconnectIfNotTaken(reply.raw, services.config.gateway.client_stall_ms);
  return reply;
}
