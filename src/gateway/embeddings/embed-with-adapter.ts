import { excerpt } from '../../providers/shared/classify-failure.js';
import type { CancelSignal } from '../cancel.js';
import { UpstreamError } from '../errors.js';
import { sendInBatches, type WeightLimit } from './batch-split.js';
import { inputTokenWeights } from './batch-tokens.js';
import { bodyLimit } from './body-weights.js';
import { statedBatchCap } from './classify-upstream-error.js';
import { EmbedProgress } from './embed-progress.js';
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
   * A cap on the inputs of one call this upstream stated before, below the adapter's `maxBatch`:
   * requests are split to it up front.
   */
  maxBatch?: number;
  /** Told the cap an upstream states when it refuses a batch as too large, at once (its own word). */
  onBatchCap?: (cap: number) => void;
  /**
   * The bytes of a body this upstream served before, after refusing a larger one without stating
   * a cap (`onBodyLimit`): requests are split up front so that each call's body stays within it.
   */
  maxBodyBytes?: number;
  /**
   * Told, once the request was served after halving a batch the upstream refused as too large
   * without stating a cap, the largest body it served below the smallest it refused (to remember
   * it). A failed request reports none.
   */
  onBodyLimit?: (bytes: number) => void;
  /**
   * What earlier tries of this upstream served of this request: only the inputs still missing
   * are sent, and what this try serves is added to it (until the try fails). Without it the try
   * starts afresh.
   */
  progress?: EmbedProgress;
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
  const progress = opts.progress ?? new EmbedProgress(req.inputs.length);
  const attempt = progress.begin();
  // Once one batch failed the attempt has, the slices of a batch split again included: none
  // starts after that (sendInBatches stops its own batches only), nor once the client left. A
  // slice in flight then that is served is kept only until the next try of this upstream begins
  // (`progress.add`): that try may send its inputs again, and they would be billed twice.
  let failure: unknown;
  const sendBatch = (batch: number[]): Promise<void> => {
    if (failure !== undefined) return Promise.reject(failure);
    if (opts.signal?.aborted) return Promise.reject(opts.signal.reason);
    return sendOne(batch).catch((err: unknown) => {
      failure ??= err;
      throw err;
    });
  };
  // The upstream refused more (a cap it stated, or half a batch it refused without one): a batch
  // above `progress.size`, not sent yet, is split to it first. A size refused once is not sent
  // again, so each refusal at least halves every later call and the refusals stay about log2 of
  // the inputs. One slice at a time: it just said it is small, and the batches around this one
  // are already sent side by side (opts.concurrency).
  const split = (batch: number[], to: number) => {
    progress.size = Math.min(progress.size ?? to, to);
    return sendInBatches(batch, progress.size, sendBatch, 1);
  };
  /** Sends the inputs at these indices of the request. */
  const sendOne = async (batch: number[]): Promise<void> => {
    if (progress.size !== undefined && batch.length > progress.size) return split(batch, progress.size);
    const inputs = batch.map((i) => req.inputs[i]!);
    const sent = { ...req, inputs };
    const httpReq = adapter.buildRequest(sent, target);
    const bytes = Buffer.byteLength(httpReq.body);
    const res = await send(httpReq, { signal: opts.signal });
    const text = await res.text();
    const json = parseJson(text);
    // An error body that is no JSON (a proxy's HTML) is classified from its text.
    const body = json === NOT_JSON ? text : json;
    if (res.status < 200 || res.status >= 300) {
      // The upstream takes fewer inputs per call than we sent and said how many: its limit, not
      // the client's fault. The batch is split to that size and sent again to the same upstream
      // (in input order, usage summed), and the caller remembers the cap for the next requests.
      const cap = statedBatchCap(res.status, body);
      if (cap !== undefined && cap < inputs.length) {
        opts.onBatchCap?.(cap);
        return split(batch, cap);
      }
      const err = adapter.classifyError(res.status, body, res.headers);
      // Too large without a cap (a body limit): half as many inputs, same upstream, down to one
      // input per call. One input still refused is this upstream's limit: the next one may serve.
      // A refusal that fewer inputs would not cure is not `too_large`: the adapter classifies it
      // (text-embeddings-inference's validation 413s: src/providers/openai-embeddings/).
      if (err.kind === 'too_large' && inputs.length > 1) {
        progress.halved = true;
        progress.refused(bytes);
        return split(batch, Math.ceil(inputs.length / 2));
      }
      throw err;
    }
    // A 2xx body cut short or not JSON at all: said as chat says it (openai-response.ts).
    if (json === NOT_JSON)
      throw new UpstreamError('bad_response', `unparseable upstream body: ${excerpt(text)}`, {
        upstreamStatus: res.status,
      });
    const parsed = parseOrBadResponse(adapter, res.status, json, sent);
    if (parsed.vectors.length !== inputs.length) {
      throw new UpstreamError(
        'bad_response',
        `${adapter.kind} returned ${parsed.vectors.length} embeddings for ${inputs.length} inputs`,
        { upstreamStatus: res.status },
      );
    }
    progress.add(attempt, batch, parsed, bytes);
  };
  const maxBatch = Math.min(adapter.maxBatch, opts.maxBatch ?? adapter.maxBatch);
  const todo = progress.missing();
  const limits = [tokenLimit(adapter, req, target, opts.estimate, todo)];
  if (opts.maxBodyBytes !== undefined) limits.push(bodyLimit(adapter, req, target, todo, opts.maxBodyBytes));
  await sendInBatches(
    todo,
    maxBatch,
    sendBatch,
    opts.concurrency,
    limits.filter((l) => l !== undefined),
  );
  // Only a served request proves a body fits: one call served does not (the slices without one
  // input too large for any call are served at every size it is halved to, and the request still
  // fails). A body limit counts bytes, not inputs: the largest body served below the smallest
  // refused is what the next requests are split to, so one heavy input that fitted only alone
  // does not have later requests of small inputs sent one a call.
  const proven = progress.halved ? progress.provenBodyBytes() : undefined;
  if (proven !== undefined) opts.onBodyLimit?.(proven);
  return { ...progress.result(), dtype: effectiveDtype(adapter, req) };
}

/**
 * An answer the parser did not foresee (a null item, a string vector) is a 502, not a 500. Its
 * failure carries the status the upstream answered with (200), as a chat answer's does: the
 * adapters' parsers do not know it.
 */
function parseOrBadResponse(
  adapter: EmbeddingAdapter,
  status: number,
  body: unknown,
  batch: ResolvedEmbeddingRequest,
) {
  try {
    const parsed = adapter.parseResponse(status, body, batch);
    const dtype = effectiveDtype(adapter, batch);
    if (dtype !== 'float') checkQuantized(adapter.kind, parsed.vectors, dtype);
    return parsed;
  } catch (cause) {
    if (cause instanceof UpstreamError) {
      if (cause.upstreamStatus !== undefined) throw cause;
      throw new UpstreamError(cause.kind, cause.message, {
        upstreamStatus: status,
        retryAfterMs: cause.retryAfterMs,
        cause: cause.cause,
      });
    }
    throw new UpstreamError('bad_response', `unreadable ${adapter.kind} answer`, {
      upstreamStatus: status,
      cause,
    });
  }
}

/** The whole numbers each quantized dtype's values lie in (binary packs bits into int8, ubinary into uint8). */
const QUANTIZED_RANGE: Record<Exclude<EmbeddingDtype, 'float'>, readonly [number, number]> = {
  int8: [-128, 127],
  binary: [-128, 127],
  uint8: [0, 255],
  ubinary: [0, 255],
};

/**
 * An upstream that ignored a quantized `output_dtype` and answered floats (or values outside the
 * dtype) gave a malformed answer: passed on labelled int8, base64 would cut it to bytes that
 * decode as garbage. Not converted (Voyage's and Cohere's quantization are their own, calibrated
 * per model): refused, so the next upstream is tried and a 502 comes when none answers in it.
 */
function checkQuantized(kind: string, vectors: readonly number[][], dtype: Exclude<EmbeddingDtype, 'float'>) {
  const [lo, hi] = QUANTIZED_RANGE[dtype];
  for (let i = 0; i < vectors.length; i++) {
    for (const x of vectors[i]!) {
      if (!Number.isInteger(x) || x < lo || x > hi) {
        throw new UpstreamError(
          'bad_response',
          `${kind} answered output_dtype "${dtype}" with a value outside it (vector ${i}: ${x})`,
        );
      }
    }
  }
}

/** What `parseJson` answers for a text that is no JSON (any JSON value, `null` too, is a value). */
const NOT_JSON = Symbol('not JSON');

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}

/**
 * Cut by estimated tokens too, when the upstream caps them and the request may exceed that: the
 * weights of the inputs at `todo` (a request that fits whole fits in any part).
 */
function tokenLimit(
  adapter: EmbeddingAdapter,
  req: ResolvedEmbeddingRequest,
  target: EmbeddingTarget,
  estimate: EmbeddingUsage | undefined,
  todo: readonly number[],
): WeightLimit | undefined {
  const cap = adapter.maxBatchTokens?.(target.upstreamModel);
  if (cap === undefined) return undefined;
  const rule = { cap, minImagePixels: adapter.minImagePixels, maxImagePixels: adapter.maxImagePixels };
  const weights = inputTokenWeights(req, rule, estimate);
  return weights && { weights: todo.map((i) => weights[i]!), max: cap };
}
