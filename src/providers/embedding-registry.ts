import { adapterRejectionOf, type EmbeddingAdapter } from '../gateway/embeddings/embedding-adapter.js';
import type { ResolvedEmbeddingRequest } from '../gateway/embeddings/embedding-request.js';
import { GatewayError } from '../gateway/errors.js';
import { cohereEmbeddingAdapter } from './cohere/cohere-embedding-adapter.js';
import { jinaEmbeddingAdapter } from './jina/jina-embedding-adapter.js';
import { openaiEmbeddingAdapter } from './openai-embeddings/openai-embedding-adapter.js';
import { voyageMultimodalAdapter, voyageTextAdapter } from './voyage/voyage-embedding-adapter.js';

/**
 * Embedding adapters by kind: one line per upstream kind. A channel's kind picks the adapter;
 * Voyage serves two endpoints, chosen by the model (its multimodal models are named so).
 */
const BY_KIND: Record<string, EmbeddingAdapter> = {
  'voyage-multimodal': voyageMultimodalAdapter,
  'voyage-text': voyageTextAdapter,
  jina: jinaEmbeddingAdapter,
  cohere: cohereEmbeddingAdapter,
  'openai-embeddings': openaiEmbeddingAdapter,
  // Channels of the chat kind serve embeddings through the same base URL.
  'openai-compatible': openaiEmbeddingAdapter,
  openai: openaiEmbeddingAdapter,
};

export const embeddingAdapterKinds: readonly string[] = [...Object.keys(BY_KIND), 'voyage'];

/** The adapter for a channel kind and upstream model, or undefined when the kind has no embeddings. */
export function getEmbeddingAdapter(kind: string, upstreamModel?: string): EmbeddingAdapter | undefined {
  if (kind === 'voyage') {
    return upstreamModel && /multimodal/i.test(upstreamModel) ? voyageMultimodalAdapter : voyageTextAdapter;
  }
  return BY_KIND[kind];
}

/**
 * Route candidates that can embed this request, each with its adapter. When candidates exist but
 * none can take the request (images for text-only models), `rejection` is the clear 400 the
 * client gets instead of an upstream error.
 */
export function selectEmbeddingCandidates<C extends { target: { kind: string; upstreamModel: string } }>(
  candidates: readonly C[],
  req: ResolvedEmbeddingRequest,
): { usable: { candidate: C; adapter: EmbeddingAdapter }[]; rejection: GatewayError | null } {
  const usable: { candidate: C; adapter: EmbeddingAdapter }[] = [];
  // The first reason given; its param (output_dtype) or, absent, the caller's (the inputs).
  let reason: { message: string; param?: string } | null = null;
  for (const candidate of candidates) {
    const adapter = getEmbeddingAdapter(candidate.target.kind, candidate.target.upstreamModel);
    const why = adapter
      ? adapterRejectionOf(adapter, req)
      : { message: `upstream kind ${candidate.target.kind} has no embeddings` };
    if (adapter && !why) usable.push({ candidate, adapter });
    else reason ??= why;
  }
  const rejection =
    usable.length === 0 && candidates.length > 0
      ? new GatewayError(400, `no upstream can serve this request: ${reason?.message}`, {
          param: reason?.param,
        })
      : null;
  return { usable, rejection };
}
