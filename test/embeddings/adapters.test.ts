import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { classifyByStatus } from '../../src/gateway/embeddings/classify-upstream-error.js';
import { type EmbeddingSend, embedWithAdapter } from '../../src/gateway/embeddings/embed-with-adapter.js';
import { adapterRejection, type EmbeddingTarget } from '../../src/gateway/embeddings/embedding-adapter.js';
import { finalizeEmbeddingUsage } from '../../src/gateway/embeddings/embedding-usage.js';
import { UpstreamError } from '../../src/gateway/errors.js';
import { inspectImage } from '../../src/gateway/images/image-data.js';
import { UpstreamClient } from '../../src/gateway/upstream/upstream-client.js';
import {
  cohereEmbeddingAdapter,
  cohereEmbedUrl,
} from '../../src/providers/cohere/cohere-embedding-adapter.js';
import { getEmbeddingAdapter, selectEmbeddingCandidates } from '../../src/providers/embedding-registry.js';
import { jinaEmbeddingAdapter } from '../../src/providers/jina/jina-embedding-adapter.js';
import { openaiEmbeddingAdapter } from '../../src/providers/openai-embeddings/openai-embedding-adapter.js';
import {
  voyageMultimodalAdapter,
  voyageTextAdapter,
} from '../../src/providers/voyage/voyage-embedding-adapter.js';
import { resolvedRequest } from '../helpers/embedding-requests.js';
import { startFakeUpstream as startScriptedUpstream } from '../helpers/fake-upstream.js';
import { type FakeUpstream, fixture, startFakeUpstream } from './fake-embedding-upstream.js';
import { makeJpeg, makePng } from './test-images.js';

const client = new UpstreamClient();
const send: EmbeddingSend = (req, opts) => client.send(req, opts);
let fake: FakeUpstream | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});
afterAll(() => client.close());

const png = inspectImage(makePng(100, 50)); // 5000 px
const jpeg = inspectImage(makeJpeg(20, 30));

const mixed = resolvedRequest(
  [
    [
      { type: 'text', text: 'a red bicycle' },
      { type: 'image', image: png },
    ],
    [{ type: 'image', image: jpeg }],
  ],
  { inputType: 'query' },
);
const texts = resolvedRequest([[{ type: 'text', text: 'hello' }], [{ type: 'text', text: 'world' }]], {
  inputType: 'document',
});

const target = (base: string, upstreamModel: string, path = ''): EmbeddingTarget => ({
  baseUrl: base + path,
  apiKey: 'sk-upstream',
  upstreamModel,
});

async function failure(p: Promise<unknown>): Promise<UpstreamError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UpstreamError);
  return err as UpstreamError;
}

describe('voyage', () => {
  it('multimodal: sends image_base64 data URLs and reads Voyage usage', async () => {
    fake = await startFakeUpstream(() => ({ body: fixture('voyage', 'multimodal-response.json') }));
    const out = await embedWithAdapter(
      voyageMultimodalAdapter,
      mixed,
      target(fake.baseUrl, 'voyage-multimodal-3', '/v1'),
      send,
    );
    const [got] = fake.requests;
    expect(got.method).toBe('POST');
    expect(got.url).toBe('/v1/multimodalembeddings');
    expect(got.headers.authorization).toBe('Bearer sk-upstream');
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.body).toEqual({
      inputs: [
        {
          content: [
            { type: 'text', text: 'a red bicycle' },
            { type: 'image_base64', image_base64: `data:image/png;base64,${png.bytes.toString('base64')}` },
          ],
        },
        {
          content: [
            { type: 'image_base64', image_base64: `data:image/jpeg;base64,${jpeg.bytes.toString('base64')}` },
          ],
        },
      ],
      model: 'voyage-multimodal-3',
      input_type: 'query',
      truncation: true,
    });
    expect(out.vectors).toEqual([
      [0.0123, -0.0456, 0.0789, 0.1011],
      [-0.2, 0.3, -0.4, 0.5],
    ]);
    expect(out.dtype).toBe('float');
    // Voyage's own counts win over ours.
    expect(finalizeEmbeddingUsage(mixed, out.usage)).toEqual({
      textTokens: 9,
      imagePixels: 100000,
      videoPixels: 0,
      totalTokens: 188,
      estimated: false,
    });
  });

  it('text: /v1/embeddings with Voyage options, output_dtype forwarded', async () => {
    // Voyage's answer in the dtype asked: whole numbers in -128..127 (floats would be refused).
    const int8 = fixture('voyage', 'text-response.json');
    int8.data[0].embedding = [25, 50, -75];
    int8.data[1].embedding = [127, -128, 3];
    fake = await startFakeUpstream(() => ({ body: int8 }));
    const req = { ...texts, dimensions: 512, dtype: 'int8' as const };
    const out = await embedWithAdapter(voyageTextAdapter, req, target(fake.baseUrl, 'voyage-3.5'), send);
    expect(fake.requests[0].url).toBe('/v1/embeddings');
    expect(fake.requests[0].body).toEqual({
      input: ['hello', 'world'],
      model: 'voyage-3.5',
      input_type: 'document',
      truncation: true,
      output_dimension: 512,
      output_dtype: 'int8',
    });
    expect(out.usage).toEqual({ textTokens: 12, totalTokens: 12 });
    expect(out.vectors).toEqual([
      [25, 50, -75],
      [127, -128, 3],
    ]);
    expect(out.dtype).toBe('int8');
  });

  it('classifies {"detail"} errors', async () => {
    fake = await startFakeUpstream((r) =>
      r.body.input_type === 'query'
        ? { status: 429, body: fixture('voyage', 'error-429.json'), headers: { 'retry-after': '7' } }
        : { status: 400, body: fixture('voyage', 'error-400.json') },
    );
    const bad = await failure(
      embedWithAdapter(
        voyageMultimodalAdapter,
        { ...mixed, inputType: null },
        target(fake.baseUrl, 'm'),
        send,
      ),
    );
    expect(bad.kind).toBe('bad_request');
    expect(bad.message).toMatch(/voyage 400: Value 'doc' supplied/);
    const limited = await failure(
      embedWithAdapter(voyageMultimodalAdapter, mixed, target(fake.baseUrl, 'm'), send),
    );
    expect(limited.kind).toBe('rate_limited');
    expect(limited.retryAfterMs).toBe(7000);
  });
});

describe('jina', () => {
  it('sends images as raw base64 items with the retrieval task', async () => {
    fake = await startFakeUpstream(() => ({ body: fixture('jina', 'embeddings-response.json') }));
    const req = resolvedRequest([[{ type: 'text', text: 'a cat' }], [{ type: 'image', image: png }]], {
      inputType: 'query',
      dimensions: 512,
    });
    const out = await embedWithAdapter(jinaEmbeddingAdapter, req, target(fake.baseUrl, 'jina-clip-v2'), send);
    expect(fake.requests[0].url).toBe('/v1/embeddings');
    expect(fake.requests[0].headers.authorization).toBe('Bearer sk-upstream');
    expect(fake.requests[0].body).toEqual({
      model: 'jina-clip-v2',
      input: [{ text: 'a cat' }, { image: png.bytes.toString('base64') }],
      embedding_type: 'float',
      task: 'retrieval.query',
      dimensions: 512,
      truncate: true,
    });
    expect(out.vectors[1]).toEqual([-0.5, 0.25, 0.125]);
    // With images, Jina's total is its own mix; text tokens stay ours.
    expect(out.usage).toEqual({ totalTokens: 4021 });
  });

  it('sends plain strings for text-only batches and maps document to retrieval.passage', async () => {
    fake = await startFakeUpstream(() => ({ body: fixture('jina', 'embeddings-response.json') }));
    const out = await embedWithAdapter(
      jinaEmbeddingAdapter,
      texts,
      target(fake.baseUrl, 'jina-embeddings-v3'),
      send,
    );
    expect(fake.requests[0].body).toMatchObject({ input: ['hello', 'world'], task: 'retrieval.passage' });
    expect(out.usage).toEqual({ textTokens: 4021, totalTokens: 4021 });
  });

  it('refuses mixed text+image inputs at routing and classifies auth errors', async () => {
    expect(adapterRejection(jinaEmbeddingAdapter, mixed)).toMatch(/^inputs\[0\]/);
    fake = await startFakeUpstream(() => ({ status: 401, body: fixture('jina', 'error-401.json') }));
    expect(
      (await failure(embedWithAdapter(jinaEmbeddingAdapter, texts, target(fake.baseUrl, 'x'), send))).kind,
    ).toBe('auth');
  });
});

describe('cohere', () => {
  it("drops a version in the base URL of Cohere's own host (v1 docs), and keeps any other host's path", () => {
    for (const b of [
      'https://api.cohere.com',
      'https://api.cohere.com/v1',
      'https://api.cohere.ai/v1/',
      'https://api.cohere.com/v2',
    ])
      expect(cohereEmbedUrl(b), b).toBe(
        `${b.includes('.ai') ? 'https://api.cohere.ai' : 'https://api.cohere.com'}/v2/embed`,
      );
    expect(cohereEmbedUrl('http://proxy:8080/cohere/v1')).toBe('http://proxy:8080/cohere/v1/v2/embed');
  });

  it('sends v2 content inputs with image_url data URIs and reads embeddings.float', async () => {
    fake = await startFakeUpstream(() => ({ body: fixture('cohere', 'embed-response.json') }));
    const out = await embedWithAdapter(
      cohereEmbeddingAdapter,
      mixed,
      target(fake.baseUrl, 'embed-v4.0'),
      send,
    );
    expect(fake.requests[0].url).toBe('/v2/embed');
    expect(fake.requests[0].body).toEqual({
      model: 'embed-v4.0',
      input_type: 'search_query',
      embedding_types: ['float'],
      inputs: [
        {
          content: [
            { type: 'text', text: 'a red bicycle' },
            {
              type: 'image_url',
              image_url: { url: `data:image/png;base64,${png.bytes.toString('base64')}` },
            },
          ],
        },
        {
          content: [
            {
              type: 'image_url',
              image_url: { url: `data:image/jpeg;base64,${jpeg.bytes.toString('base64')}` },
            },
          ],
        },
      ],
      truncate: 'END',
    });
    expect(out.vectors[0]).toEqual([0.016296387, -0.008354187, -0.04699707, 0.07104492]);
    expect(out.usage).toEqual({ textTokens: 6, totalTokens: 1616 });
    expect(finalizeEmbeddingUsage(mixed, out.usage)).toMatchObject({ imagePixels: 5600, totalTokens: 1616 });
  });

  it('uses texts for text-only requests, search_document by default, and classifies errors', async () => {
    fake = await startFakeUpstream((r) =>
      r.body.truncate === 'NONE'
        ? { status: 400, body: fixture('cohere', 'error-400.json') }
        : { body: fixture('cohere', 'embed-response.json') },
    );
    await embedWithAdapter(
      cohereEmbeddingAdapter,
      { ...texts, inputType: null },
      target(fake.baseUrl, 'embed-english-v3.0'),
      send,
    );
    expect(fake.requests[0].body).toEqual({
      model: 'embed-english-v3.0',
      input_type: 'search_document',
      embedding_types: ['float'],
      texts: ['hello', 'world'],
      truncate: 'END',
    });
    const err = await failure(
      embedWithAdapter(
        cohereEmbeddingAdapter,
        { ...texts, truncation: false },
        target(fake.baseUrl, 'x'),
        send,
      ),
    );
    expect(err.kind).toBe('bad_request');
    expect(err.message).toMatch(/input_type is a required field/);
  });
});

describe('cohere usage', () => {
  it('takes billed image_tokens as its own count, and a count of images as nothing', async () => {
    const billed: Record<string, unknown>[] = [
      { input_tokens: 5, images: 2 },
      { input_tokens: 5, images: 2, image_tokens: 100 },
    ];
    fake = await startFakeUpstream(() => {
      const body = structuredClone(fixture('cohere', 'embed-response.json')) as { meta: object };
      body.meta = { billed_units: billed.shift() };
      return { body };
    });
    const onlyImages = await embedWithAdapter(
      cohereEmbeddingAdapter,
      mixed,
      target(fake.baseUrl, 'embed-v4.0'),
      send,
    );
    expect(onlyImages.usage).toEqual({ textTokens: 5, totalTokens: undefined });
    // 5 text tokens, then ceil(5000 / 560) + ceil(600 / 560) for the two images.
    expect(finalizeEmbeddingUsage(mixed, onlyImages.usage)).toMatchObject({ textTokens: 5, totalTokens: 16 });
    const tokens = await embedWithAdapter(
      cohereEmbeddingAdapter,
      mixed,
      target(fake.baseUrl, 'embed-v4.0'),
      send,
    );
    expect(finalizeEmbeddingUsage(mixed, tokens.usage)).toMatchObject({ totalTokens: 105 });
  });
});

describe('vectors that are not vectors', () => {
  const one = resolvedRequest([[{ type: 'text', text: 'hello' }]]);
  const NAN_AND_ONE = Buffer.from(new Float32Array([Number.NaN, 1]).buffer).toString('base64');
  it.each([
    ['an overflowing number', '[1e999]'],
    ['a null', '[0.5, null]'],
    ['an empty array', '[]'],
    ['NaN in float32 base64', JSON.stringify(NAN_AND_ONE)],
    ['base64 of two bytes', '"AAA"'],
    ['empty base64', '""'],
  ])('%s is a bad upstream answer (502), never passed on', async (_name, embedding) => {
    const body = `{"data":[{"object":"embedding","embedding":${embedding},"index":0}],"usage":{"prompt_tokens":1,"total_tokens":1}}`;
    fake = await startFakeUpstream(() => ({ body }));
    const err = await failure(
      embedWithAdapter(openaiEmbeddingAdapter, one, target(fake.baseUrl, 'x', '/v1'), send),
    );
    expect(err.kind).toBe('bad_response');
    expect(err.message).toMatch(/vector of finite numbers/);
  });

  it('in a Cohere answer too', async () => {
    fake = await startFakeUpstream(() => ({
      body: '{"embeddings":{"float":[[0.1],[1e999]]},"meta":{"billed_units":{"input_tokens":2}}}',
    }));
    const err = await failure(
      embedWithAdapter(cohereEmbeddingAdapter, texts, target(fake.baseUrl, 'x'), send),
    );
    expect(err.kind).toBe('bad_response');
  });

  it('a parser that meets what it did not foresee fails as a bad answer, not a crash', async () => {
    // Today's parsers check every field; this keeps a future one's TypeError a 502 and a fallback.
    fake = await startFakeUpstream(() => ({ body: '{"data":[null]}' }));
    const careless = {
      ...openaiEmbeddingAdapter,
      parseResponse: (_s: number, body: unknown) => {
        const first = (body as { data: Array<{ embedding: number[] }> }).data[0]!;
        return { vectors: [first.embedding], usage: {} };
      },
    };
    const err = await failure(embedWithAdapter(careless, one, target(fake.baseUrl, 'x', '/v1'), send));
    expect(err.kind).toBe('bad_response');
    expect(err.message).toMatch(/unreadable openai-embeddings answer/);
    expect(err.cause).toBeInstanceOf(TypeError);
  });
});

describe('openai-compatible', () => {
  it('sends text only, orders vectors by index, and reads prompt_tokens', async () => {
    fake = await startFakeUpstream(() => ({ body: fixture('openai-embeddings', 'response.json') }));
    const req = { ...texts, dimensions: 256, user: 'u-1' };
    const out = await embedWithAdapter(
      openaiEmbeddingAdapter,
      req,
      target(fake.baseUrl, 'text-embedding-3-small', '/v1'),
      send,
    );
    expect(fake.requests[0].url).toBe('/v1/embeddings');
    expect(fake.requests[0].body).toEqual({
      model: 'text-embedding-3-small',
      input: ['hello', 'world'],
      encoding_format: 'float',
      dimensions: 256,
      user: 'u-1',
    });
    expect(out.vectors).toEqual([
      [-0.0069292835, -0.005336422, 0.024047505],
      [0.5, 0.5, 0.5],
    ]);
    expect(out.usage).toEqual({ textTokens: 8, totalTokens: 8 });
  });

  it('posts to {base}/embeddings, the base as given, like chat; a bare host to /v1/embeddings', async () => {
    fake = await startFakeUpstream(() => ({ body: fixture('openai-embeddings', 'response.json') }));
    for (const path of ['/v1', '/api/paas/v4', '/v1beta/openai/', '/v1/openai', '', '/'])
      await embedWithAdapter(openaiEmbeddingAdapter, texts, target(fake.baseUrl, 'm', path), send);
    expect(fake.requests.map((r: { url: string }) => r.url)).toEqual([
      '/v1/embeddings',
      '/api/paas/v4/embeddings',
      '/v1beta/openai/embeddings',
      '/v1/openai/embeddings',
      // A bare host (an embedding server such as TEI) keeps /v1/embeddings.
      '/v1/embeddings',
      '/v1/embeddings',
    ]);
  });

  it('never takes images; context errors and garbage are classified', async () => {
    expect(adapterRejection(openaiEmbeddingAdapter, mixed)).toMatch(/cannot embed images/);
    fake = await startFakeUpstream((r) =>
      r.body.input.length === 1
        ? { body: '<html>oops</html>' }
        : { status: 400, body: fixture('openai-embeddings', 'error-400.json') },
    );
    expect(
      (await failure(embedWithAdapter(openaiEmbeddingAdapter, texts, target(fake.baseUrl, 'x'), send))).kind,
    ).toBe('context_length');
    const one = resolvedRequest([[{ type: 'tokens', tokens: [1, 2] }]]);
    expect(
      (await failure(embedWithAdapter(openaiEmbeddingAdapter, one, target(fake.baseUrl, 'x'), send))).kind,
    ).toBe('bad_response');
    expect(fake.requests[1].body.input).toEqual([[1, 2]]);
  });
});

describe('batching', () => {
  it('splits above maxBatch and reassembles in order, summing upstream usage', async () => {
    // Cohere's format with one vector per text, each vector naming its text so order is checkable.
    fake = await startFakeUpstream((r) => ({
      body: {
        ...fixture('cohere', 'embed-response.json'),
        embeddings: { float: r.body.texts.map((t: string) => [Number(t.slice(1))]) },
        meta: { billed_units: { input_tokens: r.body.texts.length } },
      },
    }));
    const inputs = Array.from({ length: 200 }, (_, i) => [{ type: 'text' as const, text: `t${i}` }]);
    const out = await embedWithAdapter(
      cohereEmbeddingAdapter,
      resolvedRequest(inputs),
      target(fake.baseUrl, 'embed-v4.0'),
      send,
    );
    expect(fake.requests.map((r) => r.body.texts.length).sort((a, b) => a - b)).toEqual([8, 96, 96]);
    expect(out.vectors).toEqual(inputs.map((_, i) => [i]));
    expect(out.usage).toEqual({ textTokens: 200, totalTokens: undefined });
  });

  it('sends no further batch once one has failed: the attempt is lost and would only be billed', async () => {
    // Cohere wire format; the batch holding "FAIL" is refused at once, the others answer slowly.
    const up = await startScriptedUpstream({
      'POST /v2/embed': (r) =>
        r.json.texts.includes('FAIL')
          ? {
              status: 429,
              json: {
                id: 'e',
                message: 'You are using a Trial key, which is limited to 100 API calls / minute.',
              },
            }
          : {
              delayMs: 150,
              json: {
                ...fixture('cohere', 'embed-response.json'),
                embeddings: { float: r.json.texts.map(() => [0.5]) },
              },
            },
    });
    try {
      // 5 batches of at most 96; 4 go out at once, the first fails while the other 3 are in flight.
      const inputs = Array.from({ length: 4 * 96 + 1 }, (_, i) => [
        { type: 'text' as const, text: i === 0 ? 'FAIL' : `t${i}` },
      ]);
      const err = await failure(
        embedWithAdapter(cohereEmbeddingAdapter, resolvedRequest(inputs), target(up.url, 'embed-v4.0'), send),
      );
      expect(err.kind).toBe('rate_limited');
      await new Promise((resolve) => setTimeout(resolve, 400)); // the in-flight batches have answered
      expect(up.requests).toHaveLength(4);
    } finally {
      await up.close();
    }
  });

  it('rejects an answer with the wrong number of vectors', async () => {
    fake = await startFakeUpstream(() => ({ body: fixture('voyage', 'text-response.json') }));
    const three = resolvedRequest([
      [{ type: 'text', text: 'a' }],
      [{ type: 'text', text: 'b' }],
      [{ type: 'text', text: 'c' }],
    ]);
    expect(
      (await failure(embedWithAdapter(voyageTextAdapter, three, target(fake.baseUrl, 'x'), send))).message,
    ).toMatch(/2 embeddings for 3 inputs/);
  });
});

describe('registry', () => {
  it('picks adapters by kind, Voyage by model', () => {
    expect(getEmbeddingAdapter('voyage', 'voyage-multimodal-3')).toBe(voyageMultimodalAdapter);
    expect(getEmbeddingAdapter('voyage', 'voyage-3.5')).toBe(voyageTextAdapter);
    expect(getEmbeddingAdapter('cohere')).toBe(cohereEmbeddingAdapter);
    expect(getEmbeddingAdapter('openai-compatible')).toBe(openaiEmbeddingAdapter);
    expect(getEmbeddingAdapter('anthropic')).toBeUndefined();
  });

  it('selects candidates that can serve, and gives a 400 when none can take images', () => {
    const c = (kind: string, upstreamModel: string) => ({ target: { kind, upstreamModel } });
    const textOnly = [
      c('openai-compatible', 'text-embedding-3-small'),
      c('voyage', 'voyage-3.5'),
      c('anthropic', 'x'),
    ];
    const none = selectEmbeddingCandidates(textOnly, mixed);
    expect(none.usable).toEqual([]);
    expect(none.rejection?.status).toBe(400);
    expect(none.rejection?.message).toMatch(/no upstream can serve this request: .*cannot embed images/);
    const some = selectEmbeddingCandidates([...textOnly, c('voyage', 'voyage-multimodal-3')], mixed);
    expect(some.rejection).toBeNull();
    expect(some.usable.map((u) => u.adapter)).toEqual([voyageMultimodalAdapter]);
    expect(selectEmbeddingCandidates(textOnly, texts).usable).toHaveLength(2);
    expect(selectEmbeddingCandidates([], texts).rejection).toBeNull();
  });
});

describe('upstream error classification', () => {
  it('reads an empty account or a rate limit from the error code, on every adapter, and leaves a 413 to its size', () => {
    const empty = { error: { message: 'You exceeded your current quota', code: 'insufficient_quota' } };
    const limited = { error: { message: 'Rate limit reached', code: 'rate_limit_exceeded' } };
    for (const a of [
      openaiEmbeddingAdapter,
      voyageTextAdapter,
      jinaEmbeddingAdapter,
      cohereEmbeddingAdapter,
    ]) {
      expect(a.classifyError(429, empty, {}).kind, a.kind).toBe('payment');
      expect(a.classifyError(400, limited, {}).kind, a.kind).toBe('rate_limited');
      expect(a.classifyError(413, empty, {}).kind, a.kind).toBe('too_large');
      expect(a.classifyError(429, { error: { message: 'slow down' } }, {}).kind, a.kind).toBe('rate_limited');
      expect(a.classifyError(500, empty, {}).kind, a.kind).toBe('server_error');
    }
    const jina = { detail: 'Insufficient balance', code: 'AUTHZ_INSUFFICIENT_BALANCE' };
    expect(jinaEmbeddingAdapter.classifyError(403, jina, {}).kind).toBe('payment');
    expect(jinaEmbeddingAdapter.classifyError(403, { detail: 'Forbidden' }, {}).kind).toBe('auth');
  });

  it('tells an unknown model from a bad input that mentions the model', () => {
    const kind = (message: string) => classifyByStatus('voyage', 400, message, {}).kind;
    for (const m of [
      'The model `text-embedding-4` does not exist or you do not have access to it.',
      "model 'embed-v9.0' not found, make sure the correct model ID was used",
      'Model voyage-xyz is not supported.',
      'Invalid model: jina-nope',
      'unknown model "x"',
    ])
      expect(kind(m), m).toBe('not_found');
    for (const m of [
      "Request to model 'voyage-multimodal-3' failed. Invalid input: the image is invalid.",
      'Invalid input: text too long for this model. Please shorten it.',
    ])
      expect(kind(m), m).not.toBe('not_found');
  });
});
