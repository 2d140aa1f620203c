import type { ImageData } from '../images/image-data.js';
import type { WeightLimit } from './batch-split.js';
import type { EmbeddingAdapter, EmbeddingTarget } from './embedding-adapter.js';
import type { ResolvedEmbeddingRequest, ResolvedPart } from './embedding-request.js';

/**
 * An image input the adapter serializes and nobody sends: it puts a batch in the shape a batch
 * with images has. Its bytes need not be an image (adapters only encode them); its size cancels
 * out of every weight.
 */
const PROBE_IMAGE: ImageData = {
  format: 'png',
  mime: 'image/png',
  width: 1,
  height: 1,
  pixels: 1,
  bytes: Buffer.alloc(0),
};
const PROBE: ResolvedPart[] = [{ type: 'image', image: PROBE_IMAGE }];

/**
 * The bytes each input adds to the body the adapter sends, as a limit of `bodyBytes` per call on
 * the inputs at `todo`: a call of inputs S sends at most `empty - 1 + sum over S of (item + 1)`
 * bytes, where `empty` is the body without inputs and `item` what one input adds to it (its
 * separator counted). Built by the adapter itself, so whatever it wraps around an input (Voyage's
 * content parts, base64 images) is counted.
 *
 * An adapter may shape a batch with an image otherwise than one without (Jina wraps each text in
 * `{"text": ...}`, Cohere moves every input from `texts` to `inputs[].content[]`), so a text input
 * weighs more beside an image than alone. When the inputs to send hold an image, each text
 * input's weight is the larger of the two (measured beside a probe image), and `empty` the larger
 * of the two empty bodies: exact for a batch with an image, an upper bound for one without, and
 * never under the body sent. Inputs with an image are in a batch with an image whatever else
 * it holds, so they are measured alone (each image serialized once).
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
  const hasImage = (i: number) => req.inputs[i]!.some((p) => p.type === 'image');
  const empty = size([]);
  if (!todo.some(hasImage)) {
    const weights = todo.map((i) => size([req.inputs[i]!]) - empty + 1);
    return { weights, max: Math.max(1, bodyBytes - empty + 1) };
  }
  // The probe alone is `emptyMixed + probe` bytes, two are `emptyMixed + 2 * probe + 1`.
  const probed = size([PROBE]);
  const emptyMixed = 2 * probed - size([PROBE, PROBE]) + 1;
  const base = Math.max(empty, emptyMixed);
  const weights = todo.map((i) => {
    const input = req.inputs[i]!;
    if (hasImage(i)) return size([input]) - emptyMixed + 1;
    return Math.max(size([input]) - empty + 1, size([PROBE, input]) - probed);
  });
  return { weights, max: Math.max(1, bodyBytes - base + 1) };
}
