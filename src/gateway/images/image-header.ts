/**
 * Reads an image's format and dimensions from its header bytes only. Pixel accounting needs
 * width x height, and a full decode would let a small compressed bomb cost us memory and CPU.
 */
export type ImageFormat = 'png' | 'jpeg' | 'webp' | 'gif';

export interface ImageHeader {
  format: ImageFormat;
  mime: `image/${ImageFormat}`;
  width: number;
  height: number;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Format and dimensions, or null when the bytes are not a supported image with a sane header. */
export function sniffImageHeader(buf: Buffer): ImageHeader | null {
  const header = sniffRaw(buf);
  if (!header || header.width <= 0 || header.height <= 0) return null;
  return header;
}

/** Just the format from magic bytes; lets callers name an unsupported or truncated image precisely. */
export function sniffImageFormat(buf: Buffer): ImageFormat | null {
  if (buf.length >= 8 && buf.subarray(0, 8).equals(PNG_SIGNATURE)) return 'png';
  if (buf.length >= 3 && buf[0] === 0xff && buf[1] === 0xd8 && buf[2] === 0xff) return 'jpeg';
  if (buf.length >= 6 && (ascii(buf, 0, 6) === 'GIF87a' || ascii(buf, 0, 6) === 'GIF89a')) return 'gif';
  if (buf.length >= 12 && ascii(buf, 0, 4) === 'RIFF' && ascii(buf, 8, 4) === 'WEBP') return 'webp';
  return null;
}

function sniffRaw(buf: Buffer): ImageHeader | null {
  switch (sniffImageFormat(buf)) {
    case 'png':
      return png(buf);
    case 'jpeg':
      return jpeg(buf);
    case 'gif':
      return buf.length >= 10 ? make('gif', buf.readUInt16LE(6), buf.readUInt16LE(8)) : null;
    case 'webp':
      return webp(buf);
    default:
      return null;
  }
}

function make(format: ImageFormat, width: number, height: number): ImageHeader {
  return { format, mime: `image/${format}`, width, height };
}

function ascii(buf: Buffer, start: number, len: number): string {
  return buf.toString('latin1', start, start + len);
}

// PNG: the first chunk must be IHDR (length 13) holding big-endian width and height.
function png(buf: Buffer): ImageHeader | null {
  if (buf.length < 24 || ascii(buf, 12, 4) !== 'IHDR') return null;
  return make('png', buf.readUInt32BE(16), buf.readUInt32BE(20));
}

// SOF markers carry the frame size; DHT (C4), JPG (C8) and DAC (CC) share the C0..CF range
// but are not frames.
const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

function jpeg(buf: Buffer): ImageHeader | null {
  let i = 2;
  while (i + 4 <= buf.length) {
    if (buf[i] !== 0xff) return null;
    const marker = buf[i + 1];
    // Fill bytes (FF FF ...) may pad between segments.
    if (marker === 0xff) {
      i += 1;
      continue;
    }
    // Standalone markers have no length field.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2;
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return null; // end of image / scan before any frame
    const len = buf.readUInt16BE(i + 2);
    if (len < 2) return null;
    if (SOF.has(marker)) {
      if (i + 9 > buf.length) return null;
      return make('jpeg', buf.readUInt16BE(i + 7), buf.readUInt16BE(i + 5));
    }
    i += 2 + len;
  }
  return null;
}

function webp(buf: Buffer): ImageHeader | null {
  if (buf.length < 25) return null;
  const chunk = ascii(buf, 12, 4);
  if (chunk === 'VP8 ') {
    if (buf.length < 30) return null;
    // Lossy: key frame start code 9D 01 2A, then 14-bit width and height (top 2 bits are scale).
    if (buf[23] !== 0x9d || buf[24] !== 0x01 || buf[25] !== 0x2a) return null;
    return make('webp', buf.readUInt16LE(26) & 0x3fff, buf.readUInt16LE(28) & 0x3fff);
  }
  if (chunk === 'VP8L') {
    // Lossless: signature 0x2F, then 14-bit (width-1) and 14-bit (height-1), little-endian bit packed.
    if (buf[20] !== 0x2f) return null;
    const bits = buf.readUInt32LE(21);
    return make('webp', (bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (chunk === 'VP8X') {
    if (buf.length < 30) return null;
    // Extended: 24-bit (canvas width-1) and (canvas height-1) after 4 bytes of flags.
    return make('webp', buf.readUIntLE(24, 3) + 1, buf.readUIntLE(27, 3) + 1);
  }
  return null;
}
