/** How long what an upstream taught about its limits is kept. */
export const LIMIT_MEMORY_TTL_MS = 10 * 60_000;

interface Remembered {
  value: number;
  until: number;
}

/**
 * What embedding upstreams taught about their limits, by upstream (channel and base URL), so later
 * requests are split up front instead of being refused first (docs/embeddings.md, "Batching"):
 *
 * - a cap on the inputs of one call an upstream stated when it refused a larger batch
 *   (text-embeddings-inference's `--max-client-batch-size`), remembered at once;
 * - the bytes of a body an upstream served after refusing a larger one with a 413 that states no
 *   cap (a body limit: TEI's `--payload-limit`, a proxy's), remembered once a request was served
 *   (a failed one teaches nothing: docs/embeddings.md).
 *
 * Each for `LIMIT_MEMORY_TTL_MS` from when it was last lowered or renewed (a server restarted with
 * a larger limit is used fully again after that, at the cost of one refused call); a lower value
 * replaces a higher one. In memory, per process; a changed base URL starts afresh.
 */
export class UpstreamLimitMemory {
  private readonly caps = new Map<string, Remembered>();
  private readonly bodies = new Map<string, Remembered>();

  batchCap(upstream: string): number | undefined {
    return read(this.caps, upstream);
  }

  bodyBytes(upstream: string): number | undefined {
    return read(this.bodies, upstream);
  }

  rememberBatchCap(upstream: string, cap: number): void {
    lower(this.caps, upstream, cap);
  }

  rememberBodyBytes(upstream: string, bytes: number): void {
    lower(this.bodies, upstream, bytes);
  }
}

function read(map: Map<string, Remembered>, key: string): number | undefined {
  const r = map.get(key);
  if (r === undefined) return undefined;
  if (Date.now() < r.until) return r.value;
  map.delete(key);
  return undefined;
}

function lower(map: Map<string, Remembered>, key: string, value: number): void {
  const was = read(map, key);
  map.set(key, { value: Math.min(value, was ?? value), until: Date.now() + LIMIT_MEMORY_TTL_MS });
}
