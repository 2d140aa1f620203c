import { describe, expect, it } from 'vitest';
import { dataUrl, makeGif, makeJpeg, makePng } from '../../../test/embeddings/test-images.js';
import { decodeImageDataUrl, ImageError, imageToDataUrl, inspectImage } from './image-data.js';

describe('decodeImageDataUrl + inspectImage', () => {
  it('decodes a PNG data URL and measures it', () => {
    const png = makePng(4, 5);
    const img = inspectImage(decodeImageDataUrl(dataUrl('image/png', png)));
    expect(img).toMatchObject({ format: 'png', width: 4, height: 5, pixels: 20 });
    expect(img.bytes.equals(png)).toBe(true);
    expect(imageToDataUrl(img)).toBe(dataUrl('image/png', png));
  });

  it('rejects non-data URLs, unsupported media types and bad base64', () => {
    expect(() => decodeImageDataUrl('https://example.com/a.png')).toThrow(/data URL/);
    expect(() => decodeImageDataUrl('data:image/png,abc')).toThrow(/data URL/);
    expect(() => decodeImageDataUrl('data:image/bmp;base64,Qk0=')).toThrow(
      /unsupported image media type "image\/bmp"/,
    );
    expect(() => decodeImageDataUrl('data:image/png;base64,@@@@')).toThrow(/not valid base64/);
    expect(() => decodeImageDataUrl('data:image/png;base64,')).toThrow(/empty/);
  });

  it('enforces pixel and byte limits and the format list', () => {
    expect(() => inspectImage(makeGif(4001, 4000))).toThrow(
      /16004000 pixels, more than the limit of 16000000/,
    );
    expect(inspectImage(makeGif(4000, 4000)).pixels).toBe(16_000_000);
    expect(() => inspectImage(makeJpeg(10, 10), { maxPixels: 1e9, maxBytes: 20 })).toThrow(
      /larger than 20 bytes/,
    );
    expect(() =>
      decodeImageDataUrl(dataUrl('image/png', Buffer.alloc(300)), { maxPixels: 1e9, maxBytes: 200 }),
    ).toThrow(/larger than 200 bytes/);
    expect(() => inspectImage(Buffer.from('BM not a supported image'))).toThrow(ImageError);
    expect(() => inspectImage(Buffer.from('BM not a supported image'))).toThrow(/unsupported image format/);
  });
});
