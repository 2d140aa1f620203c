import { describe, expect, it } from 'vitest';
import {
  makeGif,
  makeJpeg,
  makePng,
  makeWebpExtended,
  makeWebpLossless,
  makeWebpLossy,
} from '../../../test/embeddings/test-images.js';
import { sniffImageFormat, sniffImageHeader } from './image-header.js';

describe('sniffImageHeader', () => {
  it.each([
    ['png', makePng(7, 3), 7, 3],
    ['jpeg', makeJpeg(640, 480), 640, 480],
    ['jpeg', makeJpeg(33, 4097, 0xc2), 33, 4097],
    ['gif', makeGif(300, 2), 300, 2],
    ['webp', makeWebpLossy(1000, 16383), 1000, 16383],
    ['webp', makeWebpLossless(16384, 1), 16384, 1],
    ['webp', makeWebpExtended(20000, 800), 20000, 800],
  ])('reads %s dimensions from the header', (format, bytes, width, height) => {
    expect(sniffImageHeader(bytes)).toEqual({ format, mime: `image/${format}`, width, height });
  });

  it('skips JPEG segments that are not frames (DHT uses a C4 marker)', () => {
    const dht = Buffer.from([0xff, 0xc4, 0x00, 0x04, 0x00, 0x00]);
    const jpeg = makeJpeg(12, 34);
    const withDht = Buffer.concat([jpeg.subarray(0, 2), dht, jpeg.subarray(2)]);
    expect(sniffImageHeader(withDht)).toMatchObject({ width: 12, height: 34 });
  });

  it('rejects other formats, truncated headers and zero sizes', () => {
    expect(sniffImageFormat(Buffer.from('BM\0\0\0\0\0\0\0\0\0\0'))).toBeNull();
    expect(sniffImageHeader(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBeNull();
    expect(sniffImageHeader(makePng(5, 5).subarray(0, 20))).toBeNull();
    expect(sniffImageHeader(makeJpeg(5, 5).subarray(0, 30))).toBeNull();
    expect(sniffImageHeader(makeGif(0, 5))).toBeNull();
    expect(sniffImageHeader(Buffer.from([0xff, 0xd8, 0xff, 0xd9]))).toBeNull();
  });
});
