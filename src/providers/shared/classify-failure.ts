import {
  ACCOUNT_CODES,
  RATE_LIMIT_CODES,
  UpstreamError,
  type UpstreamErrorKind,
} from '../../gateway/errors.js';
import type { UpstreamHeaders } from '../types.js';
import { parseRetryAfter } from './retry-after.js';

/**
 * Messages providers use when the prompt does not fit (OpenAI, vLLM, llama.cpp, Anthropic, Gemini).
 * Anthropic has two: "prompt is too long" (the prompt alone) and "input length and `max_tokens`
 * exceed context limit" (the prompt fits, not with max_tokens on top).
 */
const CONTEXT_LENGTH =
  /context[_ ]length|context window|context limit|maximum context|prompt is too long|too many (input )?tokens|exceeds the maximum number of tokens|input token count|reduce the length of the messages|exceeds the context/i;
const CONTENT_FILTER = /content[_ ]?(filter|policy|management)|safety system|responsible ai/i;

export interface FailureHints {
  /** Provider error code/type/status string(s) from the body, e.g. "context_length_exceeded", "overloaded_error". */
  codes?: Array<string | undefined>;
  message?: string;
  /** Retry delay found in the body (Gemini RetryInfo). */
  retryAfterMs?: number;
  /** Classify as if this status had been answered (e.g. Google's 400 for a bad key is an auth failure). */
  classifyAs?: number;
}

/**
 * Shared HTTP failure classification; adapters extract their body's codes and message and call
 * this. Body codes refine the status: a 400 can be context length or content filter, a 429 with
 * `insufficient_quota` is an empty account (payment), not a rate limit. They never make a 4xx the
 * upstream's own failure (server error, overloaded, timeout): the status says the request was
 * refused, so a 400 typed `server_error` is not retried, not counted against the circuit and not
 * sent to the model's other upstreams (docs/routing.md). Where the status does not decide (a 200
 * carrying an error, a stream's error event without a code, a 5xx) the body's codes still do.
 */
export function classifyFailure(
  answered: number,
  headers: UpstreamHeaders,
  hints: FailureHints,
): UpstreamError {
  const status = hints.classifyAs ?? answered;
  const codes = (hints.codes ?? [])
    .filter((c): c is string => typeof c === 'string')
    .map((c) => c.toLowerCase());
  const message = hints.message || `upstream answered HTTP ${status}`;
  const has = (...names: string[]) => names.some((n) => codes.includes(n));
  /** Codes naming the upstream's own failure, read only where a 4xx does not say otherwise. */
  const says = (...names: string[]) => (status < 400 || status >= 500) && has(...names);
  let kind: UpstreamErrorKind;
  if (
    // llama.cpp's type for "the request exceeds the available context size".
    has('context_length_exceeded', 'string_above_max_length', 'exceed_context_size_error') ||
    (status < 500 && CONTEXT_LENGTH.test(message))
  ) {
    kind = 'context_length';
  } else if (status === 413) {
    // A body larger than this upstream takes (a proxy's body limit, Anthropic's 32 MB cap, Groq's
    // "Request too large ... tokens per minute" for one request over its whole TPM): its limit,
    // not the request's fault, and no retry of it helps, so the next candidate is tried at once.
    // A 413 saying the prompt exceeds the model's context is context_length, above.
    kind = 'too_large';
  } else if (has(...ACCOUNT_CODES, 'failed_precondition', 'region_restricted') || status === 402) {
    // Google's 400 FAILED_PRECONDITION: the project or region cannot use the API ("User location
    // is not supported for the API use.", billing not enabled). The account, not the request:
    // another candidate may serve it, and the client is not told its request was bad. OpenRouter's
    // 403 `region_restricted` too: the gateway's region, not the key.
    kind = 'payment';
  } else if (
    has('content_filter', 'content_policy_violation') ||
    (status === 400 && CONTENT_FILTER.test(message))
  ) {
    kind = 'content_filter';
  } else if (status === 429 || has(...RATE_LIMIT_CODES, 'resource_exhausted')) {
    kind = 'rate_limited';
  } else if (
    status === 529 ||
    status === 503 ||
    says('overloaded_error', 'unavailable', 'server_is_overloaded', 'slow_down')
  ) {
    kind = 'overloaded';
  } else if (status === 408 || status === 504 || says('timeout_error', 'deadline_exceeded')) {
    kind = 'timeout';
  } else if (status >= 500 || status === 499 || says('api_error', 'internal', 'server_error')) {
    // 499 is Google's CANCELLED ("cancelled by the server"), as Cohere and Groq word theirs: the
    // gateway cancelled nothing (a call it aborts has no answer to read), so it is the upstream's
    // failure, retried and then a 502, as the embeddings side classifies it; not a 400.
    kind = 'server_error';
  } else if (
    status === 401 ||
    status === 403 ||
    has('authentication_error', 'permission_error', 'unauthenticated', 'permission_denied')
  ) {
    kind = 'auth';
  } else if (status === 404 || has('not_found_error', 'model_not_found', 'not_found')) {
    kind = 'not_found';
  } else {
    kind = 'bad_request';
  }
  const retryAfterMs = parseRetryAfter(headers) ?? hints.retryAfterMs;
  return new UpstreamError(kind, message, { upstreamStatus: answered || undefined, retryAfterMs });
}

export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A short, single-line excerpt of an unparseable body for error messages (never the whole body). */
export function excerpt(text: string, max = 200): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max)}...` : one;
}
