import type { EmbeddingDtype, EmbeddingResult } from './embedding-request.js';

/**
 * base64 vectors as clients decode them: float32 little-endian for float (what the openai SDK
 * and voyageai's Python SDK read), one byte per value for the quantized dtypes (int8 for
 * int8/binary, uint8 for uint8/ubinary).
 */
export function encodeVectorBase64(vector: readonly number[], dtype: EmbeddingDtype = 'float'): string {
  if (dtype === 'float') {
    const buf = Buffer.alloc(vector.length * 4);
    for (let i = 0; i < vector.length; i++) buf.writeFloatLE(vector[i], i * 4);
    return buf.toString('base64');
  }
  const bytes = dtype === 'int8' || dtype === 'binary' ? Int8Array.from(vector) : Uint8Array.from(vector);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** One vector of an embeddings answer, in the shape OpenAI's and Voyage's answers share. */
export interface EmbeddingItem {
  object: 'embedding';
  embedding: number[] | string;
  index: number;
}

/** The answer's `data`: each vector in input order, as numbers or as base64 (`encoding`). */
export function embeddingItems(result: EmbeddingResult, encoding: 'float' | 'base64'): EmbeddingItem[] {
  return result.vectors.map((v, index) => ({
    object: 'embedding',
    embedding: encoding === 'base64' ? encodeVectorBase64(v, result.dtype) : v,
    index,
  }));
}

/** float32 little-endian base64, or undefined when the bytes are not whole float32 values. */
export function decodeFloat32Base64(data: string): number[] | undefined {
  const buf = Buffer.from(data, 'base64');
  if (buf.length === 0 || buf.length % 4 !== 0) return undefined;
  const out: number[] = new Array(buf.length >> 2);
  for (let i = 0; i < out.length; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}

/** An upstream's vector as a client may get it: a non-empty array of finite numbers. */
export function isVector(v: unknown): v is number[] {
  if (!Array.isArray(v) || v.length === 0) return false;
  for (const x of v) if (typeof x !== 'number' || !Number.isFinite(x)) return false;
  return true;
}
