/**
 * Errors are data. Every failure that reaches a client is a GatewayError carrying its HTTP
 * status, an OpenAI-style `type`, the offending `param` and optional metadata; encoders shape
 * it per surface (`/v1` OpenAI body, Voyage `detail`, `/api` envelope).
 */
export class GatewayError extends Error {
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly metadata: Record<string, unknown> | undefined;
  /**
   * Seconds, for 429/503 answers' `Retry-After`: a whole number, at least 1 (`retryAfterSeconds`),
   * whatever it was made from, so no client is told to retry at once and hot-loops.
   */
  readonly retryAfter: number | undefined;
  /**
   * The `/api` envelope's `data` on this failure, when it has one to give (a failed model
   * refresh: the listing's outcome, as `GET /api/channel` answers it); not on the other surfaces.
   */
  readonly data: unknown;

  constructor(
    status: number,
    message: string,
    opts: {
      type?: string;
      param?: string | null;
      metadata?: Record<string, unknown>;
      retryAfter?: number;
      data?: unknown;
    } = {},
  ) {
    super(message);
    this.name = 'GatewayError';
    this.status = status;
    this.type = opts.type ?? defaultType(status);
    this.param = opts.param ?? null;
    this.metadata = opts.metadata;
    this.retryAfter = retryAfterSeconds(opts.retryAfter);
    this.data = opts.data;
  }
}

/** The longest wait a client is told: a day. Past it an upstream's value is a broken date or clock. */
/**
 * Upstream error codes (`error.code` / `error.type`, lower case) that name an empty account
 * (`insufficient_quota`: OpenAI's 429) or a rate limit whatever the status: read alike by chat's
 * and embeddings' classifiers (classify-failure.ts, classify-upstream-error.ts).
 */
export const ACCOUNT_CODES: readonly string[] = ['insufficient_quota', 'billing_error', 'billing_not_active'];
export const RATE_LIMIT_CODES: readonly string[] = ['rate_limit_error', 'rate_limit_exceeded'];

export const MAX_RETRY_AFTER_S = 86_400;

/**
 * `Retry-After` seconds for a client: rounded up to whole seconds, at least 1 and at most a day.
 * An upstream's `Retry-After: 0` (or a date already past) passed on as 0 made clients that honor
 * it retry at once, in a loop, while the gateway still had nothing to serve them with; a date
 * years ahead (a broken upstream clock, a typo) passed on whole parked them for as long. No
 * provider's limit window is longer than a day (daily quotas reset within one). Undefined stays
 * undefined (no header), as does a value that is not a finite number.
 */
export function retryAfterSeconds(seconds: number | undefined): number | undefined {
  if (seconds === undefined || !Number.isFinite(seconds)) return undefined;
  return Math.min(MAX_RETRY_AFTER_S, Math.max(1, Math.ceil(seconds)));
}

export function defaultType(status: number): string {
  switch (status) {
    case 400:
    case 413:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'insufficient_quota';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 409:
      return 'conflict_error';
    case 429:
      return 'rate_limit_error';
    case 502:
      return 'upstream_error';
    case 503:
      return 'service_unavailable';
    case 504:
      return 'timeout_error';
    default:
      return status >= 500 ? 'server_error' : 'invalid_request_error';
  }
}

/**
 * A candidate the request cannot go to, found before anything is sent: the prompt does not fit
 * its model even after middle-out (`scope` 'model': every upstream of the model shares its
 * context, so route execution skips them all and tries the next model), or this upstream's kind
 * refuses something the request holds, such as an empty user message at Anthropic or Gemini
 * (`scope` 'upstream', thrown by an adapter's `buildChatRequest`: the model's other upstreams,
 * of another kind, are still tried). Not a try; this reaches the client only when no candidate
 * could take the request.
 */
export class UnfitCandidate extends GatewayError {
  readonly scope: 'model' | 'upstream';
  constructor(message: string, param: string, scope: 'model' | 'upstream' = 'model') {
    super(400, message, { param });
    this.name = 'UnfitCandidate';
    this.scope = scope;
  }
}

export const badRequest = (message: string, param: string | null = null) =>
  new GatewayError(400, message, { param });
export const unauthorized = (message = 'missing or invalid credentials') => new GatewayError(401, message);
export const forbidden = (message = 'not allowed', param: string | null = null) =>
  new GatewayError(403, message, { param });
export const notFound = (message: string) => new GatewayError(404, message);
export const conflict = (message: string) => new GatewayError(409, message);

/**
 * Classified upstream failure. Adapters throw only this; route execution decides retry and
 * fallback from `kind`, and the encoder maps it to a client status (429/502/503/504/400).
 */
export type UpstreamErrorKind =
  | 'rate_limited' // 429: retry after Retry-After, then next candidate
  | 'overloaded' // 529 / 503: retryable
  | 'server_error' // other 5xx: retryable
  | 'timeout' // connect / first byte / idle timeout: retryable
  | 'connection' // reset, refused, DNS: retryable
  | 'bad_response' // unparseable or malformed body: next candidate
  | 'auth' // 401/403 from upstream: our credential is bad; set the key aside
  | 'payment' // 402, or the account cannot use the API (no credit, no billing, region): next candidate
  | 'context_length' // prompt too long for this model: the next model may accept
  | 'content_filter' // refused by the provider's safety system
  | 'not_found' // upstream does not know the model
  | 'too_large' // 413: the request is larger than this upstream takes (its own limit): next candidate
  | 'bad_request'; // the request itself is invalid: do not retry

export class UpstreamError extends Error {
  readonly kind: UpstreamErrorKind;
  /** HTTP status the upstream answered, when it answered. */
  readonly upstreamStatus: number | undefined;
  /** Milliseconds the upstream asked us to wait. */
  readonly retryAfterMs: number | undefined;

  constructor(
    kind: UpstreamErrorKind,
    message: string,
    opts: { upstreamStatus?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: opts.cause });
    this.name = 'UpstreamError';
    this.kind = kind;
    this.upstreamStatus = opts.upstreamStatus;
    this.retryAfterMs = opts.retryAfterMs;
  }

  get retryable(): boolean {
    return (
      this.kind === 'rate_limited' ||
      this.kind === 'overloaded' ||
      this.kind === 'server_error' ||
      this.kind === 'timeout' ||
      this.kind === 'connection'
    );
  }

  /** Whether another upstream of the same model may still succeed (a 400 or a filter moves on to the next model only). */
  get fallbackable(): boolean {
    return this.kind !== 'bad_request' && this.kind !== 'content_filter';
  }
}

/** Client-facing status for an upstream failure that exhausted every candidate. */
export function upstreamToGateway(err: UpstreamError): GatewayError {
  const meta = { upstream_kind: err.kind, upstream_status: err.upstreamStatus ?? null };
  // Whole seconds, at least 1 (GatewayError): a 0 ms wait is not passed on as "retry at once".
  const retryAfter = err.retryAfterMs !== undefined ? err.retryAfterMs / 1000 : undefined;
  switch (err.kind) {
    case 'rate_limited':
      return new GatewayError(429, `upstream rate limited: ${err.message}`, {
        metadata: meta,
        retryAfter: retryAfter ?? 1,
      });
    case 'timeout':
      return new GatewayError(504, `upstream timed out: ${err.message}`, { metadata: meta });
    case 'overloaded':
      return new GatewayError(503, `upstream overloaded: ${err.message}`, { metadata: meta, retryAfter });
    case 'context_length':
      return new GatewayError(400, err.message, { param: 'messages', metadata: meta });
    case 'bad_request':
      return new GatewayError(400, `upstream rejected the request: ${err.message}`, { metadata: meta });
    case 'content_filter':
      return new GatewayError(400, `blocked by the provider's content filter: ${err.message}`, {
        metadata: meta,
      });
    // Larger than every upstream that was tried takes: the same request will not fit on a retry
    // (a 5xx here made SDKs send the oversized body again and again), a smaller one may.
    case 'too_large':
      return new GatewayError(413, `request too large for the upstream: ${err.message}`, { metadata: meta });
    default:
      return new GatewayError(502, `upstream failed: ${err.message}`, { metadata: meta });
  }
}
