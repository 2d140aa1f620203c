import { describe, expect, it } from 'vitest';
import { resolvedRequest } from '../../../test/helpers/embedding-requests.js';
import { UpstreamError } from '../errors.js';
import type { ImageData } from '../images/image-data.js';
import {
  adapterCanServe,
  adapterRejection,
  type EmbeddingAdapter,
  upstreamUrl,
} from './embedding-adapter.js';

const img: ImageData = {
  format: 'gif',
  mime: 'image/gif',
  width: 1,
  height: 1,
  pixels: 1,
  bytes: Buffer.alloc(0),
};
const adapter = (accepts: ('text' | 'image')[], fusesParts: boolean): EmbeddingAdapter => ({
  kind: 'fake',
  accepts: new Set(accepts),
  fusesParts,
  maxBatch: 10,
  parameters: [],
  buildRequest: () => ({ method: 'POST', url: '', headers: {}, body: '' }),
  parseResponse: () => ({ vectors: [] }),
  classifyError: () => new UpstreamError('bad_request', 'x'),
});

describe('adapterRejection', () => {
  const textOnly = resolvedRequest([
    [
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b' },
    ],
  ]);
  const withImage = resolvedRequest([
    [{ type: 'text', text: 'a' }],
    [
      { type: 'text', text: 'caption' },
      { type: 'image', image: img },
    ],
  ]);

  it('never lets images reach a text-only adapter', () => {
    expect(adapterCanServe(adapter(['text'], true), textOnly)).toBe(true);
    expect(adapterRejection(adapter(['text'], true), withImage)).toMatch(/cannot embed images/);
    expect(adapterCanServe(adapter(['text', 'image'], true), withImage)).toBe(true);
  });

  it('refuses mixed inputs on adapters that embed parts separately', () => {
    expect(adapterRejection(adapter(['text', 'image'], false), withImage)).toMatch(/^inputs\[1\]/);
    expect(adapterCanServe(adapter(['text', 'image'], false), textOnly)).toBe(true);
    expect(
      adapterCanServe(adapter(['text', 'image'], false), resolvedRequest([[{ type: 'image', image: img }]])),
    ).toBe(true);
  });
});

describe('upstreamUrl', () => {
  it('does not double the version segment', () => {
    expect(upstreamUrl('https://api.voyageai.com', '/v1/embeddings')).toBe(
      'https://api.voyageai.com/v1/embeddings',
    );
    expect(upstreamUrl('https://api.voyageai.com/v1/', '/v1/embeddings')).toBe(
      'https://api.voyageai.com/v1/embeddings',
    );
    expect(upstreamUrl('http://h:8000/v1', '/v2/embed')).toBe('http://h:8000/v1/v2/embed');
    expect(upstreamUrl('https://api.cohere.com/v2', '/v2/embed')).toBe('https://api.cohere.com/v2/embed');
  });
});
