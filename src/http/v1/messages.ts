import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomToken } from '../../access/secrets.js';
import { sampledPromptTokens } from '../../gateway/chat/tokens.js';
import { withDetailsInBounds } from '../../gateway/chat/usage-counts.js';
import { planChat } from '../../gateway/completions/chat-plan.js';
import type { Services } from '../../services.js';
import type { App } from '../app.js';
import { requireApiKey, X_API_KEY } from '../auth.js';
import { anthropicBetas } from '../wire/anthropic-beta.js';
import { type AnthropicRequestBody, decodeAnthropicRequest } from '../wire/anthropic-decode.js';
import { encodeAnthropicMessage } from '../wire/anthropic-encode.js';
import { anthropicErrorEvent } from '../wire/anthropic-errors.js';
import { AnthropicCountTokensSchema, AnthropicMessagesSchema } from '../wire/anthropic-request-schema.js';
import { stopList } from '../wire/anthropic-stop.js';
import { AnthropicStreamEncoder } from '../wire/anthropic-stream-encode.js';
import { KEEP_ALIVE } from '../wire/openai-chat-encode.js';
import { type ChatWire, handleChat, type Served } from './chat-pipeline.js';

/**
 * Anthropic Messages API ingress (docs/anthropic-ingress.md): `POST /v1/messages`, also under
 * `/api/v1` (OpenRouter's path), for the Anthropic SDKs and Claude Code
 * (`ANTHROPIC_BASE_URL=http://host:port`). The body is decoded into the canonical chat request and
 * runs through the chat pipeline (`handleChat`): the same auth (`x-api-key` or Bearer), plan,
 * quota, retries and fallbacks, request log (endpoint `messages`) and metrics as
 * /v1/chat/completions. Errors have Anthropic's shape (error-handler.ts, surface `anthropic`).
 */
export function registerMessagesRoutes(app: App, services: Services): void {
  // Anthropic's SDKs read `request-id` (error.requestID, message._request_id); set before the key
  // is checked so a 401 carries it too.
  const requestIdHeader = (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    reply.header('request-id', request.id);
    done();
  };
  // A 401 names x-api-key, the header these clients send for their key.
  const onRequest = [requestIdHeader, requireApiKey(services, X_API_KEY)];
  // The body as the chat request, with the client's anthropic-beta values (for an Anthropic
  // upstream, and for what they allow: decodeAnthropicRequest).
  const decode = (request: FastifyRequest, body = request.body) =>
    decodeAnthropicRequest(body as AnthropicRequestBody, anthropicBetas(request.headers['anthropic-beta']));
  // A key with a tokens-per-minute limit is charged the prompt as the chat pipeline sees it.
  const config = { chatRequestOf: (body: unknown, request: FastifyRequest) => decode(request, body) };
  const messages = {
    schema: {
      tags: ['messages'],
      summary: 'Message (Anthropic Messages-compatible), streamed with stream: true',
      description:
        'Runs through the chat pipeline (models, fallbacks, quotas, logs) as /v1/chat/completions does; the API key goes in x-api-key or Authorization: Bearer.',
      body: AnthropicMessagesSchema,
      security: [{ apiKey: [] }],
    },
    onRequest,
    config,
    bodyLimit: services.config.server.chat_body_limit_bytes,
  };
  const handler = (request: FastifyRequest, reply: FastifyReply) =>
    handleChat(services, ANTHROPIC_WIRE, request, reply, decode(request));
  app.post('/v1/messages', messages, handler);
  app.post('/api/v1/messages', { ...messages, schema: { ...messages.schema, hide: true } }, handler);

  const count = {
    schema: {
      tags: ['messages'],
      summary: "Count a message request's input tokens (gateway estimate, no upstream call)",
      description:
        "The gateway's own tokenizer estimate (o200k_base, OpenAI's message framing): no upstream call, no quota, no request log row; counts against the key's requests per minute, not its tokens per minute. A model that is not served is a 404, one the key may not use a 403.",
      body: AnthropicCountTokensSchema,
      security: [{ apiKey: [] }],
    },
    onRequest,
    bodyLimit: services.config.server.chat_body_limit_bytes,
    // Counting consumes no tokens: as Anthropic's, its limit is apart from message creation's.
    config: { chargesTokens: false },
  };
  const counter = async (request: FastifyRequest) => {
    const req = decode(request);
    // As Anthropic's: a model that is not served is a 404 (a key that may not use it, a 403),
    // not a count for a request that could not be made.
    planChat(req, request.principal!, services.chat.planDeps);
    return { input_tokens: sampledPromptTokens(req) };
  };
  app.post('/v1/messages/count_tokens', count, counter);
  app.post('/api/v1/messages/count_tokens', { ...count, schema: { ...count.schema, hide: true } }, counter);
}

// Message ids: a random per-process prefix and a counter, as the chat completion ids.
const ID_PREFIX = randomToken(12);
let idCounter = 0;
const messageId = () => `msg_${ID_PREFIX}${(++idCounter).toString(36)}`;

const ANTHROPIC_WIRE: ChatWire = {
  endpoint: 'messages',
  // A comment: SSE parsers (Anthropic's SDKs included) skip it, before message_start too.
  keepAlive: KEEP_ALIVE,
  complete: (served, result, bill, plan) =>
    encodeAnthropicMessage(messageId(), served.model, result, bill.usage, stopList(plan.request.stop)),
  stream: (served: Served, plan, events) => {
    // message_start carries the input counts, as Anthropic's does (Claude Code sizes its context
    // by them): the upstream's when it reported them before the first delta (Anthropic does, in
    // its message_start), else the local estimate; message_delta has the final counts.
    // Its details within their totals, as message_delta's (Gemini reports a cached count on
    // every chunk, which could exceed its prompt count).
    const reported = events.reported()?.usage;
    const start = (reported && withDetailsInBounds(reported)) ?? {
      prompt_tokens: sampledPromptTokens(plan.request),
      completion_tokens: 0,
      total_tokens: 0,
    };
    const enc = new AnthropicStreamEncoder(
      messageId(),
      served.model,
      served.requestId,
      start,
      stopList(plan.request.stop),
    );
    return {
      chunk: (choices) => enc.chunk(choices),
      end: (bill, failure) => enc.end(bill.usage, failure),
    };
  },
  failedStream: (served, e) => anthropicErrorEvent(e, served.requestId),
};
