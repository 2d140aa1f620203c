import { describe, expect, it } from 'vitest';
import type { EmbeddingResult } from '../../src/gateway/embeddings/embedding-request.js';
import { GatewayError } from '../../src/gateway/errors.js';
import { decodeEmbeddingsRequest, encodeEmbeddingsResponse } from '../../src/http/wire/openai-embeddings.js';
import { decodeVoyageMultimodalRequest, encodeVoyageMultimodalResponse } from '../../src/http/wire/voyage.js';

function rejection(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(400);
    return err as GatewayError;
  }
  throw new Error('expected a 400');
}

const text = (t: string) => ({ content: [{ type: 'text', text: t }] });

describe('decodeVoyageMultimodalRequest', () => {
  it('decodes interleaved parts and the Python SDK body with explicit nulls', () => {
    const req = decodeVoyageMultimodalRequest({
      inputs: [
        {
          content: [
            { type: 'text', text: 'a cat' },
            { type: 'image_url', image_url: 'https://img.example/cat.png' },
            { type: 'image_base64', image_base64: 'data:image/png;base64,iVBORw0KGgo=' },
          ],
        },
      ],
      model: 'voyage-multimodal-3',
      input_type: null,
      truncation: true,
      output_encoding: null,
      encoding_format: 'base64',
      output_dimension: null,
      output_dtype: null,
    });
    expect(req).toEqual({
      inputs: [
        [
          { type: 'text', text: 'a cat' },
          { type: 'image', source: { kind: 'url', url: 'https://img.example/cat.png' } },
          { type: 'image', source: { kind: 'data_url', dataUrl: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      ],
      model: 'voyage-multimodal-3',
      inputType: null,
      truncation: true,
      encoding: 'base64',
      dimensions: null,
      dtype: null,
      user: null,
    });
  });

  it('defaults: no model, truncation true, float', () => {
    const req = decodeVoyageMultimodalRequest({
      inputs: [text('x')],
      output_encoding: 'base64',
      input_type: 'query',
    });
    expect(req).toMatchObject({ model: null, truncation: true, encoding: 'base64', inputType: 'query' });
    expect(
      decodeVoyageMultimodalRequest({ inputs: [text('x')], truncation: false, output_dimension: 512 }),
    ).toMatchObject({
      truncation: false,
      encoding: 'float',
      dimensions: 512,
    });
  });

  it.each([
    [{}, /^inputs is required$/, 'inputs'],
    [{ inputs: [] }, /^inputs must not be empty$/, 'inputs'],
    [
      { inputs: Array.from({ length: 1001 }, () => text('x')) },
      /1001 items, more than the limit of 1000/,
      'inputs',
    ],
    [
      { inputs: [text('a'), { content: [] }] },
      /^inputs\[1\]\.content: must not be empty$/,
      'inputs[1].content',
    ],
    [{ inputs: [text('a'), {}] }, /^inputs\[1\]\.content: must be an array/, 'inputs[1].content'],
    [
      {
        inputs: [
          text('a'),
          text('b'),
          text('c'),
          {
            content: [
              { type: 'text', text: 'x' },
              { type: 'video', video: 'v' },
            ],
          },
        ],
      },
      /^inputs\[3\]\.content\[1\]: unsupported part type "video"/,
      'inputs[3].content[1].type',
    ],
    [
      { inputs: [{ content: [{ type: 'image_base64', image_base64: 'iVBORw0KGgo=' }] }] },
      /^inputs\[0\]\.content\[0\]\.image_base64: must be a data URL/,
      'inputs[0].content[0].image_base64',
    ],
    [
      { inputs: [{ content: [{ type: 'image_url', image_url: '' }] }] },
      /image_url: must be a non-empty URL/,
      'inputs[0].content[0].image_url',
    ],
    [
      { inputs: [{ content: [{ text: 'no type' }] }] },
      /^inputs\[0\]\.content\[0\]: missing part type/,
      'inputs[0].content[0].type',
    ],
    [
      { inputs: [{ content: [{ type: 'text', text: 5 }] }] },
      /text: must be a string/,
      'inputs[0].content[0].text',
    ],
    [
      { inputs: [text('a')], input_type: 'doc' },
      /input_type must be one of "query", "document"/,
      'input_type',
    ],
    [{ inputs: [text('a')], output_dtype: 'int4' }, /output_dtype must be one of/, 'output_dtype'],
    [
      { inputs: [text('a')], output_dimension: 0 },
      /output_dimension must be a positive integer/,
      'output_dimension',
    ],
    [{ inputs: [text('a')], truncation: 'yes' }, /truncation must be true or false/, 'truncation'],
    [{ inputs: [text('a')], model: 7 }, /model must be a non-empty string/, 'model'],
  ])('rejects %j', (body, message, param) => {
    const err = rejection(() => decodeVoyageMultimodalRequest(body));
    expect(err.message).toMatch(message);
    expect(err.param).toBe(param);
  });

  it('takes an image_base64 data URL with parameters (RFC 2397), as image_url does', () => {
    const url = 'data:image/png;charset=binary;base64,iVBORw0KGgo=';
    const req = decodeVoyageMultimodalRequest({
      inputs: [{ content: [{ type: 'image_base64', image_base64: url }] }],
    });
    expect(req.inputs[0]).toEqual([{ type: 'image', source: { kind: 'data_url', dataUrl: url } }]);
  });

  it('takes a data URL as image_url whatever the case of its scheme, as image_base64 does', () => {
    const url = 'Data:image/png;base64,iVBORw0KGgo=';
    for (const part of [
      { type: 'image_url', image_url: url },
      { type: 'image_url', image_url: { url: url.toUpperCase().replace('IVBORW0KGGO=', 'iVBORw0KGgo=') } },
      { type: 'image_base64', image_base64: url },
    ]) {
      const req = decodeVoyageMultimodalRequest({ inputs: [{ content: [part] }] });
      expect(req.inputs[0]?.[0], JSON.stringify(part)).toMatchObject({
        type: 'image',
        source: { kind: 'data_url' },
      });
    }
  });

  it('rejects a body that is not an object', () => {
    expect(rejection(() => decodeVoyageMultimodalRequest([1])).message).toMatch(/JSON object/);
  });
});

describe('decodeEmbeddingsRequest', () => {
  it('accepts string, string[], token arrays, and both OpenAI and Voyage fields', () => {
    expect(decodeEmbeddingsRequest({ input: 'hi', model: 'm' }).inputs).toEqual([
      [{ type: 'text', text: 'hi' }],
    ]);
    expect(decodeEmbeddingsRequest({ input: ['a', 'b'] }).inputs).toHaveLength(2);
    expect(decodeEmbeddingsRequest({ input: [1, 2, 3] }).inputs).toEqual([
      [{ type: 'tokens', tokens: [1, 2, 3] }],
    ]);
    expect(decodeEmbeddingsRequest({ input: [[1], [2, 3]] }).inputs).toEqual([
      [{ type: 'tokens', tokens: [1] }],
      [{ type: 'tokens', tokens: [2, 3] }],
    ]);
    expect(
      decodeEmbeddingsRequest({ input: 'x', encoding_format: 'base64', dimensions: 256, user: 'u1' }),
    ).toMatchObject({
      encoding: 'base64',
      dimensions: 256,
      user: 'u1',
    });
    expect(
      decodeEmbeddingsRequest({
        input: ['x'],
        model: 'voyage-3.5',
        input_type: 'document',
        truncation: null,
        output_dimension: 1024,
        output_dtype: 'int8',
        encoding_format: null,
      }),
    ).toMatchObject({
      inputType: 'document',
      truncation: true,
      dimensions: 1024,
      dtype: 'int8',
      encoding: 'float',
    });
  });

  it.each([
    [{}, /input is required/, 'input'],
    [{ input: [] }, /input must not be empty/, 'input'],
    [{ input: ['a', ''] }, /^input\[1\]: must not be an empty string/, 'input[1]'],
    [{ input: ['a', { text: 'x' }] }, /^input\[1\]: must be a string or an array of token ids/, 'input[1]'],
    [{ input: [[1, -2]] }, /^input\[0\]: token ids must be non-negative integers/, 'input[0]'],
    [{ input: ['a', [1]] }, /must not mix strings and token arrays/, 'input'],
    [{ input: 'x', encoding_format: 'hex' }, /encoding_format must be one of/, 'encoding_format'],
    [{ input: 'x', dimensions: 1.5 }, /dimensions must be a positive integer/, 'dimensions'],
  ])('rejects %j', (body, message, param) => {
    const err = rejection(() => decodeEmbeddingsRequest(body));
    expect(err.message).toMatch(message);
    expect(err.param).toBe(param);
  });
});

describe('encoders', () => {
  const result: EmbeddingResult = {
    model: 'voyage-multimodal-3',
    vectors: [
      [0.5, -0.25],
      [1, 2],
    ],
    usage: { textTokens: 3, imagePixels: 1130, videoPixels: 0, totalTokens: 6, estimated: false },
    dtype: 'float',
  };

  it('writes the Voyage list with all four usage keys', () => {
    expect(encodeVoyageMultimodalResponse(result, 'float')).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', embedding: [0.5, -0.25], index: 0 },
        { object: 'embedding', embedding: [1, 2], index: 1 },
      ],
      model: 'voyage-multimodal-3',
      usage: { text_tokens: 3, image_pixels: 1130, video_pixels: 0, total_tokens: 6 },
    });
    const b64 = encodeVoyageMultimodalResponse(result, 'base64').data[0].embedding as string;
    const buf = Buffer.from(b64, 'base64');
    expect(Array.from(new Float32Array(buf.buffer, buf.byteOffset, 2))).toEqual([0.5, -0.25]);
  });

  it('writes the OpenAI list', () => {
    const out = encodeEmbeddingsResponse(result, 'float');
    expect(out.usage).toEqual({ prompt_tokens: 6, total_tokens: 6 });
    expect(out.data[1]).toEqual({ object: 'embedding', embedding: [1, 2], index: 1 });
    expect(typeof encodeEmbeddingsResponse(result, 'base64').data[0].embedding).toBe('string');
  });
});
