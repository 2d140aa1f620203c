import type { ImageData } from '../images/image-data.js';

/**
 * Provider-independent embedding request and result. Wire decoders (Voyage, OpenAI) produce
 * an EmbeddingRequest; image parts are then fetched/decoded and measured into a
 * ResolvedEmbeddingRequest, which is what adapters see. One input -> one vector.
 */
export type EmbeddingPartType = 'text' | 'image' | 'tokens';

export type ImageSource = { kind: 'url'; url: string } | { kind: 'data_url'; dataUrl: string };

export type EmbeddingPart =
  | { type: 'text'; text: string }
  | { type: 'image'; source: ImageSource }
  /** Pre-tokenized input (OpenAI `input: number[]`); only upstreams sharing the tokenizer take it. */
  | { type: 'tokens'; tokens: number[] };

export type ResolvedPart =
  | { type: 'text'; text: string }
  | { type: 'image'; image: ImageData }
  | { type: 'tokens'; tokens: number[] };

export type EmbeddingInputType = 'query' | 'document';
export type EmbeddingDtype = 'float' | 'int8' | 'uint8' | 'binary' | 'ubinary';

interface EmbeddingOptions {
  /** Model the client asked for; null means "server default" (the route decides). */
  model: string | null;
  inputType: EmbeddingInputType | null;
  /** Upstream may truncate over-long inputs instead of failing (Voyage default true). */
  truncation: boolean;
  /** How the client wants vectors written back; never forwarded upstream (we always ask for numbers). */
  encoding: 'float' | 'base64';
  dimensions: number | null;
  dtype: EmbeddingDtype | null;
  user: string | null;
}

export interface EmbeddingRequest extends EmbeddingOptions {
  inputs: EmbeddingPart[][];
}

export interface ResolvedEmbeddingRequest extends EmbeddingOptions {
  inputs: ResolvedPart[][];
}

/** Counts an upstream reported, in Voyage's terms; any missing field is computed by us. */
export interface UpstreamEmbeddingUsage {
  textTokens?: number;
  imagePixels?: number;
  totalTokens?: number;
}

export interface EmbeddingUsage {
  textTokens: number;
  /**
   * The text tokens before the upstream truncates, when `textTokens` counts truncated inputs at
   * the model's context length (an estimate only): the token-cap batching reads these, since an
   * upstream may count its per-call cap on the text as sent.
   */
  uncutTextTokens?: number;
  imagePixels: number;
  videoPixels: number;
  totalTokens: number;
  /** True when any figure is our estimate rather than the upstream's report. */
  estimated: boolean;
}

export interface EmbeddingResult {
  /** The model that served (public id; the route sets it). */
  model: string;
  /** One per input, in input order. */
  vectors: number[][];
  usage: EmbeddingUsage;
  /** What the numbers in `vectors` are; decides the byte width when encoding base64. */
  dtype: EmbeddingDtype;
}

/** Distinct part types a request carries; the router compares this with adapters' `accepts`. */
export function partTypesOf(req: { inputs: { type: EmbeddingPartType }[][] }): Set<EmbeddingPartType> {
  const types = new Set<EmbeddingPartType>();
  for (const input of req.inputs) for (const part of input) types.add(part.type);
  return types;
}
