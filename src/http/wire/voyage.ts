import type {
  EmbeddingDtype,
  EmbeddingInputType,
  EmbeddingPart,
  EmbeddingRequest,
  EmbeddingResult,
} from '../../gateway/embeddings/embedding-request.js';
import { type EmbeddingItem, embeddingItems } from '../../gateway/embeddings/vector-codec.js';
import { badRequest } from '../../gateway/errors.js';

/**
 * Voyage wire format for POST /v1/multimodalembeddings (decisions.md "Embeddings"). Official
 * SDKs send explicit nulls for unset options and either `output_encoding` or `encoding_format`,
 * so both names and null are accepted everywhere. Error bodies (with Voyage's top-level
 * `detail`) come from src/http/error-handler.ts.
 */
export const MAX_MULTIMODAL_INPUTS = 1000;

type Body = Record<string, unknown>;

export function decodeVoyageMultimodalRequest(body: unknown): EmbeddingRequest {
  const b = asObject(body);
  const inputs = b.inputs;
  if (inputs === undefined || inputs === null) throw badRequest('inputs is required', 'inputs');
  if (!Array.isArray(inputs))
    throw badRequest('inputs must be an array of {content: [...]} objects', 'inputs');
  if (inputs.length === 0) throw badRequest('inputs must not be empty', 'inputs');
  if (inputs.length > MAX_MULTIMODAL_INPUTS) {
    throw badRequest(
      `inputs has ${inputs.length} items, more than the limit of ${MAX_MULTIMODAL_INPUTS}`,
      'inputs',
    );
  }
  return { ...decodeEmbeddingOptions(b), inputs: inputs.map(decodeInput) };
}

function decodeInput(input: unknown, i: number): EmbeddingPart[] {
  const where = `inputs[${i}]`;
  if (!input || typeof input !== 'object' || Array.isArray(input)) {
    throw badRequest(`${where}: must be an object with a content array`, where);
  }
  const content = (input as Body).content;
  if (!Array.isArray(content))
    throw badRequest(`${where}.content: must be an array of parts`, `${where}.content`);
  if (content.length === 0) throw badRequest(`${where}.content: must not be empty`, `${where}.content`);
  return content.map((part, j) => decodePart(part, `${where}.content[${j}]`));
}

function decodePart(part: unknown, where: string): EmbeddingPart {
  if (!part || typeof part !== 'object' || Array.isArray(part))
    throw badRequest(`${where}: must be an object`, where);
  const p = part as Body;
  switch (p.type) {
    case 'text':
      if (typeof p.text !== 'string') throw badRequest(`${where}.text: must be a string`, `${where}.text`);
      return { type: 'text', text: p.text };
    case 'image_url': {
      // Voyage sends a string; OpenAI-style {url} objects are accepted too since clients mix them up.
      const v = p.image_url;
      const url = typeof v === 'string' ? v : v && typeof v === 'object' ? (v as Body).url : undefined;
      if (typeof url !== 'string' || url.length === 0) {
        throw badRequest(`${where}.image_url: must be a non-empty URL string`, `${where}.image_url`);
      }
      // A URL scheme is case-insensitive (RFC 3986): `Data:` is a data URL too, as image_base64 takes it.
      return {
        type: 'image',
        source: /^data:/i.test(url) ? { kind: 'data_url', dataUrl: url } : { kind: 'url', url },
      };
    }
    case 'image_base64': {
      const v = p.image_base64;
      // RFC 2397 allows parameters before `;base64` (`data:image/png;charset=binary;base64,...`),
      // as the same string given as image_url is taken.
      if (typeof v !== 'string' || !/^data:image\/[^;,]+(;[^;,]+)*;base64,/i.test(v)) {
        throw badRequest(
          `${where}.image_base64: must be a data URL of the form data:image/<type>;base64,<data>`,
          `${where}.image_base64`,
        );
      }
      return { type: 'image', source: { kind: 'data_url', dataUrl: v } };
    }
    case undefined:
    case null:
      throw badRequest(`${where}: missing part type (text, image_url or image_base64)`, `${where}.type`);
    default:
      throw badRequest(
        `${where}: unsupported part type ${JSON.stringify(p.type)} (supported: text, image_url, image_base64)`,
        `${where}.type`,
      );
  }
}

/** Options shared by the Voyage multimodal, Voyage text and OpenAI embeddings bodies. */
export function decodeEmbeddingOptions(b: Body): Omit<EmbeddingRequest, 'inputs'> {
  return {
    model: optString(b, 'model'),
    inputType: optEnum(b, 'input_type', ['query', 'document'] as const) as EmbeddingInputType | null,
    truncation: optBool(b, 'truncation') ?? true,
    encoding: decodeEncoding(b),
    dimensions: optPositiveInt(b, 'output_dimension') ?? optPositiveInt(b, 'dimensions'),
    dtype: optEnum(b, 'output_dtype', [
      'float',
      'int8',
      'uint8',
      'binary',
      'ubinary',
    ] as const) as EmbeddingDtype | null,
    user: optString(b, 'user'),
  };
}

function decodeEncoding(b: Body): 'float' | 'base64' {
  const a = optEnum(b, 'output_encoding', ['base64', 'float'] as const);
  const e = optEnum(b, 'encoding_format', ['base64', 'float'] as const);
  return a === 'base64' || e === 'base64' ? 'base64' : 'float';
}

export function asObject(body: unknown): Body {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw badRequest('request body must be a JSON object');
  return body as Body;
}

function optString(b: Body, key: string): string | null {
  const v = b[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || v.length === 0) throw badRequest(`${key} must be a non-empty string`, key);
  return v;
}

function optBool(b: Body, key: string): boolean | null {
  const v = b[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'boolean') throw badRequest(`${key} must be true or false`, key);
  return v;
}

function optPositiveInt(b: Body, key: string): number | null {
  const v = b[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
    throw badRequest(`${key} must be a positive integer`, key);
  return v;
}

function optEnum<T extends string>(b: Body, key: string, values: readonly T[]): T | null {
  const v = b[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || !values.includes(v as T)) {
    throw badRequest(`${key} must be one of ${values.map((x) => `"${x}"`).join(', ')} or null`, key);
  }
  return v as T;
}

export interface VoyageEmbeddingResponse {
  object: 'list';
  data: EmbeddingItem[];
  model: string;
  usage: { text_tokens: number; image_pixels: number; video_pixels: number; total_tokens: number };
}

export function encodeVoyageMultimodalResponse(
  result: EmbeddingResult,
  encoding: 'float' | 'base64',
): VoyageEmbeddingResponse {
  return {
    object: 'list',
    data: embeddingItems(result, encoding),
    model: result.model,
    usage: {
      text_tokens: result.usage.textTokens,
      image_pixels: result.usage.imagePixels,
      video_pixels: result.usage.videoPixels,
      total_tokens: result.usage.totalTokens,
    },
  };
}
