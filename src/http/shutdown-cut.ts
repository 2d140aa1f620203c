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

/** Longest a stop waits for requests to settle once the server closed (their upstream call is aborted). */
export const SETTLE_WAIT_MS = 5_000;

/**
 * Ends every connection still open at the end of the shutdown grace period (`open`: the
 * server's sockets). The responses in flight on them are marked first, so their requests are
 * logged as cut by the server (503, `shutdown`), not as clients that left (499). Marked here,
 * synchronously: the server may report itself closed before their `close` events run.
 */
export function cutConnections(server: Server, open: Iterable<Socket>): void {
  for (const socket of open) {
    const res = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (res && !res.writableFinished) cutResponses.add(res);
  }
  server.closeAllConnections?.();
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
  res.on('close', () => {
    if (res.writableFinished) return;
    if (!cutResponses.has(res)) return void target.abort(new ClientLeft());
    request.log.warn('request cut: the gateway is shutting down and its shutdown grace period ran out');
    target.abort(new ShutdownCut());
  });
  return () => {
    if (settled) return;
    settled = true;
    if (--b!.n === 0) b!.idle?.();
  };
}
