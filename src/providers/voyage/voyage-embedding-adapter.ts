import {
  accountKind,
  classifyByStatus,
  errorMessageOf,
} from '../../gateway/embeddings/classify-upstream-error.js';
import {
  type EmbeddingAdapter,
  type EmbeddingHttpRequest,
  type EmbeddingTarget,
  effectiveDtype,
  inputText,
  jsonHeaders,
  upstreamUrl,
} from '../../gateway/embeddings/embedding-adapter.js';
import type {
  EmbeddingDtype,
  ResolvedEmbeddingRequest,
  ResolvedPart,
} from '../../gateway/embeddings/embedding-request.js';
import { count, parseEmbeddingList } from '../../gateway/embeddings/parse-embedding-list.js';
import { imageToDataUrl } from '../../gateway/images/image-data.js';

/**
 * Voyage AI: `/v1/multimodalembeddings` (interleaved text and images fused into one vector per
 * input) and `/v1/embeddings` (text). Images always go as `image_base64` data URLs of bytes we
 * fetched and checked, so Voyage never fetches a client's URL. We never ask for base64 output:
 * numbers come back and the client's encoding is applied by our encoder.
 */
const DTYPES: ReadonlySet<EmbeddingDtype> = new Set(['float', 'int8', 'uint8', 'binary', 'ubinary']);
const VOYAGE_PARAMETERS = [
  'input_type',
  'truncation',
  'encoding_format',
  'dimensions',
  'output_dimension',
  'output_dtype',
] as const;

function commonFields(req: ResolvedEmbeddingRequest, target: EmbeddingTarget, adapter: EmbeddingAdapter) {
  const dtype = effectiveDtype(adapter, req);
  return {
    model: target.upstreamModel,
    input_type: req.inputType,
    truncation: req.truncation,
    ...(req.dimensions !== null ? { output_dimension: req.dimensions } : {}),
    ...(dtype !== 'float' ? { output_dtype: dtype } : {}),
  };
}

function post(target: EmbeddingTarget, path: string, body: unknown): EmbeddingHttpRequest {
  return {
    method: 'POST',
    url: upstreamUrl(target.baseUrl, path),
    headers: jsonHeaders(target),
    body: JSON.stringify(body),
  };
}

function voyagePart(p: ResolvedPart) {
  if (p.type === 'image') return { type: 'image_base64', image_base64: imageToDataUrl(p.image) };
  if (p.type === 'text') return { type: 'text', text: p.text };
  throw new Error('voyage cannot embed token inputs'); // unreachable: `accepts` keeps them away
}

/**
 * Tokens per request (embeddings.md 1.4 and 1.7): 320K for the multimodal models; for the text
 * models 1M (lite), 320K or 120K (large and the domain models) by name, as Voyage's text
 * embeddings API reference lists them (docs/embeddings.md, "Default embedding models"). A model
 * not listed here gets the smallest cap: more calls, never a refused request.
 */
const MULTIMODAL_BATCH_TOKENS = 320_000;
const TEXT_BATCH_TOKENS: ReadonlyMap<string, number> = new Map([
  ['voyage-4-lite', 1_000_000],
  ['voyage-3.5-lite', 1_000_000],
  ['voyage-4', 320_000],
  ['voyage-3.5', 320_000],
  ['voyage-2', 320_000],
  ['voyage-4-large', 120_000],
  ['voyage-3-large', 120_000],
  ['voyage-code-3', 120_000],
  ['voyage-finance-2', 120_000],
  ['voyage-law-2', 120_000],
]);
const SMALLEST_TEXT_BATCH_TOKENS = 120_000;

const classifyError: EmbeddingAdapter['classifyError'] = (status, body, headers) =>
  classifyByStatus('voyage', status, errorMessageOf(body), headers, accountKind(status, body));

export const voyageMultimodalAdapter: EmbeddingAdapter = {
  kind: 'voyage-multimodal',
  accepts: new Set(['text', 'image']),
  fusesParts: true,
  maxBatch: 1000,
  parameters: VOYAGE_PARAMETERS,
  maxBatchTokens: () => MULTIMODAL_BATCH_TOKENS,
  // Voyage bills an image of fewer pixels as 50,000 and one of more as 2,000,000 (it downsamples
  // it): its client config, embeddings.md 1.4.
  minImagePixels: 50_000,
  maxImagePixels: 2_000_000,
  dtypes: DTYPES,
  buildRequest(req, target) {
    return post(target, '/v1/multimodalembeddings', {
      inputs: req.inputs.map((parts) => ({ content: parts.map(voyagePart) })),
      ...commonFields(req, target, this),
    });
  },
  parseResponse(_status, body) {
    const { vectors, usage } = parseEmbeddingList('voyage', body);
    return {
      vectors,
      usage: {
        textTokens: count(usage, 'text_tokens'),
        imagePixels: count(usage, 'image_pixels'),
        totalTokens: count(usage, 'total_tokens'),
      },
    };
  },
  classifyError,
};

export const voyageTextAdapter: EmbeddingAdapter = {
  kind: 'voyage-text',
  accepts: new Set(['text']),
  fusesParts: false,
  maxBatch: 1000,
  parameters: VOYAGE_PARAMETERS,
  maxBatchTokens: (model) => TEXT_BATCH_TOKENS.get(model) ?? SMALLEST_TEXT_BATCH_TOKENS,
  dtypes: DTYPES,
  buildRequest(req, target) {
    return post(target, '/v1/embeddings', {
      input: req.inputs.map(inputText),
      ...commonFields(req, target, this),
    });
  },
  parseResponse(_status, body) {
    const { vectors, usage } = parseEmbeddingList('voyage', body);
    // The text endpoint reports only total_tokens, and for text that is the text count.
    const total = count(usage, 'total_tokens');
    return { vectors, usage: { textTokens: total, totalTokens: total } };
  },
  classifyError,
};
