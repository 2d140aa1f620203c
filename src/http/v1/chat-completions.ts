import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomToken } from '../../access/secrets.js';
import { onlyHiddenEvent } from '../../gateway/chat/hidden.js';
import type { ChatDeltaChoice, ChatRequest } from '../../gateway/chat/types.js';
import type { Bill } from '../../gateway/completions/chat-runner.js';
import type { GatewayError } from '../../gateway/errors.js';
import type { Services } from '../../services.js';
import type { App } from '../app.js';
import { requireApiKey } from '../auth.js';
import { withClientBetas } from '../wire/anthropic-beta.js';
import { ChatRequestSchema } from '../wire/chat-request-schema.js';
import {
  chunkEvent,
  DONE_EVENT,
  type Envelope,
  encodeCompletion,
  encodeUsage,
  errorEvent,
  KEEP_ALIVE,
  streamHead,
  usageEvent,
} from '../wire/openai-chat-encode.js';
import { type ChatWire, handleChat, type Served, type StreamWriter } from './chat-pipeline.js';

/**
 * `POST /v1/chat/completions` (also under `/api/v1`, where the OpenRouter SDK looks). OpenRouter's
 * `x-anthropic-beta` header reaches an Anthropic upstream as `anthropic-beta` (`withClientBetas`).
 */
export function registerChatRoutes(app: App, services: Services): void {
  const opts = {
    schema: {
      tags: ['chat'],
      summary: 'Chat completion (OpenAI/OpenRouter-compatible), streamed with stream: true',
      description:
        'Routed to the upstreams serving the model, with retries and fallbacks (models, provider); usage and cost are billed to the key.',
      body: ChatRequestSchema,
      security: [{ apiKey: [] }],
    },
    onRequest: requireApiKey(services),
    bodyLimit: services.config.server.chat_body_limit_bytes,
  };
  const handler = (request: FastifyRequest, reply: FastifyReply) =>
    handleChat(
      services,
      OPENAI_WIRE,
      request,
      reply,
      withClientBetas(request.body as ChatRequest, request.headers['x-anthropic-beta']),
    );
  app.post('/v1/chat/completions', opts, handler);
  app.post('/api/v1/chat/completions', { ...opts, schema: { ...opts.schema, hide: true } }, handler);
}

// Completion ids: a random per-process prefix and a counter, unique without per-request entropy.
const ID_PREFIX = randomToken(12);
let idCounter = 0;

function envelope(s: Served): Envelope {
  const created = Math.floor(s.startedAt / 1000);
  return {
    id: `gen-${created}-${ID_PREFIX}${(++idCounter).toString(36)}`,
    created,
    model: s.model,
    provider: s.provider,
  };
}

/** The OpenAI/OpenRouter chat wire: chat.completion bodies and chunks, `data: [DONE]` last. */
class OpenAiStreamWriter implements StreamWriter {
  private readonly head: string;
  constructor(
    served: Served,
    private readonly includeUsage: boolean,
  ) {
    this.head = streamHead(envelope(served));
  }
  chunk(choices: ChatDeltaChoice[]): string {
    // An Anthropic server tool's block events (hidden) have nothing to show here: the text around
    // them is what an OpenAI client gets.
    if (choices.some(onlyHiddenEvent)) {
      const shown = choices.filter((c) => !onlyHiddenEvent(c));
      return shown.length > 0 ? chunkEvent(this.head, shown) : '';
    }
    return chunkEvent(this.head, choices);
  }
  end(bill: Bill, failure: GatewayError | undefined): string {
    let tail = '';
    if (failure !== undefined) tail += errorEvent(this.head, failure);
    // A stream cut mid-way is billed for what was generated: a client that asked for usage gets
    // that figure too, as the last event before [DONE], after the error.
    if (this.includeUsage && bill.usage)
      tail += usageEvent(this.head, encodeUsage(bill.usage, true, bill.costUsd));
    return tail + DONE_EVENT;
  }
}

const OPENAI_WIRE: ChatWire = {
  endpoint: 'chat.completions',
  keepAlive: KEEP_ALIVE,
  complete: (served, result, bill, plan) =>
    encodeCompletion(
      envelope(served),
      result,
      bill.usage && encodeUsage(bill.usage, plan.includeUsage, bill.costUsd),
    ),
  stream: (served, plan) => new OpenAiStreamWriter(served, plan.includeUsage),
  failedStream: (served, e) => errorEvent(streamHead(envelope(served)), e) + DONE_EVENT,
};
