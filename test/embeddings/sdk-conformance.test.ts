import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VoyageAIClient, VoyageAIError } from 'voyageai';
import { countTextTokens } from '../../src/gateway/chat/tokens.js';
import { type EmbeddingSend, embedWithAdapter } from '../../src/gateway/embeddings/embed-with-adapter.js';
import type { EmbeddingRequest } from '../../src/gateway/embeddings/embedding-request.js';
import { finalizeEmbeddingUsage } from '../../src/gateway/embeddings/embedding-usage.js';
import { resolveImages } from '../../src/gateway/embeddings/resolve-images.js';
import { createSafeFetcher, type Resolver } from '../../src/gateway/images/safe-fetch.js';
import { UpstreamClient } from '../../src/gateway/upstream/upstream-client.js';
import { errorHandler } from '../../src/http/error-handler.js';
import { decodeEmbeddingsRequest, encodeEmbeddingsResponse } from '../../src/http/wire/openai-embeddings.js';
import { decodeVoyageMultimodalRequest, encodeVoyageMultimodalResponse } from '../../src/http/wire/voyage.js';
import { selectEmbeddingCandidates } from '../../src/providers/embedding-registry.js';
import { type FakeUpstream, fixture, startFakeUpstream } from './fake-embedding-upstream.js';
import { dataUrl, makeJpeg, makePng, makeWebpLossless } from './test-images.js';

/**
 * The official SDKs against a listening server that runs this package's pipeline (decode,
 * resolve images, pick an adapter, call a fake upstream, compute usage, encode). The server
 * here is a test harness; the production routes are wired by the integrator the same way.
 */
const client = new UpstreamClient();
const send: EmbeddingSend = (req, opts) => client.send(req, opts);
let voyageUp: FakeUpstream;
let openaiUp: FakeUpstream;
let imageHost: Server;
let imagePort: number;
let imageHits: string[] = [];
let gateway: FastifyInstance;
let base: string;
let voyageUsage = true;

const resolver: Resolver = async (host) => {
  if (host === 'images.test' || host === 'public.example') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
};
const fetcher = createSafeFetcher({ allowList: ['images.test'], resolve: resolver, timeoutMs: 2000 });

// Deterministic vectors: input i of a batch -> [i + 0.5, -i - 0.25, 0.1].
const vectorFor = (i: number) => [i + 0.5, -i - 0.25, 0.1];

beforeAll(async () => {
  voyageUp = await startFakeUpstream((r) => {
    const body = fixture('voyage', 'multimodal-response.json');
    body.data = r.body.inputs.map((_: unknown, index: number) => ({
      object: 'embedding',
      embedding: vectorFor(index),
      index,
    }));
    if (!voyageUsage) delete body.usage;
    return { body };
  });
  openaiUp = await startFakeUpstream((r) => {
    const body = fixture('openai-embeddings', 'response.json');
    body.data = r.body.input.map((_: unknown, index: number) => ({
      object: 'embedding',
      embedding: vectorFor(index),
      index,
    }));
    return { body };
  });
  imageHost = createServer((req, res) => {
    imageHits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'image/jpeg' }).end(makeJpeg(800, 600));
  });
  imageHost.listen(0, '127.0.0.1');
  await once(imageHost, 'listening');
  imagePort = (imageHost.address() as AddressInfo).port;

  gateway = Fastify();
  gateway.setErrorHandler(errorHandler);
  const run = async (req: EmbeddingRequest, kind: string, upstreamModel: string, baseUrl: string) => {
    const resolved = await resolveImages(req, { fetcher });
    const { usable, rejection } = selectEmbeddingCandidates([{ target: { kind, upstreamModel } }], resolved);
    if (rejection) throw rejection;
    const { adapter } = usable[0];
    const out = await embedWithAdapter(adapter, resolved, { baseUrl, apiKey: 'up-key', upstreamModel }, send);
    return {
      model: req.model ?? upstreamModel,
      vectors: out.vectors,
      dtype: out.dtype,
      usage: finalizeEmbeddingUsage(resolved, out.usage),
    };
  };
  gateway.post('/v1/multimodalembeddings', async (request) => {
    const req = decodeVoyageMultimodalRequest(request.body);
    return encodeVoyageMultimodalResponse(
      await run(req, 'voyage', 'voyage-multimodal-3', voyageUp.baseUrl),
      req.encoding,
    );
  });
  gateway.post('/v1/embeddings', async (request) => {
    const req = decodeEmbeddingsRequest(request.body);
    return encodeEmbeddingsResponse(
      await run(req, 'openai-compatible', 'text-embedding-3-small', `${openaiUp.baseUrl}/v1`),
      req.encoding,
    );
  });
  base = await gateway.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await gateway.close();
  await voyageUp.close();
  await openaiUp.close();
  imageHost.close();
  await fetcher.close();
  await client.close();
});

beforeEach(() => {
  imageHits = [];
  voyageUsage = true;
  voyageUp.requests.length = 0;
  openaiUp.requests.length = 0;
});

const voyage = () => new VoyageAIClient({ apiKey: 'sk-test', baseUrl: `${base}/v1`, maxRetries: 0 });
const openai = () => new OpenAI({ apiKey: 'sk-test', baseURL: `${base}/v1`, maxRetries: 0 });

describe('voyageai SDK', () => {
  it('multimodalEmbed: interleaved text, base64 image and URL image; one vector per input', async () => {
    const png = makePng(40, 30);
    const res = await voyage().multimodalEmbed({
      model: 'voyage-multimodal-3',
      inputType: 'document',
      inputs: [
        {
          content: [
            { type: 'text', text: 'a grey square' },
            { type: 'image_base64', imageBase64: dataUrl('image/png', png) },
          ],
        },
        { content: [{ type: 'image_url', imageUrl: `http://images.test:${imagePort}/photo.jpg` }] },
      ],
    });
    expect(res.object).toBe('list');
    expect(res.data?.map((d) => [d.index, d.embedding])).toEqual([
      [0, vectorFor(0)],
      [1, vectorFor(1)],
    ]);
    expect(res.model).toBe('voyage-multimodal-3');
    // Upstream usage wins (fixture figures); all four keys reach the client.
    expect(res.usage).toMatchObject({
      text_tokens: 9,
      image_pixels: 100000,
      video_pixels: 0,
      totalTokens: 188,
    });
    expect(imageHits).toEqual(['/photo.jpg']);
    // The upstream got our base64 copy of the URL image, never the client's URL.
    const sent = voyageUp.requests[0].body.inputs[1].content[0];
    expect(sent.type).toBe('image_base64');
    expect(sent.image_base64).toBe(dataUrl('image/jpeg', makeJpeg(800, 600)));
    expect(voyageUp.requests[0].body.input_type).toBe('document');
  });

  it('multimodalEmbed: usage computed independently when the upstream reports none', async () => {
    voyageUsage = false;
    const text = 'The quick brown fox jumps over the lazy dog';
    const res = await voyage().multimodalEmbed({
      model: 'voyage-multimodal-3',
      inputs: [
        {
          content: [
            { type: 'text', text },
            { type: 'image_base64', imageBase64: dataUrl('image/webp', makeWebpLossless(1000, 700)) },
          ],
        },
        { content: [{ type: 'image_url', imageUrl: `http://images.test:${imagePort}/b.jpg` }] },
      ],
    });
    const pixels = 1000 * 700 + 800 * 600;
    const tokens = countTextTokens(text);
    expect(res.usage).toMatchObject({
      text_tokens: tokens,
      image_pixels: pixels,
      video_pixels: 0,
      totalTokens: tokens + Math.ceil(700_000 / 560) + Math.ceil(480_000 / 560),
    });
  });

  it('multimodalEmbed: base64 output decodes as float32 little-endian', async () => {
    const res = await voyage().multimodalEmbed({
      model: 'voyage-multimodal-3',
      encodingFormat: 'base64',
      inputs: [{ content: [{ type: 'text', text: 'x' }] }],
    });
    const buf = Buffer.from(res.data![0].embedding as unknown as string, 'base64');
    expect(Array.from(new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4))).toEqual(
      vectorFor(0).map(Math.fround),
    );
  });

  it('bad input: a 400 with detail naming the input', async () => {
    const err = await voyage()
      .multimodalEmbed({
        model: 'voyage-multimodal-3',
        inputs: [{ content: [{ type: 'text', text: 'ok' }] }, { content: [] }],
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(VoyageAIError);
    expect((err as VoyageAIError).statusCode).toBe(400);
    expect((err as VoyageAIError).body).toMatchObject({
      detail: 'inputs[1].content: must not be empty',
      error: { code: 400, param: 'inputs[1].content' },
    });
  });

  it.each([
    ['a loopback literal', () => `http://127.0.0.1:${imagePort}/`],
    ['the metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
    ['a public-looking name resolving to loopback', () => `http://public.example:${imagePort}/x.jpg`],
  ])('refuses %s without connecting', async (_name, url) => {
    const err = (await voyage()
      .multimodalEmbed({
        model: 'voyage-multimodal-3',
        inputs: [{ content: [{ type: 'image_url', imageUrl: url() }] }],
      })
      .then(
        () => null,
        (e: unknown) => e,
      )) as VoyageAIError;
    expect(err.statusCode).toBe(400);
    expect((err.body as { detail: string }).detail).toMatch(
      /^inputs\[0\]\.content\[0\]: refused to fetch image URL/,
    );
    expect(imageHits).toEqual([]);
    expect(voyageUp.requests).toEqual([]);
  });

  it('embed: the text endpoint shape with Voyage fields', async () => {
    const res = await voyage().embed({
      model: 'voyage-3.5',
      input: ['alpha', 'beta'],
      inputType: 'query',
      truncation: true,
    });
    expect(res.data?.map((d) => d.embedding)).toEqual([vectorFor(0), vectorFor(1)]);
    expect(res.usage?.totalTokens).toBe(8);
    expect(openaiUp.requests[0].body.input).toEqual(['alpha', 'beta']);
  });
});

describe('openai SDK embeddings.create', () => {
  it('default (SDK asks for base64 and decodes it) yields the upstream floats', async () => {
    const res = await openai().embeddings.create({
      model: 'text-embedding-3-small',
      input: ['one', 'two', 'three'],
    });
    expect(res.data.map((d) => d.embedding)).toEqual([0, 1, 2].map((i) => vectorFor(i).map(Math.fround)));
    expect(res.usage).toEqual({ prompt_tokens: 8, total_tokens: 8 });
    expect(openaiUp.requests[0].body.encoding_format).toBe('float');
  });

  it('float and explicit base64', async () => {
    const f = await openai().embeddings.create({
      model: 'm',
      input: 'one',
      encoding_format: 'float',
      dimensions: 3,
    });
    expect(f.data[0].embedding).toEqual(vectorFor(0));
    expect(openaiUp.requests[0].body.dimensions).toBe(3);
    const b = await openai().embeddings.create({ model: 'm', input: 'one', encoding_format: 'base64' });
    const buf = Buffer.from(b.data[0].embedding as unknown as string, 'base64');
    expect(Array.from(new Float32Array(buf.buffer, buf.byteOffset, 3))).toEqual(
      vectorFor(0).map(Math.fround),
    );
  });

  it('bad input is a 400 in the OpenAI error shape', async () => {
    const err = await openai()
      .embeddings.create({ model: 'm', input: ['ok', ''] })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ param: 'input[1]' });
  });
});
