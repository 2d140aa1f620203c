import { parseRetryAfter } from '../../providers/shared/retry-after.js';
import { UpstreamError, type UpstreamErrorKind } from '../errors.js';
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

function kindFor(status: number, message: string): UpstreamErrorKind {
  if (status === 429) return 'rate_limited';
  // A body larger than this upstream accepts (a payload limit, a batch cap it did not state):
  // its limit, not the client's fault, so another upstream may serve it. An input longer than the
  // model takes, which TEI also answers with a 413, is the client's, as below.
  if (status === 413) return TOO_LONG.test(message) ? 'context_length' : 'too_large';
  if (status === 401 || status === 403) return 'auth';
  if (status === 402) return 'payment';
  if (status === 404) return 'not_found';
  if (status === 408 || status === 504) return 'timeout';
  if (status === 503 || status === 529 || status === 502) return 'overloaded';
  if (status >= 500) return 'server_error';
  // "unknown model" messages from every provider we speak to; the model and the complaint in one
  // clause, so "Request to model 'x' failed. Invalid input: ..." stays the client's bad request.
  if (UNKNOWN_MODEL.test(message)) return 'not_found';
  if (TOO_LONG.test(message)) return 'context_length';
  return 'bad_request';
}

/**
 * The most inputs one request may carry, when an upstream's refusal states it: a
 * text-embeddings-inference server started with `--max-client-batch-size` answers a larger batch
 * with `413 {"error": "batch size 64 > maximum allowed batch size 32", ...}` (its OpenAI route
 * puts the same text in `message`), and services built on it word theirs alike.
 */
export function statedBatchCap(status: number, body: unknown): number | undefined {
  if (status < 400 || status >= 500) return undefined;
  const m = /\bmaximum allowed batch size (?:is )?(\d{1,6})\b/i.exec(errorMessageOf(body));
  const cap = m ? Number(m[1]) : 0;
  return cap >= 1 ? cap : undefined;
}

/**
 * Whether a refusal that states no cap may be cured by sending fewer inputs per call: a 413 is a
 * body larger than this upstream (or a proxy in front of it) takes, such as text-embeddings-inference's
 * `--payload-limit` (`Failed to buffer the request body: length limit exceeded`), nginx's
 * `client_max_body_size` or an edge's cap, and half the inputs make about half the body.
 * Not TEI's own validation errors, which it answers with a 413 as well (`teiValidationKind`): the
 * one of them about the batch states its cap (`statedBatchCap`), and the others (an input over the
 * model's length, an empty input, bad `dimensions`, an unknown prompt name) are answered alike
 * whatever the number of inputs.
 */
export function halvingMayCure(status: number, body: unknown): boolean {
  return status === 413 && !isTeiValidationError(body);
}

/** TEI's check of one input's length in characters, made before tokenizing when truncation is off. */
const TEI_TOO_MANY_CHARACTERS = /must have less than \d+ characters/i;

/**
 * The kind of a text-embeddings-inference validation error, which TEI answers with a 413 whatever
 * it is about (`{"error", "error_type": "Validation"}`, on its OpenAI route `{"message", "code":
 * 413, "type"}`); undefined for any other answer. Only two of them are about size: its batch cap
 * (`too_large`, split to by `statedBatchCap` first) and an input longer than the model takes
 * (`context_length`, the client's 400 naming the inputs). The others (an empty input, a bad
 * `dimensions`, an unknown prompt name) are the client's request:
 * `bad_request`, a 400 carrying TEI's words, and no other channel of the model (they serve the
 * same model and would refuse it alike; docs/routing.md) rather than a 413 "too large".
 */
export function teiValidationKind(status: number, body: unknown): UpstreamErrorKind | undefined {
  if (status !== 413 || !isTeiValidationError(body)) return undefined;
  if (statedBatchCap(status, body) !== undefined) return 'too_large';
  const message = errorMessageOf(body);
  if (TOO_LONG.test(message) || TEI_TOO_MANY_CHARACTERS.test(message)) return 'context_length';
  return 'bad_request';
}

function isTeiValidationError(body: unknown): boolean {
  if (!body || typeof body !== 'object') return false;
  const b = body as Record<string, unknown>;
  const type = typeof b.error_type === 'string' ? b.error_type : b.type;
  return typeof type === 'string' && type.toLowerCase() === 'validation';
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
