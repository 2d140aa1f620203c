import type { CancelSignal } from '../cancel.js';
import { UpstreamError } from '../errors.js';
import { runInBatches, type WeightLimit } from './batch-split.js';
import { inputTokenWeights } from './batch-tokens.js';
import { statedBatchCap } from './classify-upstream-error.js';
import {
  type EmbeddingAdapter,
  type EmbeddingHttpRequest,
  type EmbeddingTarget,
  effectiveDtype,
  type ParsedEmbeddingResponse,
  type ResponseHeaders,
} from './embedding-adapter.js';
import type { EmbeddingDtype, EmbeddingUsage, ResolvedEmbeddingRequest } from './embedding-request.js';

/**
 * One attempt against one upstream: split into the adapter's batch size, send, parse, and
 * reassemble. Failures are UpstreamErrors for route execution to retry or fall back on.
 */
export interface EmbeddingSendResponse {
  status: number;
  headers: ResponseHeaders;
  text(): Promise<string>;
}

/** Shaped like UpstreamClient.send (src/gateway/upstream), which is what the integrator passes. */
export type EmbeddingSend = (
  req: EmbeddingHttpRequest,
  opts: { signal?: CancelSignal },
) => Promise<EmbeddingSendResponse>;

export interface EmbedOptions {
  signal?: CancelSignal;
  /** Batches in flight at once. */
  concurrency?: number;
  /** The request's usage estimate, when made already: spares a recount for the token cap. */
  estimate?: EmbeddingUsage;
  /**
   * A cap on the inputs of one call this upstream stated before, or the size halving found it
   * serves (`onBatchCap`), below the adapter's `maxBatch`: requests are split to it up front.
   */
  maxBatch?: number;
  /**
   * Told the cap an upstream states when it refuses a batch as too large, at once (its own word,
   * true whatever the attempt's inputs), or, once the attempt was served, the size halving a batch
   * refused without one settled at (to remember it). A failed attempt reports no halved size.
   */
  onBatchCap?: (cap: number) => void;
}

export interface AdapterEmbedding extends ParsedEmbeddingResponse {
  dtype: EmbeddingDtype;
}

export async function embedWithAdapter(
  adapter: EmbeddingAdapter,
  req: ResolvedEmbeddingRequest,
  target: EmbeddingTarget,
  send: EmbeddingSend,
  opts: EmbedOptions = {},
): Promise<AdapterEmbedding> {
  // Once one batch failed the attempt has, the slices of a batch split again included: none
  // starts after that (runInBatches stops its own batches only), nor once the client left.
  let failure: unknown;
  // The most inputs one call of this attempt may carry, once the upstream refused more (a cap it
  // stated, or half a batch it refused without one). A batch above it, not sent yet, is split to
  // it first: a size refused once is not sent again, so each refusal at least halves every later
  // call and the refusals of an attempt stay about log2 of its inputs.
  let size: number | undefined;
  // Set when `size` came from halving: reported only once the whole attempt was served (below).
  let halved = false;
  const sendBatch = (inputs: ResolvedEmbeddingRequest['inputs']): Promise<ParsedEmbeddingResponse> => {
    if (failure !== undefined) return Promise.reject(failure);
    if (opts.signal?.aborted) return Promise.reject(opts.signal.reason);
    return sendOne(inputs).catch((err: unknown) => {
      failure ??= err;
      throw err;
    });
  };
  // One slice at a time once the upstream refused a batch: it just said it is small, and the
  // batches around this one are already sent side by side (opts.concurrency).
  const split = (inputs: ResolvedEmbeddingRequest['inputs'], to: number) => {
    size = Math.min(size ?? to, to);
    return runInBatches(inputs, size, sendBatch, 1);
  };
  const sendOne = async (inputs: ResolvedEmbeddingRequest['inputs']): Promise<ParsedEmbeddingResponse> => {
    if (size !== undefined && inputs.length > size) return split(inputs, size);
    const batch = { ...req, inputs };
    const httpReq = adapter.buildRequest(batch, target);
    const res = await send(httpReq, { signal: opts.signal });
    const text = await res.text();
    const body = parseJson(text);
    if (res.status < 200 || res.status >= 300) {
      // The upstream takes fewer inputs per call than we sent and said how many: its limit, not
      // the client's fault. The batch is split to that size and sent again to the same upstream
      // (in input order, usage summed), and the caller remembers the cap for the next requests.
      const cap = statedBatchCap(res.status, body);
      if (cap !== undefined && cap < inputs.length) {
        opts.onBatchCap?.(cap);
        return split(inputs, cap);
      }
      const err = adapter.classifyError(res.status, body, res.headers);
      // Too large without a cap (a body limit): half as many inputs, same upstream, down to one
      // input per call. One input still refused is this upstream's limit: the next one may serve.
      // A refusal that fewer inputs would not cure is not `too_large`: the adapter classifies it
      // (text-embeddings-inference's validation 413s: src/providers/openai-embeddings/).
      if (err.kind === 'too_large' && inputs.length > 1) {
        halved = true;
        return split(inputs, Math.ceil(inputs.length / 2));
      }
      throw err;
    }
    const parsed = parseOrBadResponse(adapter, res.status, body, batch);
    if (parsed.vectors.length !== inputs.length) {
      throw new UpstreamError(
        'bad_response',
        `${adapter.kind} returned ${parsed.vectors.length} embeddings for ${inputs.length} inputs`,
        { upstreamStatus: res.status },
      );
    }
    return parsed;
  };
  const maxBatch = Math.min(adapter.maxBatch, opts.maxBatch ?? adapter.maxBatch);
  const result = await runInBatches(
    req.inputs,
    maxBatch,
    sendBatch,
    opts.concurrency,
    tokenLimit(adapter, req, target, opts.estimate),
  );
  // Only a served attempt proves a size: every input fitted in a call of at most `size`. One call of
  // it served does not (the slices without one input too large for any call are served at every
  // size it is halved to, and the attempt still fails). `size` is the smallest the attempt came
  // to, not the largest it was served at: a larger one was refused in this very attempt, and
  // remembering it would have the same request refused again. A size a stated cap lowered it to
  // was told already; telling it again changes nothing.
  if (halved && size !== undefined) opts.onBatchCap?.(size);
  return { ...result, dtype: effectiveDtype(adapter, req) };
}

/** An answer the parser did not foresee (a null item, a string vector) is a 502, not a 500. */
function parseOrBadResponse(
  adapter: EmbeddingAdapter,
  status: number,
  body: unknown,
  batch: ResolvedEmbeddingRequest,
) {
  try {
    return adapter.parseResponse(status, body, batch);
  } catch (cause) {
    if (cause instanceof UpstreamError) throw cause;
    throw new UpstreamError('bad_response', `unreadable ${adapter.kind} answer`, {
      upstreamStatus: status,
      cause,
    });
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Cut by estimated tokens too, when the upstream caps them and the request may exceed that. */
function tokenLimit(
  adapter: EmbeddingAdapter,
  req: ResolvedEmbeddingRequest,
  target: EmbeddingTarget,
  estimate: EmbeddingUsage | undefined,
): WeightLimit | undefined {
  const cap = adapter.maxBatchTokens?.(target.upstreamModel);
  if (cap === undefined) return undefined;
  const rule = { cap, minImagePixels: adapter.minImagePixels, maxImagePixels: adapter.maxImagePixels };
  const weights = inputTokenWeights(req, rule, estimate);
  return weights && { weights, max: cap };
}
