import { type SampleOptions, sampledTokens, sampledTokensBySlot } from '../chat/tokens.js';
import type {
  EmbeddingUsage,
  ResolvedEmbeddingRequest,
  UpstreamEmbeddingUsage,
} from './embedding-request.js';

/**
 * Usage per decisions.md "Embeddings": image_pixels = sum of width x height, total_tokens =
 * text tokens + ceil(pixels / 560) per image, unless the upstream reports its own counts, which
 * win field by field.
 */
export const PIXELS_PER_TOKEN = 560;

export function imageTokens(pixels: number): number {
  return Math.ceil(pixels / PIXELS_PER_TOKEN);
}

/**
 * How an upstream bills one image's pixels: clamped to [min, max]. Voyage's multimodal models
 * bill an image as at least 50,000 and at most 2,000,000 pixels (a larger one is downsampled),
 * embeddings.md 1.4. No rule: width x height as it is.
 */
export interface ImagePixelRule {
  minImagePixels?: number;
  maxImagePixels?: number;
}

export function billedPixels(pixels: number, rule?: ImagePixelRule): number {
  const min = rule?.minImagePixels ?? 0;
  const max = rule?.maxImagePixels ?? Number.POSITIVE_INFINITY;
  return Math.min(max, Math.max(min, pixels));
}

/** The request's images as `rule` bills them: pixels, and tokens rounded up per image. */
export function billedImages(req: ResolvedEmbeddingRequest, rule?: ImagePixelRule) {
  let pixels = 0;
  let tokens = 0;
  for (const input of req.inputs)
    for (const p of input)
      if (p.type === 'image') {
        const billed = billedPixels(p.image.pixels, rule);
        pixels += billed;
        tokens += imageTokens(billed);
      }
  return { pixels, tokens };
}

/**
 * Our own figures for a resolved request, images as `rule` bills them (see `billedAs` for the
 * same request under another upstream's rule without counting the text again); use it to
 * reserve quota before the upstream call. An estimate: the o200k encoding (chat/tokenizer.ts), not the upstream model's own tokenizer
 * (Voyage, Cohere, Jina each have theirs); upstream counts replace it. The text is counted
 * exactly up to TOKENIZE_BUDGET_CHARS and sampled beyond (chat/tokens.ts `sampledTokens`), so a
 * batch of megabytes does not hold the event loop for seconds.
 *
 * With `maxInputTokens` (the model's context length) and `truncation` on, each input's text counts
 * at most that many tokens: the upstream cuts a longer one and bills what it read.
 */
export function estimateEmbeddingUsage(
  req: ResolvedEmbeddingRequest,
  o: SampleOptions & { maxInputTokens?: number | null } = {},
  rule?: ImagePixelRule,
): EmbeddingUsage {
  const cap = req.truncation && o.maxInputTokens ? o.maxInputTokens : undefined;
  const cut = cap === undefined ? undefined : truncatedTextTokens(req, cap, o);
  const textTokens = cut ? cut.textTokens : textTokensOf(req, o);
  const images = billedImages(req, rule);
  return {
    ...(cut && cut.uncut > cut.textTokens ? { uncutTextTokens: cut.uncut } : {}),
    textTokens,
    imagePixels: images.pixels,
    videoPixels: 0,
    totalTokens: textTokens + images.tokens,
    estimated: true,
  };
}

function textTokensOf(req: ResolvedEmbeddingRequest, o: SampleOptions): number {
  const texts: string[] = [];
  let given = 0; // inputs sent as token ids
  for (const input of req.inputs) {
    for (const p of input) {
      if (p.type === 'text') texts.push(p.text);
      else if (p.type === 'tokens') given += p.tokens.length;
    }
  }
  return given + sampledTokens(texts, o);
}

/** The text tokens input by input (one count, sampled as `sampledTokens` samples), each at most `cap`. */
function truncatedTextTokens(
  req: ResolvedEmbeddingRequest,
  cap: number,
  o: SampleOptions,
): { textTokens: number; uncut: number } {
  const texts: string[] = [];
  const slotOf: number[] = [];
  const given = new Array<number>(req.inputs.length).fill(0);
  req.inputs.forEach((input, i) => {
    for (const p of input) {
      if (p.type === 'text') {
        texts.push(p.text);
        slotOf.push(i);
      } else if (p.type === 'tokens') given[i]! += p.tokens.length;
    }
  });
  const { tokens } = sampledTokensBySlot(texts, slotOf, req.inputs.length, o);
  let textTokens = 0;
  let uncut = 0;
  for (let i = 0; i < req.inputs.length; i++) {
    textTokens += Math.min(cap, tokens[i]! + given[i]!);
    uncut += tokens[i]! + given[i]!;
  }
  return { textTokens, uncut };
}

/** `estimate` of `req` (its text counted once) with the images as `rule` bills them. */
export function billedAs(
  estimate: EmbeddingUsage,
  req: ResolvedEmbeddingRequest,
  rule: ImagePixelRule,
): EmbeddingUsage {
  const images = billedImages(req, rule);
  return { ...estimate, imagePixels: images.pixels, totalTokens: estimate.textTokens + images.tokens };
}

/**
 * Final usage: the upstream's fields where reported, ours elsewhere. `ours` is the estimate
 * made for the reservation, when there is one (the text is not counted twice).
 */
export function finalizeEmbeddingUsage(
  req: ResolvedEmbeddingRequest,
  upstream: UpstreamEmbeddingUsage | undefined,
  ours: EmbeddingUsage = estimateEmbeddingUsage(req),
): EmbeddingUsage {
  const u = upstream ?? {};
  const textTokens = u.textTokens ?? ours.textTokens;
  const imagePixels = u.imagePixels ?? ours.imagePixels;
  const totalTokens = u.totalTokens ?? textTokens + (ours.totalTokens - ours.textTokens);
  const hasText = req.inputs.some((i) => i.some((p) => p.type !== 'image'));
  const estimated = u.totalTokens === undefined || (hasText && u.textTokens === undefined);
  return { textTokens, imagePixels, videoPixels: 0, totalTokens, estimated };
}

/**
 * USD per unit, like the model registry's pricing (`prompt` is per token). `perPixel` prices
 * image pixels separately when the registry has a pixel price.
 */
export interface EmbeddingPrice {
  perToken: number;
  perPixel?: number;
}

/**
 * Cost in USD. With a pixel price, text tokens and pixels are priced separately; without one,
 * images are priced through their token equivalent inside total_tokens.
 */
export function embeddingCost(usage: EmbeddingUsage, price: EmbeddingPrice): number {
  if (price.perPixel !== undefined)
    return usage.textTokens * price.perToken + usage.imagePixels * price.perPixel;
  return usage.totalTokens * price.perToken;
}
