import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ClientLeft, ShutdownCut } from '../gateway/cancel.js';

/**
 * The requests of one server whose route bills and logs them (chat, embeddings) and has not
 * yet done so, counted: the stop closes the request-log writer and the quota ledger only once
 * this is zero (or after a few seconds), whether the request ended with its answer, was cut by
 * the shutdown, or lost its client (whose connection is gone while its request still settles).
 * A count on the server, not a set of requests: two field updates per request.
 */
interface Billing {
  n: number;
  /** Set while a stop waits: called when `n` comes back to zero. */
  idle?: () => void;
}
const BILLING = Symbol('modelgate.billing');
type BillingServer = Server & { [BILLING]?: Billing };

/** Responses whose connection the shutdown cut (not their client). */
const cutResponses = new WeakSet<ServerResponse>();

/** Whether the shutdown cut this response's connection (its client did not leave). */
export function cutByShutdown(res: ServerResponse): boolean {
  return cutResponses.has(res);
}

/**
 * On the response of a billed request (`abortOnClose`): aborts its request as cut by the
 * shutdown, with the warn line, once. And on a response that writes its own in-band ending when
 * its request is cut (a committed stream): true.
 * Properties of the response, not a WeakMap / WeakSet keyed by it: with an entry per request in
 * a weak table, each request's objects outlived the young generation (a loopback server doing
 * just that went from no mark-compact GCs in 15 s to ten), and the gateway's major GCs stopped
 * it for tens of milliseconds: the paced p99 went from 2.6 ms to 50 ms (session 47's bisect).
 */
const CUT = Symbol('modelgate.shutdownCut');
const IN_BAND = Symbol('modelgate.endsInBand');
type CuttableResponse = ServerResponse & { [CUT]?: () => void; [IN_BAND]?: boolean };

/**
 * Longest the grace's end waits for the streams it cut to write their in-band ending (their
 * upstream call is aborted at once, so only the bill and a client that takes nothing can hold
 * it) before their connections are closed too.
 */
export const IN_BAND_END_WAIT_MS = 2_000;

/** Longest a stop waits for requests to settle once the server closed (their upstream call is aborted). */
export const SETTLE_WAIT_MS = 5_000;

/**
 * Ends every connection still open at the end of the shutdown grace period (`open`: the
 * server's sockets). The responses in flight on them are marked first, so their requests are
 * logged as cut by the server (503, `shutdown`), not as clients that left (499). Marked here,
 * synchronously: the server may report itself closed before their `close` events run.
 * A stream whose head went out (`endsInBandOnCut`) is not closed mid-event: its request is
 * aborted, the route writes the in-band error and the stream's end (decisions.md: a failure after
 * the first byte is one final error chunk, then `[DONE]`; the ingress's own ending on
 * `/v1/messages` and `/v1/responses`), and its connection closes after that (the stop's
 * `Connection: close`), or once `waitMs` ran out. A billed request whose answer has not begun (a
 * non-streamed one waiting for its upstream, a stream before its head) is aborted the same way,
 * and its route answers the `ShutdownCut`: a 503 in the error envelope with `Retry-After`,
 * instead of a connection closed without an answer. Every other connection is closed at once.
 */
export async function cutConnections(
  server: Server,
  open: Iterable<Socket>,
  waitMs = IN_BAND_END_WAIT_MS,
): Promise<void> {
  const ending: Array<Promise<void>> = [];
  for (const socket of [...open]) {
    const res = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (!res || res.writableFinished) {
      socket.destroy();
      continue;
    }
    cutResponses.add(res);
    const r = res as CuttableResponse;
    const cut = r[IN_BAND] || !res.headersSent ? r[CUT] : undefined;
    if (!cut) {
      socket.destroy();
      continue;
    }
    ending.push(new Promise<void>((resolve) => res.once('close', resolve).once('finish', resolve)));
    cut();
  }
  if (ending.length > 0) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(ending),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, waitMs);
      }),
    ]);
    clearTimeout(timer);
  }
  server.closeAllConnections?.();
}

/**
 * Marks a response whose route, once its request is cut by the shutdown, writes an in-band
 * ending on it (a stream whose head went out): `cutConnections` lets it, instead of closing its
 * connection mid-stream.
 */
export function endsInBandOnCut(res: ServerResponse): void {
  (res as CuttableResponse)[IN_BAND] = true;
}

/**
 * Resolves with 0 once every billed request of `server` has settled its bill and written its
 * log entry, or with how many still have not after `waitMs`. The stop closes the request-log
 * writer, the quota ledger and the database only after that: before, a request whose client
 * left during the drain (or that the grace cut) settled after the writer closed, and its log
 * row and the refund of its reservation were lost (the key's spend stayed up by the estimate).
 */
export async function requestsSettled(server: Server, waitMs = SETTLE_WAIT_MS): Promise<number> {
  const b = (server as BillingServer)[BILLING];
  if (!b || b.n === 0) return 0;
  let timer: NodeJS.Timeout | undefined;
  await new Promise<void>((resolve) => {
    b.idle = resolve;
    timer = setTimeout(resolve, waitMs);
  });
  clearTimeout(timer);
  b.idle = undefined;
  return b.n;
}

/**
 * Aborts `target` when the request's connection closes before its answer was sent: the client
 * left (`client disconnected`), or the server cut it on shutdown (`ShutdownCut`, with one
 * warn-level line: the operator's stop ended it, not the client and not a fault). Returns the
 * function the route calls once the request is billed and logged.
 */
export function abortOnClose(
  request: FastifyRequest,
  reply: FastifyReply,
  target: { abort(reason: unknown): void },
): () => void {
  const res = reply.raw;
  const server = request.server.server as BillingServer;
  let b = server[BILLING];
  if (!b) {
    b = { n: 0 };
    server[BILLING] = b;
  }
  b.n++;
  let settled = false;
  let cut = false;
  const shutdownCut = () => {
    if (cut) return;
    cut = true;
    request.log.warn('request cut: the gateway is shutting down and its shutdown grace period ran out');
    target.abort(new ShutdownCut());
  };
  (res as CuttableResponse)[CUT] = shutdownCut;
  res.on('close', () => {
    if (res.writableFinished) return;
    if (!cutResponses.has(res)) return void target.abort(new ClientLeft());
    shutdownCut();
  });
  return () => {
    if (settled) return;
    settled = true;
    if (--b!.n === 0) b!.idle?.();
  };
}
