import { describe, expect, it } from 'vitest';
import { decodeFloat32Base64, encodeVectorBase64 } from './vector-codec.js';

describe('encodeVectorBase64', () => {
  it('writes float32 little-endian, exactly what the openai SDK decodes', () => {
    const v = [0.1, -2.5, 3.4028234663852886e38, 0, 1e-8];
    const b64 = encodeVectorBase64(v);
    // openai-node's toFloat32Array: Buffer.from(base64) viewed as a Float32Array (host order, LE on every target we run)
    const buf = Buffer.from(b64, 'base64');
    const openaiView = Array.from(new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4));
    expect(openaiView).toEqual(v.map((x) => Math.fround(x)));
    expect(decodeFloat32Base64(b64)).toEqual(openaiView);
    expect(buf[0]).toBe(0xcd); // 0.1f = 0x3DCCCCCD; little-endian puts the low byte first
  });

  it('writes one byte per value for quantized dtypes', () => {
    expect(Buffer.from(encodeVectorBase64([-128, -1, 0, 127], 'int8'), 'base64')).toEqual(
      Buffer.from([0x80, 0xff, 0, 0x7f]),
    );
    expect(Buffer.from(encodeVectorBase64([0, 200, 255], 'ubinary'), 'base64')).toEqual(
      Buffer.from([0, 200, 255]),
    );
  });
});
