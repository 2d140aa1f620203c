import { parseRetryAfter } from '../../providers/shared/retry-after.js';
import { ACCOUNT_CODES, RATE_LIMIT_CODES, UpstreamError, type UpstreamErrorKind } from '../errors.js';
import type { ResponseHeaders } from './embedding-adapter.js';

/**
 * Status-based classification shared by the embedding adapters; each adapter extracts the
 * message from its own error body and may pass a more specific kind.
 */
export function classifyByStatus(
  provider: string,
  status: number,
  message: string,
  headers: ResponseHeaders,
  kind?: UpstreamErrorKind,
): UpstreamError {
  // The one parser chat upstreams use too: negative or garbage values are ignored alike.
  const retryAfterMs = parseRetryAfter(headers);
  const text = `${provider} ${status}: ${message || 'no error message'}`;
  return new UpstreamError(kind ?? kindFor(status, message), text, { upstreamStatus: status, retryAfterMs });
}

const UNKNOWN_MODEL =
  /\bmodel\b(?:(?!\.\s)[^\n]){0,100}?\b(?:not found|unknown|invalid|does not exist|not exist|not supported|not available)\b|\b(?:unknown|invalid|unsupported) model\b/i;

/** A complaint that an input is longer than the model takes (TEI: "must have less than 512 tokens"). */
const TOO_LONG = /(context|token).*(length|limit|exceed)|too long|too many tokens|less than \d+ tokens/i;

/** Whether an upstream's message says an input is longer than the model takes (kind `context_length`). */
export function saysTooLong(message: string): boolean {
  return TOO_LONG.test(message);
}

function kindFor(status: number, message: string): UpstreamErrorKind {
  if (status === 429) return 'rate_limited';
  // A body larger than this upstream accepts (a payload limit, a batch cap it did not state):
  // its limit, not the client's fault, so another upstream may serve it (and fewer inputs per call
  // may: embed-with-adapter.ts halves a batch refused so). An input longer than the model takes,
  // which some servers also answer with a 413, is the client's, as below. An adapter whose upstream
  // answers other complaints with a 413 passes their kind (TEI: tei-validation.ts).
  if (status === 413) return saysTooLong(message) ? 'context_length' : 'too_large';
  if (status === 401 || status === 403) return 'auth';
  if (status === 402) return 'payment';
  if (status === 404) return 'not_found';
  if (status === 408 || status === 504) return 'timeout';
  if (status === 503 || status === 529 || status === 502) return 'overloaded';
  // Cohere's 499 "Request Cancelled" (its errors reference: cancelled on its side, "try the request
  // again"), as Groq and Google word theirs: not the client's bad request, since the gateway cancelled
  // nothing (a call it aborts has no answer to read). Retried as a 5xx is, then a 502.
  if (status === 499) return 'server_error';
  if (status >= 500) return 'server_error';
  // "unknown model" messages from every provider we speak to; the model and the complaint in one
  // clause, so "Request to model 'x' failed. Invalid input: ..." stays the client's bad request.
  if (UNKNOWN_MODEL.test(message)) return 'not_found';
  if (saysTooLong(message)) return 'context_length';
  return 'bad_request';
}

/**
 * The most inputs one request may carry, when an upstream's refusal states it: a
 * text-embeddings-inference server started with `--max-client-batch-size` answers a larger batch
 * with `413 {"error": "batch size 64 > maximum allowed batch size 32", ...}` (its OpenAI route
 * puts the same text in `message`), and services built on it word theirs alike.
 * Read here, from any adapter's refusal, rather than by the OpenAI-compatible adapter alone: it
 * is a sentence in the message (`errorMessageOf`), not a provider's error format, servers of other
 * kinds use it too (SiliconFlow, a proxy in front of a TEI), and what it says is acted on here, by
 * the batching, whatever the upstream kind.
 */
export function statedBatchCap(status: number, body: unknown): number | undefined {
  if (status < 400 || status >= 500) return undefined;
  const m = /\bmaximum allowed batch size (?:is )?(\d{1,6})\b/i.exec(errorMessageOf(body));
  const cap = m ? Number(m[1]) : 0;
  return cap >= 1 ? cap : undefined;
}

/**
 * The kind an upstream's refusal names by its error code, whatever its status (docs/routing.md,
 * "Execution: retries and fallbacks"): OpenAI answers an account out of credit with 429
 * `insufficient_quota`, which no retry cures (kind `payment`: the channel's next key, then the next
 * upstream, and a 502 when none serves, not a 429 that has the client retry), and some
 * OpenAI-compatible servers and proxies answer a rate limit with a 400 or 403
 * `rate_limit_exceeded` (kind `rate_limited`, not the client's bad request). Undefined for anything
 * else, a 413 included (its size decides: embed-with-adapter.ts), so the status decides.
 */
export function accountKind(
  status: number,
  body: unknown,
  /** A provider's own codes for an empty account, lower case (Jina's `authz_insufficient_balance`). */
  moreAccountCodes: readonly string[] = [],
): UpstreamErrorKind | undefined {
  if (status < 400 || status >= 500 || status === 413) return undefined;
  const codes = errorCodesOf(body);
  if (codes.some((c) => ACCOUNT_CODES.includes(c) || moreAccountCodes.includes(c))) return 'payment';
  if (codes.some((c) => RATE_LIMIT_CODES.includes(c))) return 'rate_limited';
  return undefined;
}

/** `code` and `type` of an error body, at its top or under `error` (OpenAI's shape), lower-cased. */
function errorCodesOf(body: unknown): string[] {
  if (!body || typeof body !== 'object') return [];
  const b = body as Record<string, unknown>;
  const e = b.error && typeof b.error === 'object' ? (b.error as Record<string, unknown>) : {};
  return [e.code, e.type, b.code, b.type]
    .filter((c): c is string => typeof c === 'string')
    .map((c) => c.toLowerCase());
}

/** A message from the error bodies seen across embedding providers. */
export function errorMessageOf(body: unknown): string {
  if (typeof body === 'string') return body.slice(0, 500);
  if (!body || typeof body !== 'object') return '';
  const b = body as Record<string, unknown>;
  if (typeof b.detail === 'string') return b.detail;
  if (Array.isArray(b.detail)) return JSON.stringify(b.detail).slice(0, 500);
  if (typeof b.message === 'string') return b.message;
  if (
    b.error &&
    typeof b.error === 'object' &&
    typeof (b.error as { message?: unknown }).message === 'string'
  ) {
    return (b.error as { message: string }).message;
  }
  if (typeof b.error === 'string') return b.error;
  return JSON.stringify(body).slice(0, 500);
}
