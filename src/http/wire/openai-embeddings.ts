import type {
  EmbeddingPart,
  EmbeddingRequest,
  EmbeddingResult,
} from '../../gateway/embeddings/embedding-request.js';
import { type EmbeddingItem, embeddingItems } from '../../gateway/embeddings/vector-codec.js';
import { badRequest } from '../../gateway/errors.js';
import { asObject, decodeEmbeddingOptions } from './voyage.js';

/**
 * POST /v1/embeddings as both the openai SDK (`input`, `encoding_format` float|base64,
 * `dimensions`, `user`) and the voyageai SDK's `embed` (`input`, `input_type`, `truncation`,
 * `output_dimension`, `output_dtype`, `encoding_format` base64|null) send it: one decoder
 * accepts the union of both field sets.
 */
export const MAX_EMBEDDING_INPUTS = 2048;

export function decodeEmbeddingsRequest(body: unknown): EmbeddingRequest {
  const b = asObject(body);
  return { ...decodeEmbeddingOptions(b), inputs: decodeInput(b.input) };
}

function decodeInput(input: unknown): EmbeddingPart[][] {
  if (input === undefined || input === null) throw badRequest('input is required', 'input');
  if (typeof input === 'string') return [[textPart(input, 'input')]];
  if (!Array.isArray(input))
    throw badRequest('input must be a string, an array of strings or token arrays', 'input');
  if (input.length === 0) throw badRequest('input must not be empty', 'input');
  // A flat array of integers is ONE tokenized input, not many, so the input count limit does
  // not apply to its length (OpenAI takes up to 8192 tokens per input).
  if (input.every((x) => typeof x === 'number')) return [[tokensPart(input, 'input')]];
  if (input.length > MAX_EMBEDDING_INPUTS) {
    throw badRequest(
      `input has ${input.length} items, more than the limit of ${MAX_EMBEDDING_INPUTS}`,
      'input',
    );
  }
  // The upstream shape cannot carry both kinds in one array, so neither can ours.
  if (input.some((x) => typeof x === 'string') && input.some((x) => Array.isArray(x))) {
    throw badRequest('input must not mix strings and token arrays', 'input');
  }
  return input.map((item, i) => {
    const where = `input[${i}]`;
    if (typeof item === 'string') return [textPart(item, where)];
    if (Array.isArray(item)) return [tokensPart(item, where)];
    throw badRequest(`${where}: must be a string or an array of token ids`, where);
  });
}

function textPart(text: string, where: string): EmbeddingPart {
  if (text.length === 0) throw badRequest(`${where}: must not be an empty string`, where);
  return { type: 'text', text };
}

function tokensPart(tokens: unknown[], where: string): EmbeddingPart {
  if (tokens.length === 0) throw badRequest(`${where}: token array must not be empty`, where);
  if (!tokens.every((t) => typeof t === 'number' && Number.isInteger(t) && t >= 0)) {
    throw badRequest(`${where}: token ids must be non-negative integers`, where);
  }
  return { type: 'tokens', tokens: tokens as number[] };
}

export interface OpenAIEmbeddingResponse {
  object: 'list';
  data: EmbeddingItem[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

export function encodeEmbeddingsResponse(
  result: EmbeddingResult,
  encoding: 'float' | 'base64',
): OpenAIEmbeddingResponse {
  return {
    object: 'list',
    data: embeddingItems(result, encoding),
    model: result.model,
    usage: { prompt_tokens: result.usage.totalTokens, total_tokens: result.usage.totalTokens },
  };
}
