import type { EmbeddingAdapter } from '../gateway/embeddings/embedding-adapter.js';
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
