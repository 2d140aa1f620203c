import { type ImageFormat, sniffImageFormat, sniffImageHeader } from './image-header.js';

/**
 * A validated image held in memory: its bytes, where they came from, and the header facts
 * used for pixel accounting. Upstreams always receive these bytes (as base64), never the
 * client's URL, so no upstream fetches on a client's behalf.
 */
export interface ImageData {
  format: ImageFormat;
  mime: `image/${ImageFormat}`;
  width: number;
  height: number;
  pixels: number;
  bytes: Buffer;
}

export interface ImageLimits {
  maxPixels: number;
  maxBytes: number;
}

/** decisions.md "Embeddings": at most 16 million pixels and 20 MB per image. */
export const DEFAULT_IMAGE_LIMITS: ImageLimits = { maxPixels: 16_000_000, maxBytes: 20 * 1024 * 1024 };

/** A client-caused image problem; callers prefix the input position and turn it into a 400. */
export class ImageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImageError';
  }
}

const SUPPORTED_MIME = new Set(['image/png', 'image/jpeg', 'image/jpg', 'image/webp', 'image/gif']);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Bytes of a `data:image/<type>;base64,<data>` URL; the declared type must be a supported one. */
export function decodeImageDataUrl(dataUrl: string, limits: ImageLimits = DEFAULT_IMAGE_LIMITS): Buffer {
  const comma = dataUrl.indexOf(',');
  const meta = comma < 0 ? '' : dataUrl.slice(0, comma);
  const m = /^data:([^;,]+)((?:;[^;,]*)*);base64$/i.exec(meta);
  if (!m) throw new ImageError('image_base64 must be a data URL of the form data:image/<type>;base64,<data>');
  const mime = m[1].toLowerCase();
  if (!SUPPORTED_MIME.has(mime)) {
    throw new ImageError(`unsupported image media type "${mime}" (supported: PNG, JPEG, WEBP, GIF)`);
  }
  return decodeBase64(dataUrl.slice(comma + 1), limits);
}

/** Strict base64 decode; rejects before decoding when the result would exceed the byte cap. */
export function decodeBase64(data: string, limits: ImageLimits = DEFAULT_IMAGE_LIMITS): Buffer {
  const clean = data.replace(/\s+/g, '');
  if (clean.length === 0) throw new ImageError('image data is empty');
  if (Math.floor((clean.length * 3) / 4) - padding(clean) > limits.maxBytes) {
    throw new ImageError(`image is larger than ${limits.maxBytes} bytes`);
  }
  // Buffer.from silently skips garbage, so check the alphabet ourselves.
  if (clean.length % 4 === 1 || !BASE64.test(clean)) throw new ImageError('image data is not valid base64');
  return Buffer.from(clean, 'base64');
}

function padding(s: string): number {
  return s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
}

/** Checks format, header and limits; throws ImageError with a message fit for a client. */
export function inspectImage(bytes: Buffer, limits: ImageLimits = DEFAULT_IMAGE_LIMITS): ImageData {
  if (bytes.length > limits.maxBytes) throw new ImageError(`image is larger than ${limits.maxBytes} bytes`);
  const format = sniffImageFormat(bytes);
  if (!format) throw new ImageError('unsupported image format (supported: PNG, JPEG, WEBP, GIF)');
  const header = sniffImageHeader(bytes);
  if (!header) throw new ImageError(`malformed ${format.toUpperCase()} image: could not read its dimensions`);
  const pixels = header.width * header.height;
  if (pixels > limits.maxPixels) {
    throw new ImageError(
      `image has ${header.width}x${header.height} = ${pixels} pixels, more than the limit of ${limits.maxPixels}`,
    );
  }
  return { ...header, pixels, bytes };
}

export function imageToDataUrl(image: ImageData): string {
  return `data:${image.mime};base64,${image.bytes.toString('base64')}`;
}
