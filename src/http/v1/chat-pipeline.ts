import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Reservation } from '../../access/quota/quota-ledger.js';
import { ClientGone } from '../../gateway/cancel.js';
import { dropClientHidden } from '../../gateway/chat/hidden.js';
import type { ChatDeltaChoice, ChatRequest, ChatResult } from '../../gateway/chat/types.js';
import { type ChatPlan, planChat, requestedModel } from '../../gateway/completions/chat-plan.js';
import type { Bill, ChatContext, ChatRunner } from '../../gateway/completions/chat-runner.js';
import { GatewayError } from '../../gateway/errors.js';
import { attemptsHeader } from '../../gateway/routing/execute.js';
import type { ChatEventStream } from '../../gateway/upstream/event-stream.js';
import type { Services } from '../../services.js';
import { disconnectIfNotTaken } from '../client-stall.js';
import { abortOnClose } from '../shutdown-cut.js';
import { finishFailed } from './chat-route-failed.js';
import { streamChat } from './chat-stream.js';

/**
 * The chat pipeline every chat ingress shares (`/v1/chat/completions`, `/v1/messages`): plan,
 * quota reservation and settlement, route execution with retries and fallbacks, the request log
 * row and upstream health. A `ChatWire` is what differs per ingress: how the answer, the stream
 * and a failure inside a stream are written. Routes decode their body into the canonical
 * `ChatRequest` first (fields a body sent under a hidden field's name are dropped here:
 * `dropClientHidden`), and errors thrown before the answer are shaped by the app's error handler
 * per surface (`error-handler.ts`). The streamed answer is `streamChat` (chat-stream.ts); a route
 * that failed before any answer is settled by `finishFailed` (chat-route-failed.ts).
 */
export interface ChatWire {
  /** The request log's `endpoint` (e.g. `chat.completions`, `messages`). */
  endpoint: string;
  /** The non-streamed answer, as JSON text. */
  complete(served: Served, result: ChatResult, bill: Bill, plan: ChatPlan): string;
  /**
   * A stream's writer, made once the upstream that serves it is known; `events` is that
   * upstream's stream, for the usage it reported before the first delta (`reported`).
   */
  stream(served: Served, plan: ChatPlan, events: ChatEventStream): StreamWriter;
  /**
   * What ends a stream already committed (keep-alives sent) when no upstream answered: `provider`
   * is the upstream tried last, undefined when none was tried.
   */
  failedStream(served: Served, e: GatewayError): string;
  /** The comment written while waiting for the first upstream byte. */
  keepAlive: string;
}

/** The model and channel that served, when the request began (for ids and `created`), its id. */
export interface Served {
  model: string;
  /** The channel that served; in `failedStream`, the one tried last (undefined: none was tried). */
  provider: string | undefined;
  startedAt: number;
  requestId: string;
}

export interface StreamWriter {
  /** One batch's delta choices (after `reasoning.exclude`) as text to write ('' for nothing). */
  chunk(choices: ChatDeltaChoice[]): string;
  /** The stream's last bytes: the in-band error when it failed, the usage the plan asks for, the end. */
  end(bill: Bill, failure: GatewayError | undefined): string;
}

export async function handleChat(
  services: Services,
  wire: ChatWire,
  request: FastifyRequest,
  reply: FastifyReply,
  body: ChatRequest,
) {
  const { runner, planDeps } = services.chat;
  const gone = new ClientGone();
  const ctx: ChatContext = {
    requestId: request.id,
    principal: request.principal!,
    signal: gone,
    startedAt: Date.now(),
    endpoint: wire.endpoint,
  };
  // A body field named like a hidden one (anthropic_thinking, a message's anthropic_content...)
  // is the client's, not the ingress's word: gone before planning and the adapters read it.
  dropClientHidden(body);
  let plan: ChatPlan;
  try {
    plan = planChat(body, ctx.principal, planDeps);
  } catch (err) {
    // Past the body's schema check every request leaves one row, a refusal by the plan too.
    runner.recordRefusal(
      { model: requestedModel(body, ctx.principal, planDeps), stream: body.stream === true },
      ctx,
      err,
    );
    throw err;
  }
  // A client that goes away (or a shutdown that cuts the connection) aborts the upstream call at once.
  const settled = abortOnClose(request, reply, gone);
  try {
    let reservation: Reservation;
    try {
      // No await when the ledger answered at once (local credit): a microtask turn fewer.
      const r = runner.reserve(plan, ctx);
      reservation = r instanceof Promise ? await r : r;
    } catch (err) {
      runner.recordRefusal(plan, ctx, err);
      throw withMaxTokensHint(err, body);
    }
    return await (plan.stream
      ? streamChat(services, wire, runner, plan, ctx, reservation, reply)
      : completeChat(services, wire, runner, plan, ctx, reservation, reply));
  } finally {
    // Billed and logged: a stop that cut this request may close the log writer now.
    settled();
  }
}

/**
 * A quota refusal of a request that set no length limit: the estimate counted the longest answer
 * the model can give (docs/quotas.md, "The chat estimate"), which a small quota cannot cover even
 * for a short answer. The message says so, so the client knows a max_tokens may get it through.
 */
function withMaxTokensHint(err: unknown, body: ChatRequest): unknown {
  if (!(err instanceof GatewayError) || err.status !== 402) return err;
  if (body.max_tokens != null || body.max_completion_tokens != null) return err;
  return new GatewayError(
    402,
    `${err.message}; without max_tokens the estimate counts the longest answer the model can give, a lower max_tokens may fit`,
    { type: err.type, param: err.param, metadata: err.metadata },
  );
}

async function completeChat(
  services: Services,
  wire: ChatWire,
  runner: ChatRunner,
  plan: ChatPlan,
  ctx: ChatContext,
  reservation: Reservation,
  reply: FastifyReply,
) {
  let outcome: Awaited<ReturnType<ChatRunner['complete']>>;
  try {
    outcome = await runner.complete(plan, ctx);
  } catch (err) {
    await finishFailed(runner, plan, ctx, reservation, reply, err);
    throw err;
  }
  const { result, served } = outcome;
  const b = runner.finish(plan, ctx, reservation, {
    served,
    usage: result.usage,
    completionText: outcome.completionText,
    status: 200,
  });
  const bill = b instanceof Promise ? await b : b;
  reply.header('x-modelgate-attempts', attemptsHeader(served.attempts));
  // Already JSON text: Fastify sends a string as is.
  reply.header('content-type', 'application/json; charset=utf-8');
  reply.send(
    wire.complete(
      {
        model: served.target.modelId,
        provider: served.target.channelName,
        startedAt: ctx.startedAt,
        requestId: ctx.requestId,
      },
      result,
      bill,
      plan,
    ),
  );
  disconnectIfNotTaken(reply.raw, services.config.gateway.client_stall_ms);
  return reply;
}
