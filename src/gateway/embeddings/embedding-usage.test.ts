import { encode } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { resolvedRequest } from '../../../test/helpers/embedding-requests.js';
import type { ImageData } from '../images/image-data.js';
import {
  billedAs,
  billedPixels,
  embeddingCost,
  estimateEmbeddingUsage,
  finalizeEmbeddingUsage,
} from './embedding-usage.js';

const image = (width: number, height: number): ImageData => ({
  format: 'png',
  mime: 'image/png',
  width,
  height,
  pixels: width * height,
  bytes: Buffer.alloc(0),
});

describe('estimateEmbeddingUsage', () => {
  it('sums pixels and rounds image tokens up per image', () => {
    const text = 'A photo of a cat sitting on a <|endoftext|> windowsill.';
    const r = resolvedRequest([
      [
        { type: 'text', text },
        { type: 'image', image: image(10, 57) },
      ], // 570 px -> 2 tokens
      [{ type: 'image', image: image(560, 1) }], // exactly 1 token
      [{ type: 'tokens', tokens: [1, 2, 3] }],
    ]);
    const textTokens = encode(text, { disallowedSpecial: new Set() }).length + 3;
    expect(estimateEmbeddingUsage(r)).toEqual({
      textTokens,
      imagePixels: 1130,
      videoPixels: 0,
      totalTokens: textTokens + 3,
      estimated: true,
    });
  });
});

describe('images as the upstream bills them', () => {
  const voyage = { minImagePixels: 50_000, maxImagePixels: 2_000_000 };

  it('clamps each image to the upstream minimum and maximum', () => {
    expect(billedPixels(4000 * 3000, voyage)).toBe(2_000_000);
    expect(billedPixels(40 * 30, voyage)).toBe(50_000);
    expect(billedPixels(800 * 600, voyage)).toBe(480_000);
    expect(billedPixels(4000 * 3000)).toBe(12_000_000);
    expect(billedPixels(4000 * 3000, { minImagePixels: 50_000 })).toBe(12_000_000);
  });

  it('estimates pixels and tokens per image from the clamped figure, the text once', () => {
    const r = resolvedRequest([
      [
        { type: 'text', text: 'a photo' },
        { type: 'image', image: image(4000, 3000) },
      ],
      [{ type: 'image', image: image(40, 30) }],
    ]);
    const raw = estimateEmbeddingUsage(r);
    expect(raw).toMatchObject({ imagePixels: 12_001_200, totalTokens: raw.textTokens + 21_429 + 3 });
    const clamped = { imagePixels: 2_050_000, totalTokens: raw.textTokens + 3572 + 90 };
    expect(estimateEmbeddingUsage(r, {}, voyage)).toMatchObject(clamped);
    expect(billedAs(raw, r, voyage)).toEqual({ ...raw, ...clamped });
    // Our figures fill in only what the upstream did not report; what it reports passes through.
    expect(finalizeEmbeddingUsage(r, undefined, billedAs(raw, r, voyage))).toMatchObject(clamped);
    expect(
      finalizeEmbeddingUsage(r, { imagePixels: 12_001_200, totalTokens: 21_500 }, billedAs(raw, r, voyage)),
    ).toMatchObject({ imagePixels: 12_001_200, totalTokens: 21_500 });
  });
});

describe('finalizeEmbeddingUsage', () => {
  const r = resolvedRequest([
    [
      { type: 'text', text: 'hello world' },
      { type: 'image', image: image(100, 100) },
    ],
  ]);

  it('lets upstream counts win field by field', () => {
    expect(finalizeEmbeddingUsage(r, { textTokens: 7, imagePixels: 50_000, totalTokens: 99 })).toEqual({
      textTokens: 7,
      imagePixels: 50_000,
      videoPixels: 0,
      totalTokens: 99,
      estimated: false,
    });
    // Text reported, total not: total is their text plus our image tokens (ceil(10000/560) = 18).
    expect(finalizeEmbeddingUsage(r, { textTokens: 7 })).toMatchObject({
      textTokens: 7,
      totalTokens: 25,
      estimated: true,
    });
  });

  it('falls back to our own figures', () => {
    expect(finalizeEmbeddingUsage(r, undefined)).toEqual(estimateEmbeddingUsage(r));
  });
});

describe('embeddingCost', () => {
  const usage = {
    textTokens: 1000,
    imagePixels: 2_000_000,
    videoPixels: 0,
    totalTokens: 4572,
    estimated: false,
  };
  it('prices tokens, or tokens and pixels separately', () => {
    expect(embeddingCost(usage, { perToken: 0.12e-6 })).toBeCloseTo(4572 * 0.12e-6, 15);
    expect(embeddingCost(usage, { perToken: 0.12e-6, perPixel: 0.6e-9 })).toBeCloseTo(
      1000 * 0.12e-6 + 2_000_000 * 0.6e-9,
      15,
    );
  });
});
