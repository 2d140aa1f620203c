import {
  accountKind,
  classifyByStatus,
  errorMessageOf,
} from '../../gateway/embeddings/classify-upstream-error.js';
import { type EmbeddingAdapter, inputText, jsonHeaders } from '../../gateway/embeddings/embedding-adapter.js';
import type { ResolvedPart } from '../../gateway/embeddings/embedding-request.js';
import { count, parseEmbeddingList } from '../../gateway/embeddings/parse-embedding-list.js';
import { joinUrl } from '../shared/media.js';
import { teiValidationKind } from './tei-validation.js';

/**
 * `/v1/embeddings` of OpenAI and OpenAI-compatible servers (vLLM, TEI, Ollama, llama.cpp,
 * Infinity). Text only: none of them takes images through this shape reliably. Token-array
 * inputs pass through unchanged for servers that share the client's tokenizer.
 */
function openaiInput(parts: ResolvedPart[]): string | number[] {
  const first = parts[0];
  return parts.length === 1 && first.type === 'tokens' ? first.tokens : inputText(parts);
}

/** A base URL with no path: scheme://host[:port] and at most a slash. */
const BARE_HOST = /^[a-z][a-z0-9+.-]*:\/\/[^/]+\/?$/i;

export const openaiEmbeddingAdapter: EmbeddingAdapter = {
  kind: 'openai-embeddings',
  accepts: new Set(['text', 'tokens']),
  fusesParts: false,
  maxBatch: 2048,
  // OpenAI's fields only: input_type and truncation are not sent (OpenAI-compatible servers
  // ignore or refuse them), and floats are all it returns.
  parameters: ['encoding_format', 'dimensions', 'output_dimension', 'user'],
  // OpenAI's cap on the tokens of one request (embeddings.md 4); for other servers it only means
  // more calls for a very large request.
  maxBatchTokens: () => 300_000,
  buildRequest(req, target) {
    const body = {
      model: target.upstreamModel,
      input: req.inputs.map(openaiInput),
      encoding_format: 'float',
      ...(req.dimensions !== null ? { dimensions: req.dimensions } : {}),
      ...(req.user !== null ? { user: req.user } : {}),
    };
    return {
      method: 'POST',
      // The base as given, like chat's (`{base}/chat/completions`) and the model list's: it ends
      // where the OpenAI paths begin (`…/v1`, `…/api/paas/v4`, `…/v1beta/openai`). A bare host
      // (`http://tei:8080`, as embedding servers are often configured, and as this adapter took
      // before) still gets `/v1/embeddings`.
      url: joinUrl(target.baseUrl, BARE_HOST.test(target.baseUrl) ? 'v1/embeddings' : 'embeddings'),
      headers: jsonHeaders(target),
      body: JSON.stringify(body),
    };
  },
  parseResponse(_status, body) {
    const { vectors, usage } = parseEmbeddingList('openai-compatible', body);
    const prompt = count(usage, 'prompt_tokens');
    return { vectors, usage: { textTokens: prompt, totalTokens: count(usage, 'total_tokens') ?? prompt } };
  },
  // text-embeddings-inference answers every validation error with a 413, most of them about the
  // request rather than its size; OpenAI an empty account with a 429 (`accountKind`).
  classifyError: (status, body, headers) =>
    classifyByStatus(
      'openai-compatible',
      status,
      errorMessageOf(body),
      headers,
      teiValidationKind(status, body) ?? accountKind(status, body),
    ),
};
