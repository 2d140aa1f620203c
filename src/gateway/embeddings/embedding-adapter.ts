import type { UpstreamError } from '../errors.js';
import {
  type EmbeddingDtype,
  type EmbeddingPartType,
  partTypesOf,
  type ResolvedEmbeddingRequest,
  type UpstreamEmbeddingUsage,
} from './embedding-request.js';

/**
 * The contract every embedding upstream kind implements (src/providers/<kind>/). Adapters are
 * pure: they build one HTTP call for at most `maxBatch` inputs and read its answer; sending,
 * batching and retrying happen elsewhere.
 */
/** Field-compatible with the chat side's UpstreamTarget (src/providers/types.ts), so one object serves both. */
export interface EmbeddingTarget {
  /** Provider base URL, with or without the version segment (`https://api.voyageai.com` or `.../v1`). */
  baseUrl: string;
  apiKey?: string;
  /** The model id the upstream knows. */
  upstreamModel: string;
  /** Extra headers sent on every call (they win over the adapter's own). */
  headers?: Record<string, string>;
}

export interface EmbeddingHttpRequest {
  method: 'POST';
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface ParsedEmbeddingResponse {
  /** One per input sent, in input order. */
  vectors: number[][];
  usage?: UpstreamEmbeddingUsage;
  /** Defaults to float. */
  dtype?: EmbeddingDtype;
}

export type ResponseHeaders = Record<string, string | string[] | undefined>;

export interface EmbeddingAdapter {
  kind: string;
  /** Part types the upstream can embed. */
  accepts: ReadonlySet<EmbeddingPartType>;
  /**
   * Whether all parts of one input are fused into one vector upstream. CLIP-style upstreams
   * embed each item separately, so they can take an input that is one image or only text.
   */
  fusesParts: boolean;
  /** Inputs per upstream call. */
  maxBatch: number;
  /**
   * The request parameters this upstream honours, by the names clients send them (both
   * endpoints' names for one setting: `dimensions` and `output_dimension`). What a model's
   * `supported_parameters` in /v1/models lists for the channels serving it: a parameter the
   * adapter drops (`input_type` to an OpenAI-compatible server) is not listed. `encoding_format`
   * is the gateway's own encoding, so every adapter honours it.
   */
  parameters: readonly string[];
  /**
   * Tokens one upstream call may carry in all, for the upstream model (Voyage, OpenAI), or
   * undefined for no such cap: batches are then also cut by our estimate of their tokens
   * (batch-tokens.ts), so a large valid request is not refused upstream as too big.
   */
  maxBatchTokens?(upstreamModel: string): number | undefined;
  /**
   * Pixels the upstream bills a smaller image as, and a larger one as (it downsamples it): our
   * estimate of its usage (quota hold, the usage reported when it reports none) and of its
   * tokens for that cap count each image's width x height clamped to these.
   */
  minImagePixels?: number;
  maxImagePixels?: number;
  /**
   * Output types the upstream can return. A request for a quantized type outside this set is
   * never sent here (see `adapterRejectionOf`); absent means float only.
   */
  dtypes?: ReadonlySet<EmbeddingDtype>;
  buildRequest(req: ResolvedEmbeddingRequest, target: EmbeddingTarget): EmbeddingHttpRequest;
  /**
   * `body` is parsed JSON (or the raw text when it was not JSON); `req` is the batch that was
   * sent, for upstreams whose usage means different things by content. Throws
   * UpstreamError('bad_response').
   */
  parseResponse(status: number, body: unknown, req?: ResolvedEmbeddingRequest): ParsedEmbeddingResponse;
  classifyError(status: number, body: unknown, headers: ResponseHeaders): UpstreamError;
}

/** Why an adapter cannot serve a request, and the request field to blame when it is not the inputs. */
export interface AdapterRejection {
  message: string;
  param?: 'output_dtype';
}

/**
 * Why this adapter cannot serve the request, or null when it can. The router skips such
 * upstreams, so an image never reaches a text-only model, nor a quantized `output_dtype` an
 * upstream that returns floats only: answering floats there would be silently wrong (base64
 * output would be float32 bytes that a client decodes as int8; the voyageai Python SDK always
 * asks for base64).
 */
export function adapterRejectionOf(
  adapter: EmbeddingAdapter,
  req: ResolvedEmbeddingRequest,
): AdapterRejection | null {
  for (const type of partTypesOf(req)) {
    if (!adapter.accepts.has(type)) {
      return {
        message:
          type === 'image'
            ? `the model cannot embed images (${adapter.kind} upstream is text-only)`
            : `the model cannot embed ${type} inputs`,
      };
    }
  }
  if (!adapter.fusesParts) {
    const i = req.inputs.findIndex((parts) => parts.length > 1 && parts.some((p) => p.type !== 'text'));
    if (i >= 0)
      return {
        message: `inputs[${i}]: the model embeds each image on its own and cannot combine it with other parts`,
      };
  }
  if (req.dtype && req.dtype !== 'float' && !adapter.dtypes?.has(req.dtype)) {
    const can = [...(adapter.dtypes ?? ['float'])].join(', ');
    return {
      message: `output_dtype "${req.dtype}" is not supported by the ${adapter.kind} upstream (it returns ${can})`,
      param: 'output_dtype',
    };
  }
  return null;
}

/** `adapterRejectionOf`'s message alone. */
export function adapterRejection(adapter: EmbeddingAdapter, req: ResolvedEmbeddingRequest): string | null {
  return adapterRejectionOf(adapter, req)?.message ?? null;
}

/** The dtype this adapter will actually return for the request. */
export function effectiveDtype(
  adapter: EmbeddingAdapter,
  req: { dtype: EmbeddingDtype | null },
): EmbeddingDtype {
  return req.dtype && adapter.dtypes?.has(req.dtype) ? req.dtype : 'float';
}

export function adapterCanServe(adapter: EmbeddingAdapter, req: ResolvedEmbeddingRequest): boolean {
  return adapterRejection(adapter, req) === null;
}

/**
 * Joins a provider path onto a base URL whose path may already end with the version segment,
 * since operators write both `https://host` and `https://host/v1`.
 */
export function upstreamUrl(baseUrl: string, path: string): string {
  const base = baseUrl.replace(/\/+$/, '');
  const version = /^\/(v\d+)\//.exec(path)?.[1];
  if (version && base.endsWith(`/${version}`)) return base + path.slice(version.length + 1);
  return base + path;
}

export function jsonHeaders(target: EmbeddingTarget): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json',
    ...(target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}),
    ...target.headers,
  };
}

/** Text of an input whose parts are all text (non-fusing upstreams get them joined by newlines). */
export function inputText(parts: ResolvedEmbeddingRequest['inputs'][number]): string {
  return parts.map((p) => (p.type === 'text' ? p.text : '')).join('\n');
}
