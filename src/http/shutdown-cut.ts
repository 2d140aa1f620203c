import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ClientLeft, ShutdownCut } from '../gateway/cancel.js';

/** A request whose route bills and logs it (chat, embeddings): whether it has done so yet. */
interface Tracked {
  settled: boolean;
  /** Set when the request was cut before it settled: resolves the stop's wait for it. */
  release?: () => void;
}

/**
 * A response's `Tracked`, as a property of the response: set on every chat and embeddings
 * request, so it is a symbol-keyed field rather than a WeakMap entry (ephemerons cost the
 * garbage collector on every scavenge).
 */
const TRACKED = Symbol('modelgate.shutdownTracked');
type TrackedResponse = ServerResponse & { [TRACKED]?: Tracked };
/** Responses whose connection the shutdown cut (not their client). */
const cutResponses = new WeakSet<ServerResponse>();
/** Per server cut: the cut requests still settling their bill and writing their log. */
const unsettled = new WeakMap<Server, Promise<void>[]>();

/** Longest a stop waits for cut requests to log (they end at once: their upstream call is aborted). */
const SETTLE_WAIT_MS = 5_000;

/**
 * Ends every connection still open at the end of the shutdown grace period (`open`: the
 * server's sockets). The responses in flight on them are marked first, so their requests are
 * logged as cut by the server (503, `shutdown`), not as clients that left (499). Marked here,
 * synchronously: the server may report itself closed before their `close` events run.
 */
export function cutConnections(server: Server, open: Iterable<Socket>): void {
  const pending: Promise<void>[] = [];
  for (const socket of open) {
    const res = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (!res || res.writableFinished) continue;
    cutResponses.add(res);
    const t = (res as TrackedResponse)[TRACKED];
    if (t && !t.settled)
      pending.push(
        new Promise<void>((resolve) => {
          t.release = resolve;
        }),
      );
  }
  unsettled.set(server, pending);
  server.closeAllConnections?.();
}

/**
 * Resolves once every request cut by `cutConnections` has settled its bill and written its
 * log entry (or after a few seconds): the stop closes the request-log writer and the database
 * only after that, so a cut request is billed and logged, not lost with the writer.
 */
export async function cutRequestsSettled(server: Server): Promise<void> {
  const pending = unsettled.get(server);
  if (!pending || pending.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(pending),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, SETTLE_WAIT_MS);
    }),
  ]);
  clearTimeout(timer);
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
  const res: TrackedResponse = reply.raw;
  const t: Tracked = { settled: false };
  res[TRACKED] = t;
  res.on('close', () => {
    if (res.writableFinished) return;
    if (!cutResponses.has(res)) return void target.abort(new ClientLeft());
    request.log.warn('request cut: the gateway is shutting down and its shutdown grace period ran out');
    target.abort(new ShutdownCut());
  });
  return () => {
    t.settled = true;
    t.release?.();
  };
}
