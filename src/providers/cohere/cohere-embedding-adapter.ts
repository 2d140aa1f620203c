import {
  accountKind,
  classifyByStatus,
  errorMessageOf,
} from '../../gateway/embeddings/classify-upstream-error.js';
import {
  type EmbeddingAdapter,
  effectiveDtype,
  inputText,
  jsonHeaders,
  upstreamUrl,
} from '../../gateway/embeddings/embedding-adapter.js';
import type { EmbeddingDtype, ResolvedPart } from '../../gateway/embeddings/embedding-request.js';
import { count } from '../../gateway/embeddings/parse-embedding-list.js';
import { isVector } from '../../gateway/embeddings/vector-codec.js';
import { UpstreamError } from '../../gateway/errors.js';
import { imageToDataUrl } from '../../gateway/images/image-data.js';

/**
 * Cohere v2 `/v2/embed`. Requests with images use `inputs[].content[]` (one fused vector per
 * input, Embed v4); text-only requests use `texts`, which every Cohere embed model accepts.
 * `input_type` is required by Cohere: documents unless the client said query.
 */
const DTYPES: ReadonlySet<EmbeddingDtype> = new Set(['float', 'int8', 'uint8', 'binary', 'ubinary']);

function coherePart(p: ResolvedPart) {
  if (p.type === 'image') return { type: 'image_url', image_url: { url: imageToDataUrl(p.image) } };
  if (p.type === 'text') return { type: 'text', text: p.text };
  throw new Error('cohere cannot embed token inputs'); // unreachable: `accepts` keeps them away
}

/**
 * Cohere's own host with a version in the base URL (`https://api.cohere.com/v1`, as its v1 docs
 * write it) would make `/v1/v2/embed`, a 404: the version is dropped there. Other hosts keep their
 * path, since a proxy may mount Cohere under any prefix.
 */
const COHERE_VERSIONED = /^(https?:\/\/api\.cohere\.(?:com|ai))\/v\d+\/*$/i;

export function cohereEmbedUrl(baseUrl: string): string {
  return upstreamUrl(baseUrl.replace(COHERE_VERSIONED, '$1'), '/v2/embed');
}

export const cohereEmbeddingAdapter: EmbeddingAdapter = {
  kind: 'cohere',
  accepts: new Set(['text', 'image']),
  fusesParts: true,
  maxBatch: 96,
  // input_type as search_query/search_document, truncation as truncate END/NONE.
  parameters: [
    'input_type',
    'truncation',
    'encoding_format',
    'dimensions',
    'output_dimension',
    'output_dtype',
  ],
  dtypes: DTYPES,
  buildRequest(req, target) {
    const hasImages = req.inputs.some((parts) => parts.some((p) => p.type === 'image'));
    const body = {
      model: target.upstreamModel,
      input_type: req.inputType === 'query' ? 'search_query' : 'search_document',
      embedding_types: [effectiveDtype(this, req)],
      ...(hasImages
        ? { inputs: req.inputs.map((parts) => ({ content: parts.map(coherePart) })) }
        : { texts: req.inputs.map(inputText) }),
      ...(req.dimensions !== null ? { output_dimension: req.dimensions } : {}),
      truncate: req.truncation ? 'END' : 'NONE',
    };
    return {
      method: 'POST',
      url: cohereEmbedUrl(target.baseUrl),
      headers: jsonHeaders(target),
      body: JSON.stringify(body),
    };
  },
  parseResponse(_status, body, req) {
    const embeddings = (body as { embeddings?: Record<string, unknown> })?.embeddings;
    const dtype = req ? effectiveDtype(this, req) : 'float';
    const vectors = embeddings?.[dtype];
    if (!Array.isArray(vectors) || !vectors.every(isVector)) {
      throw new UpstreamError('bad_response', `cohere answered without embeddings.${dtype}`);
    }
    const billed = (body as { meta?: { billed_units?: Record<string, unknown> } }).meta?.billed_units ?? {};
    const textTokens = count(billed, 'input_tokens');
    // `images` is the number of images billed, not tokens: without `image_tokens` the images
    // are counted as pixels / 560 like everywhere else.
    const imageTokens = count(billed, 'image_tokens');
    return {
      vectors: vectors as number[][],
      usage: {
        textTokens,
        // Cohere prices images in its own tokens; when it says so, its total wins over pixels/560.
        totalTokens:
          textTokens !== undefined && imageTokens !== undefined ? textTokens + imageTokens : undefined,
      },
    };
  },
  classifyError: (status, body, headers) =>
    classifyByStatus('cohere', status, errorMessageOf(body), headers, accountKind(status, body)),
};
