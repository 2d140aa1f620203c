import type { FastifyReply } from 'fastify';
import type { Reservation } from '../../access/quota/quota-ledger.js';
import { abortedKind, abortedStatus } from '../../gateway/cancel.js';
import { showsToken } from '../../gateway/chat/shows.js';
import type { ChatStreamEvent, ChatUsage } from '../../gateway/chat/types.js';
import type { ChatPlan } from '../../gateway/completions/chat-plan.js';
import type { ChatContext, ChatRunner, StreamOpened } from '../../gateway/completions/chat-runner.js';
import { UpstreamError } from '../../gateway/errors.js';
import { attemptsHeader, attemptsOf, countsAgainstHealth } from '../../gateway/routing/execute.js';
import { redactUpstreamError } from '../../gateway/upstream/redact-credentials.js';
import { lastProvider } from '../../gateway/usage/request-log-entry.js';
import type { Services } from '../../services.js';
import { disconnectIfNotTaken } from '../client-stall.js';
import { toGatewayError } from '../error-handler.js';
import { endsInBandOnCut } from '../shutdown-cut.js';
import type { ChatWire } from './chat-pipeline.js';
import { finishFailed } from './chat-route-failed.js';

/*
 * The streamed chat answer of the chat pipeline (chat-pipeline.ts): the SSE head, keep-alives
 * while no upstream has answered, writes held to what the client takes, the usage and TTFT the
 * request log gets, and the serving upstream's health once the stream ends. Its locals and
 * closures live as long as the stream, and are much of what a stream promotes to the old
 * generation (docs/performance.md, "What a stream leaves in the old generation").
 */

/**
 * Streams Server-Sent Events. Until the first data chunk is written, failures may still fall
 * back to other upstreams; while waiting, `: keep-alive` comments are sent every
 * `keep_alive_interval_ms` (committing to status 200, so a total failure after that point is
 * reported in-band). After the first data chunk nothing is retried.
 */
export async function streamChat(
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
    // Cut by the shutdown from here on, the stream still gets its in-band error and its end.
    endsInBandOnCut(res);
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
    // The upstream tried last names the failure, as the request log does; none tried, none named.
    const provider = lastProvider(attemptsOf(err)) || undefined;
    if (!res.destroyed)
      res.end(
        wire.failedStream(
          { model: plan.model, provider, startedAt: ctx.startedAt, requestId: ctx.requestId },
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
    // An error event of the upstream's, relayed in the last chunk: without its credentials.
    failure = redactUpstreamError(err, opened.target);
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
  // When settling fails (the database) this throws: a half-open probe's slot was given back when
  // the stream opened (ChatRunner.open), so nothing of the circuit's is left to release.
  const bill = await runner.finish(plan, ctx, reservation, {
    served,
    usage,
    // Cut or left before the upstream's usage event: the counts it reported before that.
    reported: usage ? undefined : opened.events.reported(),
    completionText: text + parts.join(''),
    status,
    error: failure,
    ttftMs: firstShownAt === null ? null : firstShownAt - ctx.startedAt,
  });
  if (failure === undefined) {
    // The upstream's own figures, from the start of its try: the log's TTFT is the client's (from
    // the request, to the first token shown), which includes upstreams that failed before this
    // one and, with reasoning excluded, the reasoning the client did not see; neither is this
    // upstream's. Its TTFT is its first token, reasoning included.
    const tryStart = opened.attemptStartedAt;
    const durationMs = Date.now() - tryStart;
    health.success(key, {
      latencyMs: durationMs,
      ttftMs: upstreamFirstAt - tryStart,
      completionTokens: bill.usage?.completion_tokens,
      durationMs,
    });
  }
  // A stream cut mid-way is the upstream's failure too; a client that left says nothing about it.
  // An ordinary request's (even when it was a half-open probe: that was settled when it opened).
  else if (!ctx.signal.aborted && failure instanceof UpstreamError && countsAgainstHealth(failure.kind))
    health.failure(key, failure.kind);
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
