/**
 * The one HTTP client for upstream calls: undici with keep-alive and a connection pool per origin
 * (an `Agent` keeps one `Pool` per origin). Three timeouts, each mapped to UpstreamError 'timeout':
 * connect, first byte (response headers) and idle (gap between two body chunks), so a stalled
 * stream is cut without limiting a long healthy one. Network failures map to 'connection'.
 *
 * No retries here: route execution decides (DESIGN.md). When the caller's `signal` aborts (client
 * disconnected), the request and its connection are torn down at once and the pending call or body
 * iteration rejects with the signal's reason, not an UpstreamError: there is nothing to retry.
 *
 * An answer is read by one of three readers, each in its own module: `ReadOnceResponse` for
 * `send`, `TextHandler` for `sendText` and `EventsHandler` (event-stream.ts) for `openEvents`, the
 * last two on undici's dispatch API over `SignalledHandler`; client-errors.ts maps what fails.
 */
import { Agent, type Dispatcher } from 'undici';
import type { CancelSignal } from '../cancel.js';
import { DEFAULT_MAX_EVENT_CHARS } from '../chat/sse.js';
import { mapNetworkError } from './client-errors.js';
import { ReadOnceResponse } from './read-once-response.js';
import { abortReason } from './signalled-handler.js';
import { TextHandler } from './text-handler.js';

export interface UpstreamHttpRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string;
}

export interface UpstreamTimeouts {
  connectTimeoutMs: number;
  /** Until the response headers arrive. */
  firstByteTimeoutMs: number;
  /** Longest silence between two body chunks. */
  idleTimeoutMs: number;
}

export interface StreamTimes {
  /**
   * A stream's wait, once its answer is whole (every choice finished), for its terminator and
   * trailing events (the usage chunk) before it ends as if cut there (`openEvents`).
   */
  finishGraceMs: number;
}

/**
 * How much of an upstream answer the gateway holds (docs/routing.md, "Size limits"), so an
 * upstream that answers without end costs about a limit's worth of memory, not the answer.
 */
export interface BodyLimits {
  /**
   * The largest 2xx answer read whole (`sendText`, `text()`): past it the call fails with
   * UpstreamError 'bad_response' and the connection is closed without reading on.
   */
  maxBodyBytes: number;
  /**
   * What is kept of a non-2xx answer's body (`sendText`, `text()`, `openEvents`) for its error
   * message: past it the caller gets that prefix and the connection is closed.
   */
  maxErrorBodyBytes: number;
  /** The largest single event of a streamed answer (given to the adapter's stream decoder). */
  maxEventBytes: number;
}

/** The defaults of `gateway.max_response_bytes`, `max_error_body_bytes`, `max_stream_event_bytes`. */
export const DEFAULT_BODY_LIMITS: BodyLimits = {
  maxBodyBytes: 64 * 1024 * 1024,
  maxErrorBodyBytes: 64 * 1024,
  maxEventBytes: DEFAULT_MAX_EVENT_CHARS,
};

export interface SendOptions extends Partial<UpstreamTimeouts>, Partial<BodyLimits>, Partial<StreamTimes> {
  signal?: CancelSignal;
}

export interface UpstreamResponse {
  status: number;
  /** Lower-cased names. */
  headers: Record<string, string | string[] | undefined>;
  /** Body chunks; errors surface as UpstreamError (or the abort reason). Breaking out closes the connection. */
  readonly body: AsyncIterable<Uint8Array>;
  /** Whole body as UTF-8 text (for non-stream answers and error bodies). */
  text(): Promise<string>;
  /** Discard the body and release the connection. */
  dump(): Promise<void>;
}

/** A whole answer read by `sendText`. */
export interface TextAnswer {
  status: number;
  headers: UpstreamResponse['headers'];
  text: string;
}

export interface UpstreamClientOptions {
  /** Max connections per origin (undefined = unlimited, undici's default). */
  connectionsPerOrigin?: number;
  keepAliveTimeoutMs?: number;
  defaults?: Partial<UpstreamTimeouts & BodyLimits & StreamTimes>;
}

export const DEFAULT_TIMEOUTS: UpstreamTimeouts = {
  connectTimeoutMs: 10_000,
  firstByteTimeoutMs: 120_000,
  idleTimeoutMs: 60_000,
};

export const DEFAULT_FINISH_GRACE_MS = 3_000;

export class UpstreamClient {
  private readonly agents = new Map<number, Agent>();
  private readonly defaults: UpstreamTimeouts & BodyLimits & StreamTimes;

  constructor(private readonly opts: UpstreamClientOptions = {}) {
    this.defaults = {
      ...DEFAULT_TIMEOUTS,
      ...DEFAULT_BODY_LIMITS,
      finishGraceMs: DEFAULT_FINISH_GRACE_MS,
      ...opts.defaults,
    };
  }

  /** A size limit (or the finish grace, or the idle timeout) for a call: its own, else the client's default. */
  limit(opts: SendOptions, which: keyof BodyLimits | keyof StreamTimes | 'idleTimeoutMs'): number {
    return opts[which] ?? this.defaults[which];
  }

  /** One Agent per connect timeout (undici sets it per dispatcher); in practice one or two. */
  private agent(connectTimeoutMs: number): Agent {
    let a = this.agents.get(connectTimeoutMs);
    if (!a) {
      a = new Agent({
        connectTimeout: connectTimeoutMs,
        keepAliveTimeout: this.opts.keepAliveTimeoutMs ?? 30_000,
        connections: this.opts.connectionsPerOrigin ?? null,
      });
      this.agents.set(connectTimeoutMs, a);
    }
    return a;
  }

  /** The Agent for these options (one per connect timeout). */
  private agentFor(opts: SendOptions): Agent {
    return this.agent(opts.connectTimeoutMs ?? this.defaults.connectTimeoutMs);
  }

  /** What undici is asked, for both readers: `request()` also takes the signal, `dispatch()` not. */
  private options(
    req: UpstreamHttpRequest,
    opts: SendOptions,
    signal?: CancelSignal,
  ): Dispatcher.RequestOptions {
    const d = this.defaults;
    const { origin, path } = splitUrl(req.url);
    return {
      origin,
      path,
      method: req.method,
      headers: req.headers,
      body: req.body,
      // undici only adds and removes an 'abort' listener: a CancelSignal does.
      signal: signal as AbortSignal | undefined,
      headersTimeout: opts.firstByteTimeoutMs ?? d.firstByteTimeoutMs,
      bodyTimeout: opts.idleTimeoutMs ?? d.idleTimeoutMs,
    };
  }

  /** `signal` overrides `opts.signal`, so `opts` can be shared by all requests. */
  async send(
    req: UpstreamHttpRequest,
    opts: SendOptions = {},
    signal = opts.signal,
  ): Promise<UpstreamResponse> {
    if (signal?.aborted) throw signal.reason;
    let res: Dispatcher.ResponseData;
    try {
      const pending = this.agentFor(opts).request(this.options(req, opts, signal));
      res = await (signal ? untilAborted(pending, signal) : pending);
    } catch (err) {
      throw mapNetworkError(err, signal);
    }
    return new ReadOnceResponse(
      res,
      signal,
      this.limit(opts, 'maxBodyBytes'),
      this.limit(opts, 'maxErrorBodyBytes'),
    );
  }

  /**
   * The status, headers and whole body as text, for answers read whole (non-streamed chat,
   * listings). Through undici's dispatch API with one handler object: `request()` + `text()`
   * would add, per call, an AsyncResource, a Readable for the body with its nextTick-driven
   * state machine, and the promise chain that drains it (see docs/performance.md, session 9).
   * Timeouts, aborts, errors and size limits behave as `send` then `text()`.
   */
  sendText(req: UpstreamHttpRequest, opts: SendOptions = {}, signal = opts.signal): Promise<TextAnswer> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const maxBody = this.limit(opts, 'maxBodyBytes');
    const maxErrorBody = this.limit(opts, 'maxErrorBodyBytes');
    return new Promise((resolve, reject) =>
      this.dispatch(req, opts, new TextHandler(resolve, reject, signal, maxBody, maxErrorBody)),
    );
  }

  /**
   * Sends `req` with `handler` reading the answer through undici's dispatch API (`sendText`,
   * `openEvents`). The handler owns aborts: the signal is not passed to undici here.
   */
  dispatch(req: UpstreamHttpRequest, opts: SendOptions, handler: Dispatcher.DispatchHandler): void {
    let options: Dispatcher.RequestOptions;
    try {
      options = this.options(req, opts);
    } catch (err) {
      // An unparseable URL: the handler settles with a connection error, as undici's own would.
      handler.onResponseError?.(undefined as never, err as Error);
      return;
    }
    this.agentFor(opts).dispatch(options, handler);
  }

  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((a) => a.close()));
    this.agents.clear();
  }
}

/**
 * `request()`'s answer, or the abort reason as soon as `signal` fires. undici's request() only
 * acts on an abort once it has started the request: one waiting in the queue (the origin at
 * `connectionsPerOrigin`) or for a connection still being made would keep the caller until a
 * connection frees or the connect times out (10 s). undici still tears it down when it starts
 * it (the signal is aborted by then); what it reports after the abort is dropped. An answer
 * whose headers came just before the abort has its body destroyed by undici's own listener
 * (added first, so it runs first); the `destroy` here only makes sure.
 */
function untilAborted(
  pending: Promise<Dispatcher.ResponseData>,
  signal: CancelSignal,
): Promise<Dispatcher.ResponseData> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const onAbort = () => {
      if (settled) return;
      settled = true;
      reject(abortReason(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    pending.then(
      (res) => {
        signal.removeEventListener('abort', onAbort);
        if (settled) return void res.body.destroy();
        settled = true;
        resolve(res);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        if (settled) return;
        settled = true;
        reject(err);
      },
    );
  });
}

/**
 * Origin and path of an upstream URL, parsed once per URL: targets call the same few URLs, and
 * handing undici's Agent an origin and a path spares it a `new URL` per request.
 */
const split = new Map<string, { origin: string; path: string }>();
function splitUrl(url: string): { origin: string; path: string } {
  let s = split.get(url);
  if (!s) {
    const u = new URL(url);
    s = { origin: u.origin, path: `${u.pathname}${u.search}` };
    if (split.size >= 1_000) split.clear();
    split.set(url, s);
  }
  return s;
}

let shared: UpstreamClient | undefined;

/** The process-wide client (shared keep-alive pools). Tests and services may build their own. */
export function sharedUpstreamClient(): UpstreamClient {
  shared ??= new UpstreamClient();
  return shared;
}

export function sendUpstream(req: UpstreamHttpRequest, opts: SendOptions = {}): Promise<UpstreamResponse> {
  return sharedUpstreamClient().send(req, opts);
}
