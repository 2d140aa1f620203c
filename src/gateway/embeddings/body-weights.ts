import type { WeightLimit } from './batch-split.js';
import type { EmbeddingAdapter, EmbeddingTarget } from './embedding-adapter.js';
import type { ResolvedEmbeddingRequest } from './embedding-request.js';

/**
 * The bytes each input adds to the body the adapter sends, as a limit of `bodyBytes` per call on
 * the inputs at `todo`: a call of inputs S sends about `empty - 1 + sum over S of (item + 1)`
 * bytes, where `empty` is the body without inputs and `item` what one input adds to it (its
 * separator counted). Built by the adapter itself, one input at a time, so whatever it wraps
 * around an input (Voyage's content parts, base64 images) is counted; an adapter that shapes a
 * batch with images otherwise than one input alone (Jina, Cohere wrap text items then) is off by a
 * few bytes an input, which a body limit then refuses and halving corrects.
 */
export function bodyLimit(
  adapter: EmbeddingAdapter,
  req: ResolvedEmbeddingRequest,
  target: EmbeddingTarget,
  todo: readonly number[],
  bodyBytes: number,
): WeightLimit {
  const size = (inputs: ResolvedEmbeddingRequest['inputs']) =>
    Buffer.byteLength(adapter.buildRequest({ ...req, inputs }, target).body);
  const empty = size([]);
  const weights = todo.map((i) => size([req.inputs[i]!]) - empty + 1);
  return { weights, max: Math.max(1, bodyBytes - empty + 1) };
}
