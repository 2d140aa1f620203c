import type { Dispatcher } from 'undici';
import type { StreamDecoder, UpstreamHeaders } from '../../providers/types.js';
import type { CancelSignal } from '../cancel.js';
import { progresses } from '../chat/shows.js';
import type { ChatStreamEvent, ReportedUsage } from '../chat/types.js';
import { UpstreamError } from '../errors.js';
import type { ChatEventStream, OpenedEvents } from './chat-event-stream.js';
import { mapNetworkError } from './client-errors.js';
import { SignalledHandler } from './signalled-handler.js';
import type { SendOptions, UpstreamClient, UpstreamHttpRequest } from './upstream-client.js';

export type { ChatEventStream, OpenedEvents } from './chat-event-stream.js';

/**
 * Undecoded bytes a stream may hold for a reader that has not asked yet before the upstream
 * socket is paused (undici's body stream used the same 64 KiB high-water mark). A client that
 * reads slowly so slows the upstream instead of filling the gateway's memory.
 */
const HIGH_WATER_BYTES = 64 * 1024;

/**
 * Sends `req` and decodes its answer through `decoder` as it arrives, through undici's dispatch
 * API with one handler object per stream: undici's `request()` would add an AsyncResource and a
 * body Readable with its nextTick-driven state machine per stream, and its events per chunk
 * (docs/performance.md, session 10). Resolves once the upstream answered: with the event stream
 * for a 2xx, with the body text for any other status (for `classifyError`; past the client's
 * `maxErrorBodyBytes` it is that much of the body, and the connection is closed). Rejects with
 * UpstreamError for a failure before that, or with the abort reason once `signal` fired.
 * Timeouts are the client's: first byte until the answer's head, idle between two chunks (not
 * counted while the reader holds the socket paused). Once the stream showed something, the idle
 * timeout is also the longest wait between two events that carry something (`progresses`), so
 * keep-alives (comments, pings, empty deltas) after the content cannot hold it open for ever.
 */
export function openEvents(
  client: UpstreamClient,
  req: UpstreamHttpRequest,
  decoder: StreamDecoder,
  opts: SendOptions,
  signal: CancelSignal | undefined,
): Promise<OpenedEvents> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const maxErrorBody = client.limit(opts, 'maxErrorBodyBytes');
    const grace = client.limit(opts, 'finishGraceMs');
    const idle = client.limit(opts, 'idleTimeoutMs');
    client.dispatch(
      req,
      opts,
      new EventsHandler(resolve, reject, decoder, signal, maxErrorBody, grace, idle),
    );
  });
}

enum Phase {
  /** Waiting for the answer's head. */
  Head,
  /** A 2xx answer: decoding events. */
  Events,
  /** Any other status: collecting the body for `classifyError`. */
  ErrorBody,
}

class EventsHandler extends SignalledHandler implements ChatEventStream {
  private phase = Phase.Head;
  private status = 0;
  private headers: UpstreamHeaders = {};
  /** Until `openEvents` resolved or rejected. */
  private opening: { resolve(o: OpenedEvents): void; reject(err: unknown): void } | undefined;
  /** Body chunks not decoded yet (a 2xx), or the whole error body (any other status). */
  private chunks: Buffer[] | undefined;

  /** Decoded events the reader has not taken yet (never an empty array). */
  private queue: ChatStreamEvent[] | undefined;
  /** Bytes received since the reader last took the queue (or of the error body). */
  private buffered = 0;
  /** undici will call nothing more (end, error, or our own abort). */
  private finished = false;
  /** The answer ended (all of it is in `chunks`, the queue or delivered). */
  private ended = false;
  private tailDecoded = false;
  /** An error event is queued: nothing after it counts. */
  private stopped = false;
  private failure: unknown;
  /** The last batch was returned, or the reader cancelled. */
  private over = false;
  private waiter: { resolve(v: ChatStreamEvent[] | null): void; reject(e: unknown): void } | undefined;
  /** A settle is queued for the end of the current socket read. */
  private flushing = false;
  private readonly flush = () => {
    this.flushing = false;
    this.settle();
  };
  /** Runs once the answer is whole until the upstream ends it (`graceOver`). */
  private graceTimer: NodeJS.Timeout | undefined;
  /**
   * Runs from the first event that carries something (`progresses`) on: undici's body timeout
   * is reset by any byte, a keep-alive comment or a ping too (`idleOver`).
   */
  private idleTimer: NodeJS.Timeout | undefined;
  /** When the last event that carries something was decoded (epoch ms). */
  private lastProgress = 0;

  constructor(
    resolve: (o: OpenedEvents) => void,
    reject: (err: unknown) => void,
    private readonly decoder: StreamDecoder,
    signal: CancelSignal | undefined,
    private readonly maxErrorBody: number,
    private readonly finishGraceMs: number,
    private readonly idleTimeoutMs: number,
  ) {
    super(signal);
    this.opening = { resolve, reject };
  }

  // ---- undici's side ----

  onResponseStart(c: Dispatcher.DispatchController, status: number, headers: UpstreamHeaders): void {
    SignalledHandler.dropRawHeaders(c);
    if (status < 200) return; // 1xx: informational, the answer follows
    this.status = status;
    this.headers = headers;
    // A JSON answer to a streamed request is no stream: an error a proxy sends with a 200
    // (OpenRouter's `{"error": {"code": 402, ...}}`), or a server that ignored `stream: true`.
    // Read like an error body, for the caller to classify (openChatStream), instead of failing as
    // a stream that "ended early" (a retryable connection error, its real kind lost).
    if (status >= 300 || isJson(headers['content-type'])) {
      this.phase = Phase.ErrorBody;
      return;
    }
    this.phase = Phase.Events;
    const o = this.opening!;
    this.opening = undefined;
    o.resolve({ status, headers, events: this });
  }

  onResponseData(c: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.over) return;
    if (this.phase === Phase.ErrorBody) {
      this.errorBodyData(chunk);
      return;
    }
    if (this.chunks) this.chunks.push(chunk);
    else this.chunks = [chunk];
    this.buffered += chunk.length;
    if (this.waiter) {
      // Once the parser is done with this socket read: every HTTP chunk it carried is decoded
      // in one go and is one batch (one write to the client), as undici's body stream gave.
      // Settling at once would hand the reader the first chunk alone (measured: 7.9 batches per
      // 20-event stream against 4.6, +12% instructions per stream), and decoding each chunk
      // as it comes costs a decoder call per chunk.
      if (!this.flushing) {
        this.flushing = true;
        queueMicrotask(this.flush);
      }
    } else if (this.buffered >= HIGH_WATER_BYTES) c.pause();
  }

  onResponseEnd(): void {
    this.finished = true;
    this.release();
    if (this.phase === Phase.ErrorBody) {
      this.resolveErrorBody();
      return;
    }
    if (this.over) return;
    this.ended = true;
    this.settle();
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    if (this.finished) return;
    this.finished = true;
    this.release();
    if (this.opening) {
      const o = this.opening;
      this.opening = undefined;
      o.reject(mapNetworkError(err, this.signal));
      return;
    }
    if (this.over) return;
    this.failure = err;
    this.settle();
  }

  /** Keeps the error body up to `maxErrorBody`; there it answers with that and closes the connection. */
  private errorBodyData(chunk: Buffer): void {
    const room = this.maxErrorBody - this.buffered;
    const kept = chunk.length <= room ? chunk : chunk.subarray(0, room);
    if (kept.length > 0) {
      if (this.chunks) this.chunks.push(kept);
      else this.chunks = [kept];
      this.buffered += kept.length;
    }
    if (kept === chunk) return;
    this.resolveErrorBody();
    this.over = true;
    this.abort();
  }

  private resolveErrorBody(): void {
    const o = this.opening;
    if (!o) return;
    this.opening = undefined;
    const text = this.chunks ? concat(this.chunks).toString('utf8') : '';
    this.chunks = undefined;
    o.resolve({ status: this.status, headers: this.headers, text });
  }

  protected abortedBeforeStart(reason: unknown): void {
    // Only `opening` can be pending: no events exist before undici started the request. Without
    // it the stream already ended and was released (a listener that ran late): nothing to do.
    const o = this.opening;
    if (!o) return;
    this.opening = undefined;
    this.over = true;
    this.release();
    o.reject(reason);
  }

  // ---- the reader's side ----

  next(): Promise<ChatStreamEvent[] | null> {
    if (this.waiter) return Promise.reject(new Error('ChatEventStream.next() called while one is pending'));
    try {
      const batch = this.pull();
      if (batch !== undefined) return Promise.resolve(batch);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  cancel(): void {
    if (this.over) return;
    this.over = true;
    this.queue = undefined;
    this.chunks = undefined;
    this.abort();
    const w = this.waiter;
    this.waiter = undefined;
    w?.resolve(null);
  }

  reported(): ReportedUsage | undefined {
    return this.decoder.reported?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ChatStreamEvent> {
    let finished = false;
    try {
      for (let b = await this.next(); b !== null; b = await this.next()) yield* b;
      finished = true;
    } finally {
      if (!finished) this.cancel();
    }
  }

  // ---- inside ----

  /** Events available now, null when over, undefined when nothing has arrived yet. */
  private pull(): ChatStreamEvent[] | null | undefined {
    if (this.over) return null;
    if (this.failure !== undefined && this.signal?.aborted) {
      this.over = true;
      throw this.signal.reason ?? this.failure;
    }
    this.decodeArrived();
    const batch = this.queue;
    if (batch !== undefined) {
      this.queue = undefined;
      this.buffered = 0;
      if (this.stopped) this.over = true;
      else {
        this.resumeSoon();
        if (!this.ended && this.graceTimer === undefined && this.decoder.whole?.()) this.startGrace();
      }
      return batch;
    }
    if (this.failure !== undefined) {
      this.over = true;
      const err = mapNetworkError(this.failure, this.signal);
      if (!(err instanceof UpstreamError)) throw err;
      // A cut (or the idle timeout) after the whole answer: it ends as a clean close would.
      const tail = this.decoder.endOnCut?.();
      if (tail === undefined) return [{ type: 'error', error: err }];
      return tail.length > 0 ? tail : null;
    }
    if (this.ended) {
      this.over = true;
      return null;
    }
    // Paused with nothing decoded: one event longer than the high-water mark is still arriving.
    this.resumeSoon();
    return undefined;
  }

  /**
   * The answer is whole and its terminator has not come: an upstream that sends its finish and
   * then neither `[DONE]` nor the end of its body (silent, or a proxy holding the connection)
   * would hold the client until the idle timeout. Past the grace the stream ends as a cut after
   * the whole answer does: cleanly (`endOnCut`), with what arrived in the meantime.
   */
  private startGrace(): void {
    this.graceTimer = setTimeout(this.graceOver, this.finishGraceMs);
  }

  private readonly graceOver = () => {
    this.graceTimer = undefined;
    if (this.finished || this.over) return;
    // Held paused by a slow reader: the silence is the client's, the upstream may have more.
    if (this.controller?.paused) {
      this.startGrace();
      return;
    }
    this.failure = new UpstreamError('timeout', 'upstream sent no terminator after its finish');
    this.abort();
    this.settle();
  };

  /**
   * No event that carries something for `idleTimeoutMs`, only keep-alives (SSE comments,
   * Anthropic's pings, empty deltas), or nothing: the stream fails as undici's idle timeout
   * fails it on silence. What arrived but was not decoded yet (the reader is writing to its
   * client) is decoded first: progress in it counts. While a slow reader holds the socket paused
   * the silence is the client's, as for the grace.
   */
  private readonly idleOver = () => {
    this.idleTimer = undefined;
    if (this.finished || this.over) return;
    if (this.controller?.paused) this.lastProgress = Date.now();
    else {
      this.decodeArrived();
      if (this.stopped) {
        this.settle();
        return;
      }
    }
    const left = this.lastProgress + this.idleTimeoutMs - Date.now();
    if (left > 0) {
      this.idleTimer = setTimeout(this.idleOver, left);
      return;
    }
    this.failure = new UpstreamError('timeout', 'upstream idle timeout (nothing but keep-alives)');
    this.abort();
    this.settle();
  };

  protected override release(): void {
    if (this.graceTimer !== undefined) {
      clearTimeout(this.graceTimer);
      this.graceTimer = undefined;
    }
    if (this.idleTimer !== undefined) {
      clearTimeout(this.idleTimer);
      this.idleTimer = undefined;
    }
    super.release();
  }

  /** Lets undici read on if we paused it; not from inside its parser, which would call back in. */
  private resumeSoon(): void {
    const c = this.controller;
    if (c?.paused && !this.finished) queueMicrotask(() => c.resume());
  }

  private settle(): void {
    const w = this.waiter;
    if (!w) return;
    let batch: ChatStreamEvent[] | null | undefined;
    try {
      batch = this.pull();
    } catch (err) {
      this.waiter = undefined;
      w.reject(err);
      return;
    }
    if (batch === undefined) return;
    this.waiter = undefined;
    w.resolve(batch);
  }

  /** Decodes the chunks that arrived (and the decoder's tail once the answer ended) into the queue. */
  private decodeArrived(): void {
    if (this.stopped) return;
    const chunks = this.chunks;
    if (chunks) {
      this.chunks = undefined;
      this.add(this.decode(concat(chunks), false));
    }
    if (this.ended && !this.tailDecoded && !this.stopped) {
      this.tailDecoded = true;
      this.add(this.decode(undefined, true));
    }
  }

  /** The decoder's events for a chunk (or its tail); a decoder that throws ends the stream. */
  private decode(chunk: Buffer | undefined, end: boolean): ChatStreamEvent[] {
    try {
      return end ? this.decoder.end() : this.decoder.push(chunk!);
    } catch (cause) {
      const error =
        cause instanceof UpstreamError
          ? cause
          : new UpstreamError('bad_response', 'undecodable upstream stream', { cause });
      return [{ type: 'error', error }];
    }
  }

  /** Queues events up to and including an error event, and frees the connection after one. */
  private add(events: ChatStreamEvent[]): void {
    let n = events.length;
    if (n === 0) return;
    let progress = false;
    for (let i = 0; i < n; i++) {
      const ev = events[i]!;
      if (ev.type !== 'error') {
        progress ||= progresses(ev);
        continue;
      }
      n = i + 1;
      this.stopped = true;
      this.abort();
      break;
    }
    if (progress && !this.finished) {
      this.lastProgress = Date.now();
      this.idleTimer ??= setTimeout(this.idleOver, this.idleTimeoutMs);
    }
    const q = this.queue;
    if (q === undefined) this.queue = n === events.length ? events : events.slice(0, n);
    else for (let i = 0; i < n; i++) q.push(events[i]!);
  }

  /** Tears the request down (the connection is not reused) unless undici is done with it. */
  private abort(): void {
    const c = this.controller;
    this.release();
    if (this.finished) return;
    this.finished = true;
    c?.abort(new Error('upstream stream cancelled'));
  }
}

function concat(chunks: Buffer[]): Buffer {
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

/** `application/json` or `application/problem+json`, with or without parameters. */
function isJson(contentType: unknown): boolean {
  const ct = Array.isArray(contentType) ? contentType[0] : contentType;
  return typeof ct === 'string' && /^application\/(problem\+)?json\s*(;|$)/i.test(ct);
}
