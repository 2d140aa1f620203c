import { type SampleOptions, sampledTokensBySlot } from '../chat/tokens.js';
import type { EmbeddingUsage, ResolvedEmbeddingRequest } from './embedding-request.js';
import { billedImages, billedPixels, type ImagePixelRule, imageTokens } from './embedding-usage.js';

/**
 * Token weights for cutting an upstream call under a per-request token cap (Voyage 120K-1M by
 * model, OpenAI 300K). Our figures are estimates: the o200k tokenizer, not the upstream's
 * (they differ by a few percent, more for some scripts), and a sample beyond 128 K characters
 * (chat/tokens.ts). So a batch is kept to the cap divided by TOKEN_HEADROOM: an upstream refusing
 * a valid request as too large is worse than one more call.
 */
export const TOKEN_HEADROOM = 1.25;

/**
 * The upstream's cap, and how it counts an image's pixels (Voyage: at least 50,000 and at most
 * 2,000,000, a larger image being downsampled).
 */
export interface BatchTokenRule extends ImagePixelRule {
  /** Tokens one upstream call may carry in all. */
  cap: number;
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
  if (estimate) {
    // The estimate's text, and its images counted again under this upstream's rule (whatever
    // rule the estimate was made with).
    const bound = (estimate.uncutTextTokens ?? estimate.textTokens) + billedImages(req, rule).tokens;
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
      else fixed[i] += imageTokens(billedPixels(p.image.pixels, rule));
    }
  });
  const { tokens } = sampledTokensBySlot(texts, slotOf, req.inputs.length, o);
  return fixed.map((n, i) => Math.ceil((n + tokens[i]!) * TOKEN_HEADROOM));
}
