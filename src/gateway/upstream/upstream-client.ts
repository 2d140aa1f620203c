/**
 * The one HTTP client for upstream calls: undici with keep-alive and a connection pool per origin
 * (an `Agent` keeps one `Pool` per origin). Three timeouts, each mapped to UpstreamError 'timeout':
 * connect, first byte (response headers) and idle (gap between two body chunks), so a stalled
 * stream is cut without limiting a long healthy one. Network failures map to 'connection'.
 *
 * No retries here: route execution decides (DESIGN.md). When the caller's `signal` aborts (client
 * disconnected), the request and its connection are torn down at once and the pending call or body
 * iteration rejects with the signal's reason, not an UpstreamError: there is nothing to retry.
 */
import { Agent, type Dispatcher } from 'undici';
import type { CancelSignal } from '../cancel.js';
import { DEFAULT_MAX_EVENT_CHARS } from '../chat/sse.js';
import { UpstreamError } from '../errors.js';

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

export interface SendOptions extends Partial<UpstreamTimeouts>, Partial<BodyLimits> {
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
  defaults?: Partial<UpstreamTimeouts & BodyLimits>;
}

export const DEFAULT_TIMEOUTS: UpstreamTimeouts = {
  connectTimeoutMs: 10_000,
  firstByteTimeoutMs: 120_000,
  idleTimeoutMs: 60_000,
};

const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

/** Maps an undici/network error; returns the abort reason untouched when the caller aborted. */
export function mapNetworkError(err: unknown, signal?: CancelSignal): unknown {
  if (signal?.aborted) return signal.reason ?? err;
  if (err instanceof UpstreamError) return err;
  const code = (err as { code?: string })?.code ?? '';
  const message = (err as Error)?.message ?? String(err);
  if (TIMEOUT_CODES.has(code)) {
    const what =
      code === 'UND_ERR_HEADERS_TIMEOUT'
        ? 'first byte'
        : code === 'UND_ERR_BODY_TIMEOUT'
          ? 'idle'
          : 'connect';
    return new UpstreamError('timeout', `upstream ${what} timeout`, { cause: err });
  }
  return new UpstreamError('connection', `upstream connection failed: ${code || message}`, { cause: err });
}

export class UpstreamClient {
  private readonly agents = new Map<number, Agent>();
  private readonly defaults: UpstreamTimeouts & BodyLimits;

  constructor(private readonly opts: UpstreamClientOptions = {}) {
    this.defaults = { ...DEFAULT_TIMEOUTS, ...DEFAULT_BODY_LIMITS, ...opts.defaults };
  }

  /** A size limit for a call: its own, else the client's default. */
  limit(opts: SendOptions, which: keyof BodyLimits): number {
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
    return new Response(res, signal, this.limit(opts, 'maxBodyBytes'), this.limit(opts, 'maxErrorBodyBytes'));
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
 * What every handler given to `UpstreamClient.dispatch` shares: the caller's signal aborts the
 * request, and `release` drops the listener and the controller once undici is done.
 *
 * An abort before undici started the request (it waits in the queue for a connection: the
 * origin's pool is at `connectionsPerOrigin`, or the connection is still being made) settles
 * the caller at once through `abortedBeforeStart`, instead of when a connection frees or the
 * connect times out; undici then tears the request down as it starts it, before a byte is
 * written, and what it reports after that is ignored.
 */
export abstract class SignalledHandler implements Dispatcher.DispatchHandler {
  protected controller: Dispatcher.DispatchController | undefined;
  private readonly onAbort: (() => void) | undefined;

  constructor(protected readonly signal: CancelSignal | undefined) {
    if (signal) {
      this.onAbort = () => {
        const c = this.controller;
        if (c) c.abort(abortReason(signal));
        else this.abortedBeforeStart(abortReason(signal));
      };
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.signal?.aborted) {
      // Settled already (abortedBeforeStart): the controller is not kept.
      controller.abort(abortReason(this.signal));
      return;
    }
    this.controller = controller;
  }

  /** The caller's signal fired while undici had not started the request: settle the caller now. */
  protected abstract abortedBeforeStart(reason: unknown): void;

  /**
   * Once undici will call nothing more: detaches from the signal and lets go of the controller.
   * undici keeps a finished request's handler referenced for a while, longer than a request
   * lasts, so whatever the handler still holds then is promoted to the old generation.
   */
  protected release(): void {
    if (this.onAbort) this.signal!.removeEventListener('abort', this.onAbort);
    this.controller = undefined;
  }

  /**
   * Drops the controller's raw header buffers: views of the socket read they arrived in, which
   * they keep alive for as long as the request is. We use the parsed headers only.
   */
  protected static dropRawHeaders(c: Dispatcher.DispatchController): void {
    c.rawHeaders = null;
  }
}

function abortReason(signal: CancelSignal): Error {
  return (signal.reason as Error) ?? new Error('aborted');
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
 * Collects one answer for `sendText`. Settles exactly once: with the body at its end, or with
 * the mapped error (the abort reason when the caller's signal fired). A 2xx body past
 * `maxBody` (declared, or counted as it arrives) is a 'bad_response'; a non-2xx body is answered
 * with its first `maxErrorBody` bytes. Either way the connection is closed at the limit, and
 * nothing past it is held.
 *
 * Once settled it lets go of everything it held (`release`): holding the controller (with its raw
 * header buffers) and the caller's promise (with the answer) past the end was 2 KB promoted to the
 * old generation per request instead of 0.2 (docs/performance.md, Session 11).
 */
class TextHandler extends SignalledHandler {
  private status = 0;
  private headers: UpstreamResponse['headers'] | undefined;
  private first: Buffer | undefined;
  private rest: Buffer[] | undefined;
  /** Body bytes received, and the most this answer may have (set with the status). */
  private size = 0;
  private limit = 0;
  private waiting: { resolve: (a: TextAnswer) => void; reject: (err: unknown) => void } | undefined;

  constructor(
    resolve: (a: TextAnswer) => void,
    reject: (err: unknown) => void,
    signal: CancelSignal | undefined,
    private readonly maxBody: number,
    private readonly maxErrorBody: number,
  ) {
    super(signal);
    this.waiting = { resolve, reject };
  }

  onResponseStart(
    c: Dispatcher.DispatchController,
    status: number,
    headers: UpstreamResponse['headers'],
  ): void {
    SignalledHandler.dropRawHeaders(c);
    if (status < 200) return; // 1xx: informational, the answer follows
    this.status = status;
    this.headers = headers;
    if (status >= 300) this.limit = this.maxErrorBody;
    else {
      this.limit = this.maxBody;
      if (declaredLength(headers) > this.maxBody) this.overLimit(c);
    }
  }

  onResponseData(c: Dispatcher.DispatchController, chunk: Buffer): void {
    const room = this.limit - this.size;
    this.size += chunk.length;
    if (chunk.length > room) {
      // A non-2xx answer keeps what fits: enough for its message.
      if (this.status >= 300 && room > 0) this.keep(chunk.subarray(0, room));
      this.overLimit(c);
      return;
    }
    this.keep(chunk);
  }

  private keep(chunk: Buffer): void {
    if (this.first === undefined) this.first = chunk;
    else if (this.rest) this.rest.push(chunk);
    else this.rest = [this.first, chunk];
  }

  /** The answer reached its limit: settle now, and close the connection instead of reading on. */
  private overLimit(c: Dispatcher.DispatchController): void {
    if (this.status >= 300) this.onResponseEnd();
    else this.settle()?.reject(tooLarge(this.status, this.maxBody));
    c.abort(new Error('upstream answer over its size limit'));
  }

  onResponseEnd(): void {
    const body = this.rest ? Buffer.concat(this.rest) : this.first;
    const answer = {
      status: this.status,
      headers: this.headers ?? {},
      text: body ? body.toString('utf8') : '',
    };
    this.settle()?.resolve(answer);
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    this.settle()?.reject(mapNetworkError(err, this.signal));
  }

  protected abortedBeforeStart(reason: unknown): void {
    this.settle()?.reject(reason);
  }

  /** The caller's promise to settle, the first time only; drops what the handler held. */
  private settle(): TextHandler['waiting'] {
    const w = this.waiting;
    if (!w) return undefined;
    this.waiting = undefined;
    this.release();
    this.headers = this.first = this.rest = undefined;
    return w;
  }
}

/** An upstream answer; its body is read one way only (chunks, text, or dumped). */
class Response implements UpstreamResponse {
  readonly status: number;
  readonly headers: UpstreamResponse['headers'];
  private consumed = false;

  constructor(
    private readonly res: Dispatcher.ResponseData,
    private readonly signal: CancelSignal | undefined,
    private readonly maxBody: number,
    private readonly maxErrorBody: number,
  ) {
    this.status = res.statusCode;
    this.headers = res.headers;
  }

  private take(): Dispatcher.ResponseData['body'] {
    if (this.consumed) throw new Error('upstream body already consumed');
    this.consumed = true;
    return this.res.body;
  }

  get body(): AsyncIterable<Uint8Array> {
    const raw = this.take();
    const signal = this.signal;
    return {
      async *[Symbol.asyncIterator]() {
        let finished = false;
        try {
          for await (const chunk of raw) yield chunk as Uint8Array;
          finished = true;
        } catch (err) {
          throw mapNetworkError(err, signal);
        } finally {
          // An early break must free the socket instead of leaving the upstream generating.
          if (!finished) raw.destroy();
        }
      },
    };
  }

  /** Size limits as `sendText`'s: past them the connection is closed without reading on. */
  async text(): Promise<string> {
    const raw = this.take();
    const error = this.status >= 300;
    const limit = error ? this.maxErrorBody : this.maxBody;
    const declared = declaredLength(this.headers);
    if (!error && declared > limit) {
      raw.destroy();
      throw tooLarge(this.status, limit);
    }
    try {
      // A length within the limit (undici holds the upstream to it): undici's own reader, with no
      // async generator turn per chunk and no Buffer.concat.
      if (declared <= limit) return await raw.text();
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of raw as AsyncIterable<Buffer>) {
        const room = limit - size;
        if (chunk.length > room) {
          // Leaving the loop destroys the body: the connection is closed, not read to its end.
          if (!error) throw tooLarge(this.status, limit);
          chunks.push(chunk.subarray(0, room));
          size = limit;
          break;
        }
        chunks.push(chunk);
        size += chunk.length;
      }
      return Buffer.concat(chunks, size).toString('utf8');
    } catch (err) {
      throw mapNetworkError(err, this.signal);
    }
  }

  async dump(): Promise<void> {
    if (this.consumed) return;
    this.consumed = true;
    try {
      await this.res.body.dump();
    } catch {
      // the connection is being discarded anyway
    }
  }
}

/** The answer's `content-length`, NaN when it has none (comparisons with NaN are false). */
function declaredLength(headers: UpstreamResponse['headers']): number {
  const v = headers['content-length'];
  return typeof v === 'string' ? Number(v) : Number.NaN;
}

function tooLarge(status: number, limit: number): UpstreamError {
  const message = `upstream answer larger than the gateway's limit (${limit} bytes)`;
  return new UpstreamError('bad_response', message, { upstreamStatus: status });
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
