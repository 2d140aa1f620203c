import { describe, expect, it } from 'vitest';
import { resolvedRequest } from '../../../test/helpers/embedding-requests.js';
import { inputTokenWeights, TOKEN_HEADROOM } from './batch-tokens.js';
import type { ResolvedPart } from './embedding-request.js';
import { estimateEmbeddingUsage } from './embedding-usage.js';

const image = (width: number, height: number): ResolvedPart =>
  ({ type: 'image', image: { width, height, pixels: width * height } }) as unknown as ResolvedPart;

describe('inputTokenWeights', () => {
  const req = resolvedRequest([
    [{ type: 'text', text: 'hello world' }, image(56, 10)],
    [{ type: 'tokens', tokens: [1, 2, 3, 4] }],
    [image(1000, 1000)],
  ]);

  it('is undefined when the request estimate fits under the cap with the headroom', () => {
    const estimate = estimateEmbeddingUsage(req);
    expect(inputTokenWeights(req, { cap: Math.ceil(estimate.totalTokens * TOKEN_HEADROOM) }, estimate)).toBe(
      undefined,
    );
  });

  it('weighs each input: text, token ids and images (with the upstream minimum), plus headroom', () => {
    const w = inputTokenWeights(req, { cap: 10, minImagePixels: 50_000 })!;
    // 'hello world' is 2 o200k tokens; a 560-pixel image counts as 50,000 pixels (90 tokens).
    expect(w).toEqual([
      Math.ceil((2 + 90) * TOKEN_HEADROOM),
      Math.ceil(4 * TOKEN_HEADROOM),
      Math.ceil(Math.ceil(1_000_000 / 560) * TOKEN_HEADROOM),
    ]);
    // The minimum counts in the quick check too: without it the request would seem to fit.
    const estimate = estimateEmbeddingUsage(req);
    const cap = Math.ceil(estimate.totalTokens * TOKEN_HEADROOM) + 1;
    expect(inputTokenWeights(req, { cap }, estimate)).toBe(undefined);
    expect(inputTokenWeights(req, { cap, minImagePixels: 50_000 }, estimate)).toHaveLength(3);
  });

  it('a truncated request is cut by its text as sent, not by what the quota hold counts', () => {
    const long = resolvedRequest([
      [{ type: 'text', text: 'lorem ipsum '.repeat(200) }],
      [{ type: 'text', text: 'x' }],
    ]);
    const estimate = estimateEmbeddingUsage(long, { maxInputTokens: 10 });
    // The hold: the long input at the model's 10 tokens, the short one as it is.
    expect(estimate.textTokens).toBe(11);
    expect(estimate.uncutTextTokens).toBeGreaterThan(300);
    // A per-call cap the held figure fits but the text as sent does not: counted input by input.
    expect(inputTokenWeights(long, { cap: 100 }, estimate)).toHaveLength(2);
    // truncation off: the whole text is held.
    const whole = estimateEmbeddingUsage({ ...long, truncation: false }, { maxInputTokens: 10 });
    expect(whole.textTokens).toBe(estimate.uncutTextTokens);
    expect(whole.uncutTextTokens).toBeUndefined();
  });

  it('counts an image over the upstream maximum as the maximum (Voyage downsamples it)', () => {
    const photos = resolvedRequest([[image(4000, 3000)], [image(4000, 3000)], [image(500, 500)]]);
    const voyage = { minImagePixels: 50_000, maxImagePixels: 2_000_000 };
    const w = inputTokenWeights(photos, { cap: 10, ...voyage })!;
    // 2,000,000 pixels (3,572 tokens) each, not 12,000,000 (21,429).
    expect(w).toEqual([
      Math.ceil(3572 * TOKEN_HEADROOM),
      Math.ceil(3572 * TOKEN_HEADROOM),
      Math.ceil(Math.ceil(250_000 / 560) * TOKEN_HEADROOM),
    ]);
    // Two 12-megapixel photos fit one call of 10,000 tokens: the quick check clamps too, even
    // given an estimate made without the upstream's rule.
    const estimate = estimateEmbeddingUsage(photos);
    expect(estimate.totalTokens).toBeGreaterThan(40_000);
    expect(inputTokenWeights(photos, { cap: 10_000, ...voyage }, estimate)).toBe(undefined);
    expect(inputTokenWeights(photos, { cap: 10_000 }, estimate)).toHaveLength(3);
  });
});
