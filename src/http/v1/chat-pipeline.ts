import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Reservation } from '../../access/quota/quota-ledger.js';
import { type CancelSignal, ClientGone, ClientLeft, ShutdownCut } from '../../gateway/cancel.js';
import { dropClientHidden } from '../../gateway/chat/hidden.js';
import type { ChatDeltaChoice, ChatRequest, ChatResult } from '../../gateway/chat/types.js';
import { type ChatPlan, planChat, requestedModel } from '../../gateway/completions/chat-plan.js';
import type { Bill, ChatContext, ChatRunner, Finish } from '../../gateway/completions/chat-runner.js';
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
  const finish: Finish = {
    served,
    usage: result.usage,
    completionText: outcome.completionText,
    status: 200,
  };
  const bill = runner.price(plan, finish);
  const text = wire.complete(
    {
      model: served.target.modelId,
      provider: served.target.channelName,
      startedAt: ctx.startedAt,
      requestId: ctx.requestId,
    },
    result,
    bill,
    plan,
  );
  if (text.length >= LARGE_ANSWER_CHARS && (await clientLeft(reply, ctx.signal))) {
    // Nothing was written: a client that left, billed for the answer the upstream completed.
    const left = ctx.signal.aborted ? ctx.signal.reason : new ClientLeft();
    const settled = runner.settle(plan, ctx, reservation, { ...finish, status: 499, error: left }, bill);
    if (settled instanceof Promise) await settled;
    throw left;
  }
  const settled = runner.settle(plan, ctx, reservation, finish, bill);
  if (settled instanceof Promise) await settled;
  reply.header('x-modelgate-attempts', attemptsHeader(served.attempts));
  // Already JSON text: Fastify sends a string as is.
  reply.header('content-type', 'application/json; charset=utf-8');
  reply.send(text);
  disconnectIfNotTaken(reply.raw, services.config.gateway.client_stall_ms);
  return reply;
}

/**
 * Non-streamed answers of at least this many characters are written only after the gateway
 * looked at its client's socket (`clientLeft`). Reading, parsing, counting and encoding such an
 * answer runs for long stretches (seconds for 20 MB) in which the close of a client that left is
 * not seen; for a smaller one that stretch is a few milliseconds, and a client that left in it
 * cannot be told from one that left just after the answer was written.
 */
const LARGE_ANSWER_CHARS = 256 * 1024;

/**
 * Whether the client left, once the sockets were polled: two turns of the event loop, since the
 * first (called from an I/O callback, as the upstream's answer ended) comes before the next poll.
 * A socket whose client closed it has ended (its end read) or is gone by then, though the close
 * that aborts `signal` may come a turn later. A shutdown cut is no client leaving: its answer,
 * complete, is written.
 */
async function clientLeft(reply: FastifyReply, signal: CancelSignal): Promise<boolean> {
  for (let i = 0; i < 2; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  if (signal.aborted) return !(signal.reason instanceof ShutdownCut);
  const socket = reply.raw.socket;
  return socket === null || socket.destroyed || socket.readableEnded;
}
