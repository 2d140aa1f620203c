import { type SampleOptions, sampledTokensBySlot } from '../chat/tokens.js';
import type { EmbeddingUsage, ResolvedEmbeddingRequest } from './embedding-request.js';
import { imageTokens } from './embedding-usage.js';

/**
 * Token weights for cutting an upstream call under a per-request token cap (Voyage 120K-1M by
 * model, OpenAI 300K). Our figures are estimates: the o200k tokenizer, not the upstream's
 * (they differ by a few percent, more for some scripts), and a sample beyond 128 K characters
 * (chat/tokens.ts). So a batch is kept to the cap divided by TOKEN_HEADROOM: an upstream refusing
 * a valid request as too large is worse than one more call.
 */
export const TOKEN_HEADROOM = 1.25;

export interface BatchTokenRule {
  /** Tokens one upstream call may carry in all. */
  cap: number;
  /** Pixels an image counts as at least (Voyage bills small images as 50,000). */
  minImagePixels?: number;
}

/**
 * Each input's estimated tokens (with the headroom), or undefined when the whole request fits in
 * one call anyway: then `estimate` (the request's own, made for the quota reservation) decides
 * at the cost of one pass over the images, and nothing is counted again. Only a request near
 * the cap has its inputs counted one by one, by one `sampledTokensBySlot` over all its text.
 */
export function inputTokenWeights(
  req: ResolvedEmbeddingRequest,
  rule: BatchTokenRule,
  estimate?: EmbeddingUsage,
  o?: SampleOptions,
): number[] | undefined {
  const minImageTokens = rule.minImagePixels ? imageTokens(rule.minImagePixels) : 0;
  if (estimate) {
    let bound = estimate.totalTokens;
    if (minImageTokens > 0)
      for (const input of req.inputs)
        for (const p of input)
          if (p.type === 'image') bound += Math.max(0, minImageTokens - imageTokens(p.image.pixels));
    if (bound * TOKEN_HEADROOM <= rule.cap) return undefined;
  }
  const texts: string[] = [];
  const slotOf: number[] = [];
  const fixed = new Array<number>(req.inputs.length).fill(0);
  req.inputs.forEach((input, i) => {
    for (const p of input) {
      if (p.type === 'text') {
        if (p.text.length === 0) continue;
        texts.push(p.text);
        slotOf.push(i);
      } else if (p.type === 'tokens') fixed[i] += p.tokens.length;
      else fixed[i] += Math.max(minImageTokens, imageTokens(p.image.pixels));
    }
  });
  const { tokens } = sampledTokensBySlot(texts, slotOf, req.inputs.length, o);
  return fixed.map((n, i) => Math.ceil((n + tokens[i]!) * TOKEN_HEADROOM));
}
