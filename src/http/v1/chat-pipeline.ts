import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Reservation } from '../../access/quota/quota-ledger.js';
import { abortedKind, abortedStatus, ClientGone } from '../../gateway/cancel.js';
import { dropClientHidden } from '../../gateway/chat/hidden.js';
import type {
  ChatDeltaChoice,
  ChatRequest,
  ChatResult,
  ChatStreamEvent,
  ChatUsage,
} from '../../gateway/chat/types.js';
import { type ChatPlan, planChat, requestedModel } from '../../gateway/completions/chat-plan.js';
import type { Bill, ChatContext, ChatRunner, StreamOpened } from '../../gateway/completions/chat-runner.js';
import { showsToken } from '../../gateway/completions/read-until-shown.js';
import { GatewayError, UpstreamError } from '../../gateway/errors.js';
import { attemptsHeader, attemptsOf, countsAgainstHealth } from '../../gateway/routing/execute.js';
import type { ChatEventStream } from '../../gateway/upstream/event-stream.js';
import type { Services } from '../../services.js';
import { disconnectIfNotTaken } from '../client-stall.js';
import { toGatewayError } from '../error-handler.js';
import { abortOnClose } from '../shutdown-cut.js';

/**
 * The chat pipeline every chat ingress shares (`/v1/chat/completions`, `/v1/messages`): plan,
 * quota reservation and settlement, route execution with retries and fallbacks, the request log
 * row and upstream health. A `ChatWire` is what differs per ingress: how the answer, the stream
 * and a failure inside a stream are written. Routes decode their body into the canonical
 * `ChatRequest` first (fields a body sent under a hidden field's name are dropped here:
 * `dropClientHidden`), and errors thrown before the answer are shaped by the app's error handler
 * per surface (`error-handler.ts`).
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
  /** What ends a stream already committed (keep-alives sent) when no upstream answered (provider ''). */
  failedStream(served: Served, e: GatewayError): string;
  /** The comment written while waiting for the first upstream byte. */
  keepAlive: string;
}

/** The model and channel that served, when the request began (for ids and `created`), its id. */
export interface Served {
  model: string;
  provider: string;
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

/**
 * Streams Server-Sent Events. Until the first data chunk is written, failures may still fall
 * back to other upstreams; while waiting, `: keep-alive` comments are sent every
 * `keep_alive_interval_ms` (committing to status 200, so a total failure after that point is
 * reported in-band). After the first data chunk nothing is retried.
 */
async function streamChat(
  services: Services,
  wire: ChatWire,
  runner: ChatRunner,
  plan: ChatPlan,
  ctx: ChatContext,
  reservation: Reservation,
  reply: FastifyReply,
) {
  const res = reply.raw;
  let committed = false;
  let lastWrite = Date.now();
  const commit = () => {
    if (committed) return;
    committed = true;
    reply.hijack();
    res.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
  };
  const stallMs = services.config.gateway.client_stall_ms;
  /**
   * Resolves once the client has taken what is buffered (or went away). One that takes nothing
   * for `client_stall_ms` is disconnected: a client that opens a stream and never reads would
   * otherwise hold its upstream request, and a connection of the upstream's pool, for good.
   */
  const drained = () =>
    new Promise<void>((resolve) => {
      const stall = stallMs > 0 ? setTimeout(() => res.destroy(), stallMs) : undefined;
      const done = () => {
        clearTimeout(stall);
        res.off('drain', done).off('close', done);
        resolve();
      };
      res.on('drain', done).on('close', done);
    });
  const interval = services.config.gateway.keep_alive_interval_ms;
  const timer = setInterval(
    () => {
      if (Date.now() - lastWrite < interval || res.destroyed) return;
      commit();
      lastWrite = Date.now();
      res.write(wire.keepAlive);
    },
    Math.max(50, Math.floor(interval / 2)),
  );

  let opened: StreamOpened;
  try {
    opened = await runner.open(plan, ctx);
  } catch (err) {
    clearInterval(timer);
    const e = await finishFailed(runner, plan, ctx, reservation, reply, err);
    if (!committed) throw err;
    if (!res.destroyed)
      res.end(
        wire.failedStream(
          { model: plan.model, provider: '', startedAt: ctx.startedAt, requestId: ctx.requestId },
          e,
        ),
      );
    return reply;
  }
  // Made in the try below: whatever fails from here on (even sending the head) still settles the
  // reservation, logs the request and cancels the upstream's stream.
  let writer: ReturnType<ChatWire['stream']> | undefined;
  let usage: ChatUsage | undefined;
  // The generated text, kept only to count usage if the upstream reports none. Deltas are joined
  // in groups: `text += delta` per delta holds a rope node per delta (~31 KB for 1,000 deltas
  // of a 5.6 KB answer), times every open stream.
  let text = '';
  let parts: string[] = [];
  const keep = (s: string) => {
    parts.push(s);
    if (parts.length >= 64) {
      text += parts.join('');
      parts = [];
    }
  };
  /**
   * When the upstream first produced something to show (epoch ms), hidden reasoning included:
   * `readUntilShown` returned with it, just now. This upstream's TTFT, for its health.
   */
  const upstreamFirstAt = Date.now();
  /**
   * When the first chunk carrying a token the client sees went out (epoch ms): the log's TTFT.
   * With `reasoning.exclude` that is the first answer token (or tool call, or the end), not the
   * first hidden reasoning, nor the role-only chunk that may go out before it; nor a server
   * tool's progress (a web search began, its results or citations: `showsToken`), shown or not.
   * Looked at only until found: a null check per event after that, as before.
   */
  let firstShownAt: number | null = null;
  let status = 200;
  let failure: unknown;
  let inBand: unknown;
  /** One batch of upstream events (what one socket read delivered) as one write. */
  const encode = (batch: ChatStreamEvent[]): string => {
    let out = '';
    for (const raw of batch) {
      // Kept before reasoning.exclude filters the event: the upstream generated it, shown or not.
      if (raw.type === 'delta')
        for (const c of raw.choices) {
          const d = c.delta;
          if (d.reasoning) keep(d.reasoning);
          if (d.content) keep(d.content);
          if (d.tool_calls)
            for (const t of d.tool_calls) {
              const f = t.function;
              if (f?.name) keep(f.name);
              if (f?.arguments) keep(f.arguments);
            }
        }
      const ev = runner.shapeEvent(plan, raw);
      if (!ev) continue;
      if (ev.type === 'usage') usage = ev.usage;
      else if (ev.type === 'error') {
        // Deltas before it in the batch still go out first.
        inBand = ev.error;
        break;
      } else {
        if (firstShownAt === null && showsToken(ev)) firstShownAt = Date.now();
        out += writer!.chunk(ev.choices);
      }
    }
    return out;
  };
  try {
    reply.header('x-modelgate-attempts', attemptsHeader(opened.attempts));
    commit();
    writer = wire.stream(
      {
        model: opened.target.modelId,
        provider: opened.target.channelName,
        startedAt: ctx.startedAt,
        requestId: ctx.requestId,
      },
      plan,
      opened.events,
    );
    let batch: ChatStreamEvent[] | null = opened.first;
    while (batch !== null) {
      const out = encode(batch);
      if (out) {
        lastWrite = Date.now();
        if (!res.write(out) && !res.destroyed) await drained();
      }
      if (inBand !== undefined) throw inBand;
      batch = await opened.events.next();
    }
  } catch (err) {
    failure = err;
    status = ctx.signal.aborted ? abortedStatus(ctx.signal) : toGatewayError(err, reply.request).status;
  } finally {
    clearInterval(timer);
    if (failure !== undefined) opened.events.cancel();
  }
  const last = opened.attempts.at(-1);
  if (failure !== undefined && last) {
    // A stream that ends in a failure ran until it (the route executor measured its try only
    // until the first thing shown).
    last.ms = Date.now() - opened.attemptStartedAt;
    if (ctx.signal.aborted) {
      // The client left (or the shutdown cut it) mid-stream: the try ends there, and says so.
      last.ok = false;
      last.error_kind = abortedKind(ctx.signal);
    } else if (failure instanceof UpstreamError) {
      last.ok = false;
      last.error_kind = `mid_stream_${failure.kind}`;
    }
  }
  const served = { target: opened.target, attempts: opened.attempts };
  const health = services.chat.health;
  const key = `${opened.target.channelId}:${opened.target.modelId}`;
  let bill: Bill;
  try {
    bill = await runner.finish(plan, ctx, reservation, {
      served,
      usage,
      // Cut or left before the upstream's usage event: the counts it reported before that.
      reported: usage ? undefined : opened.events.reported(),
      completionText: text + parts.join(''),
      status,
      error: failure,
      ttftMs: firstShownAt === null ? null : firstShownAt - ctx.startedAt,
    });
  } catch (err) {
    // Settling failed (the database): the try still ends, and a half-open probe must give its
    // slot back, or the circuit would stay half-open with no probe allowed until a restart.
    health.release(key, opened.probe);
    throw err;
  }
  if (failure === undefined) {
    // The upstream's own figures, from the start of its try: the log's TTFT is the client's (from
    // the request, to the first token shown), which includes upstreams that failed before this
    // one and, with reasoning excluded, the reasoning the client did not see; neither is this
    // upstream's. Its TTFT is its first token, reasoning included.
    const tryStart = opened.attemptStartedAt;
    const durationMs = Date.now() - tryStart;
    health.success(
      key,
      {
        latencyMs: durationMs,
        ttftMs: upstreamFirstAt - tryStart,
        completionTokens: bill.usage?.completion_tokens,
        durationMs,
      },
      opened.probe,
    );
  }
  // A stream cut mid-way is the upstream's failure too; a client that left says nothing about it.
  else if (!ctx.signal.aborted && failure instanceof UpstreamError && countsAgainstHealth(failure.kind))
    health.failure(key, failure.kind, opened.probe);
  else health.release(key, opened.probe);
  if (res.destroyed) return reply;
  // No head could be sent: there is no answer to give on this connection.
  if (!writer) {
    res.destroy();
    return reply;
  }
  res.end(writer.end(bill, failure === undefined ? undefined : toGatewayError(failure, reply.request)));
  // The last bytes too: a client that never takes them would keep the socket.
  disconnectIfNotTaken(res, stallMs);
  return reply;
}

/**
 * Settles and logs a request whose route failed before anything was streamed, with the trail
 * of attempts the route executor attached to the error, and puts that trail in the header.
 */
async function finishFailed(
  runner: ChatRunner,
  plan: ChatPlan,
  ctx: ChatContext,
  reservation: Reservation,
  reply: FastifyReply,
  err: unknown,
) {
  const e = toGatewayError(err, reply.request);
  const attempts = attemptsOf(err);
  if (attempts?.length && !reply.sent) reply.header('x-modelgate-attempts', attemptsHeader(attempts));
  await runner.finish(plan, ctx, reservation, {
    status: ctx.signal.aborted ? abortedStatus(ctx.signal) : e.status,
    error: err,
    attempts,
  });
  return e;
}
