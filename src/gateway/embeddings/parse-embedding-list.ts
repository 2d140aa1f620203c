import { UpstreamError } from '../errors.js';
import { decodeFloat32Base64, isVector } from './vector-codec.js';

/**
 * Reads the `{data: [{embedding, index}], usage}` list that OpenAI, Voyage and Jina all
 * answer with. Vectors are ordered by `index`, not by array position, since servers are free
 * to return them in any order.
 */
export function parseEmbeddingList(
  provider: string,
  body: unknown,
): { vectors: number[][]; usage: Record<string, unknown> } {
  const data = (body as { data?: unknown })?.data;
  if (!Array.isArray(data))
    throw new UpstreamError('bad_response', `${provider} answered without a data array`);
  const vectors: number[][] = new Array(data.length);
  data.forEach((item, pos) => {
    const index = typeof item?.index === 'number' ? item.index : pos;
    const emb = item?.embedding;
    const vector = typeof emb === 'string' ? decodeFloat32Base64(emb) : emb;
    if (!isVector(vector)) {
      throw new UpstreamError(
        'bad_response',
        `${provider} answered data[${pos}] without a vector of finite numbers`,
      );
    }
    if (!Number.isInteger(index) || index < 0 || index >= data.length || vectors[index]) {
      throw new UpstreamError('bad_response', `${provider} answered data[${pos}] with a bad index ${index}`);
    }
    vectors[index] = vector;
  });
  const usage = (body as { usage?: unknown }).usage;
  return { vectors, usage: usage && typeof usage === 'object' ? (usage as Record<string, unknown>) : {} };
}

/** A count from an upstream usage object, or undefined when absent or not a count. */
export function count(usage: Record<string, unknown>, key: string): number | undefined {
  const v = usage[key];
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
}
