import type {
  ResolvedEmbeddingRequest,
  ResolvedPart,
} from '../../src/gateway/embeddings/embedding-request.js';

type Options = Omit<ResolvedEmbeddingRequest, 'inputs'>;

/** Every option of a resolved request unset, as a client that sends only its inputs. */
const UNSET: Options = {
  model: null,
  inputType: null,
  truncation: true,
  encoding: 'float',
  dimensions: null,
  dtype: null,
  user: null,
};

/**
 * A resolved embedding request (what adapters see) of these inputs, every option unset unless
 * `options` sets it: the one place tests spell the whole object, so a field added to it is added
 * here.
 */
export function resolvedRequest(
  inputs: ResolvedPart[][],
  options: Partial<Options> = {},
): ResolvedEmbeddingRequest {
  return { ...UNSET, ...options, inputs };
}

/** A resolved request of one text part per input. */
export function textRequest(texts: string[], options: Partial<Options> = {}): ResolvedEmbeddingRequest {
  return resolvedRequest(
    texts.map((text) => [{ type: 'text', text }]),
    options,
  );
}
