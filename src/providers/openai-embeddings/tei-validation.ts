import {
  errorMessageOf,
  saysTooLong,
  statedBatchCap,
} from '../../gateway/embeddings/classify-upstream-error.js';
import type { UpstreamErrorKind } from '../../gateway/errors.js';

/** TEI's check of one input's length in characters, made before tokenizing when truncation is off. */
const TEI_TOO_MANY_CHARACTERS = /must have less than \d+ characters/i;

/**
 * The kind of a text-embeddings-inference validation error, which TEI answers with a 413 whatever
 * it is about (`{"error", "error_type": "Validation"}`, on its OpenAI route `{"message", "code":
 * 413, "type"}`); undefined for any other answer. Only two of them are about size: its batch cap
 * (`too_large`, split to by `statedBatchCap` first) and an input longer than the model takes
 * (`context_length`, the client's 400 naming the inputs). The others (an empty input, a bad
 * `dimensions`, an unknown prompt name) are the client's request, whatever the number of inputs:
 * `bad_request`, a 400 carrying TEI's words, and no other channel of the model (they serve the
 * same model and would refuse it alike; docs/routing.md) rather than a 413 "too large", which
 * would also have the gateway halve a batch that fewer inputs would not cure.
 */
export function teiValidationKind(status: number, body: unknown): UpstreamErrorKind | undefined {
  if (status !== 413 || !isTeiValidationError(body)) return undefined;
  if (statedBatchCap(status, body) !== undefined) return 'too_large';
  const message = errorMessageOf(body);
  if (saysTooLong(message) || TEI_TOO_MANY_CHARACTERS.test(message)) return 'context_length';
  return 'bad_request';
}

function isTeiValidationError(body: unknown): boolean {
  if (!body || typeof body !== 'object') return false;
  const b = body as Record<string, unknown>;
  const type = typeof b.error_type === 'string' ? b.error_type : b.type;
  return typeof type === 'string' && type.toLowerCase() === 'validation';
}
