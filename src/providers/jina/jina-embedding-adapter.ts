import {
  accountKind,
  classifyByStatus,
  errorMessageOf,
} from '../../gateway/embeddings/classify-upstream-error.js';
import {
  type EmbeddingAdapter,
  inputText,
  jsonHeaders,
  upstreamUrl,
} from '../../gateway/embeddings/embedding-adapter.js';
import type { ResolvedPart } from '../../gateway/embeddings/embedding-request.js';
import { count, parseEmbeddingList } from '../../gateway/embeddings/parse-embedding-list.js';

/**
 * Jina AI `/v1/embeddings`. CLIP-style: each `input` item ({text} or {image}) is embedded on
 * its own, so an input may be one image or text only (`fusesParts: false`). Images are sent as
 * raw base64 without the data: prefix, as Jina's examples do. Text-only batches are sent as
 * plain strings, which Jina's text-only models also accept.
 */
const TASKS = { query: 'retrieval.query', document: 'retrieval.passage' } as const;

function jinaItem(parts: ResolvedPart[]) {
  const image = parts.find((p) => p.type === 'image');
  if (image?.type === 'image') return { image: image.image.bytes.toString('base64') };
  return { text: inputText(parts) };
}

export const jinaEmbeddingAdapter: EmbeddingAdapter = {
  kind: 'jina',
  accepts: new Set(['text', 'image']),
  fusesParts: false,
  // Jina does not document a per-call item limit; 256 keeps one call well under its body size cap.
  maxBatch: 256,
  // input_type as task, truncation as truncate; floats only, so no output_dtype.
  parameters: ['input_type', 'truncation', 'encoding_format', 'dimensions', 'output_dimension'],
  buildRequest(req, target) {
    const hasImages = req.inputs.some((parts) => parts.some((p) => p.type === 'image'));
    const body = {
      model: target.upstreamModel,
      input: hasImages ? req.inputs.map(jinaItem) : req.inputs.map(inputText),
      embedding_type: 'float',
      ...(req.inputType ? { task: TASKS[req.inputType] } : {}),
      ...(req.dimensions !== null ? { dimensions: req.dimensions } : {}),
      ...(req.truncation ? { truncate: true } : {}),
    };
    return {
      method: 'POST',
      url: upstreamUrl(target.baseUrl, '/v1/embeddings'),
      headers: jsonHeaders(target),
      body: JSON.stringify(body),
    };
  },
  parseResponse(_status, body, req) {
    const { vectors, usage } = parseEmbeddingList('jina', body);
    const total = count(usage, 'total_tokens');
    // Jina's total includes its own image token cost; it is the text count only when no image was sent.
    const textOnly = req?.inputs.every((parts) => parts.every((p) => p.type === 'text'));
    return { vectors, usage: textOnly ? { textTokens: total, totalTokens: total } : { totalTokens: total } };
  },
  classifyError: (status, body, headers) =>
    classifyByStatus(
      'jina',
      status,
      errorMessageOf(body),
      headers,
      // Jina's 403 for an account without credit (its API reference, reference/embeddings.md 3.1).
      accountKind(status, body, ['authz_insufficient_balance']),
    ),
};
