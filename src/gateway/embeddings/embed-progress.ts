import type { ParsedEmbeddingResponse } from './embedding-adapter.js';
import type { UpstreamEmbeddingUsage } from './embedding-request.js';

/**
 * What one upstream has served of one request so far: the vector of each input it embedded, the
 * usage of each call that served them, and what halving learned of its limit. Route execution's
 * tries of that upstream share it (a retry after a 5xx, a 429 or a timeout, another key of the
 * channel), so a retry sends only the inputs still missing, no input is embedded twice, and each
 * call that served is billed once, when the request is served. Another upstream starts afresh: one
 * answer is made by one upstream (docs/embeddings.md, "Retries").
 */
export class EmbedProgress {
  private readonly vectors: (number[] | undefined)[];
  private readonly usages: (UpstreamEmbeddingUsage | undefined)[] = [];
  private served = 0;
  /** Which try of the upstream is current (`begin`): a slice of an earlier one that lands late is not kept. */
  private tries = 0;
  /**
   * The most inputs one call may carry, once the upstream refused more (a cap it stated, or half
   * a batch it refused without one): a size refused once is not sent to it again for this request.
   */
  size: number | undefined;
  /** Set when `size` came from halving: told to the caller once the request was served (embed-with-adapter.ts). */
  halved = false;
  /** The body of each call that served, in bytes. */
  private readonly servedBytes: number[] = [];
  /** The smallest body refused as too large (a 413 stating no cap), in bytes. */
  private refusedBytes = Number.POSITIVE_INFINITY;

  constructor(inputs: number) {
    this.vectors = new Array<number[] | undefined>(inputs).fill(undefined);
  }

  /**
   * A new try of the upstream begins: what an earlier try still has in flight is not added once
   * this one started (it may be sending the same inputs), so no input is billed twice.
   */
  begin(): number {
    return ++this.tries;
  }

  /** The indices of the inputs not served yet, in input order. */
  missing(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.vectors.length; i++) if (this.vectors[i] === undefined) out.push(i);
    return out;
  }

  /**
   * One call of try `attempt`, whose body was `bytes` long, served `indices` (in the order sent)
   * with `answer` (one vector each, in that order); ignored when a later try has begun since.
   */
  add(attempt: number, indices: readonly number[], answer: ParsedEmbeddingResponse, bytes: number): void {
    if (attempt !== this.tries) return;
    this.servedBytes.push(bytes);
    indices.forEach((i, k) => {
      if (this.vectors[i] === undefined) this.served++;
      this.vectors[i] = answer.vectors[k];
    });
    this.usages.push(answer.usage);
  }

  /** A call whose body was `bytes` long was refused as too large, stating no cap. */
  refused(bytes: number): void {
    this.refusedBytes = Math.min(this.refusedBytes, bytes);
  }

  /**
   * The largest body the upstream served that is smaller than every body it refused: what this
   * request proved fits its body limit. Undefined when none is (a limit not in bytes).
   */
  provenBodyBytes(): number | undefined {
    let most: number | undefined;
    for (const b of this.servedBytes) if (b < this.refusedBytes && (most === undefined || b > most)) most = b;
    return most;
  }

  get complete(): boolean {
    return this.served === this.vectors.length;
  }

  /**
   * The vectors in input order and the calls' usage summed. A usage field is summed only when
   * every call reported it; one missing from any call is left out, so the caller computes it for
   * the whole request instead of mixing sources.
   */
  result(): ParsedEmbeddingResponse {
    if (!this.complete) throw new Error(`${this.vectors.length - this.served} inputs were not served`);
    return { vectors: this.vectors as number[][], usage: sumUsage(this.usages) };
  }
}

function sumUsage(list: (UpstreamEmbeddingUsage | undefined)[]): UpstreamEmbeddingUsage | undefined {
  const out: UpstreamEmbeddingUsage = {};
  for (const key of ['textTokens', 'imagePixels', 'totalTokens'] as const) {
    if (list.length > 0 && list.every((u) => u?.[key] !== undefined)) {
      out[key] = list.reduce((sum, u) => sum + (u![key] as number), 0);
    }
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
