import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { countTokens } from 'gpt-tokenizer';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VoyageAIClient, VoyageAIError } from 'voyageai';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { dataUrl, makeGif, makeJpeg, makePng } from './test-images.js';

/**
 * The embeddings endpoints through a started gateway: API key auth, registry routing, the
 * shared safe image fetcher, quota, request logs, and fake Voyage / OpenAI upstreams. Usage
 * figures are recomputed here from the images' own dimensions (ceil(pixels / 560) per image).
 */
let voyageUp: FakeUpstream;
let openaiUp: FakeUpstream;
let imageHost: Server;
let imagePort: number;
let imageHits: string[] = [];
let gw: TestGateway;
let cookie: string;
let key: string;
let keyId: number;
/** What the fake Voyage upstream reports as usage. */
let voyageUsage: 'full' | 'none' = 'full';

const vectorFor = (i: number) => [i + 0.5, -i - 0.25, 0.1];
const int8VectorFor = (i: number) => [i + 1, -i - 2, 127];
const VOYAGE_MM = 'voyageai/voyage-multimodal-3';
/** In the channel's list with no `models` entry of the config: only the default model list describes it. */
const VOYAGE_MM_35 = 'voyageai/voyage-multimodal-3.5';
const VOYAGE_TEXT = 'voyageai/voyage-3.5';
/**
 * Voyage text models in the channel's list that only the default model list describes, with
 * the context length and per-token price it gives them (docs/embeddings.md, "Default embedding
 * models").
 */
const VOYAGE_DEFAULT_TEXT: Record<string, { context: number; prompt: string }> = {
  'voyageai/voyage-4-large': { context: 32000, prompt: '0.00000012' },
  'voyageai/voyage-4': { context: 32000, prompt: '0.00000006' },
  'voyageai/voyage-4-lite': { context: 32000, prompt: '0.00000002' },
  'voyageai/voyage-3.5-lite': { context: 32000, prompt: '0.00000002' },
  'voyageai/voyage-code-3': { context: 32000, prompt: '0.00000018' },
  'voyageai/voyage-finance-2': { context: 32000, prompt: '0.00000012' },
  'voyageai/voyage-law-2': { context: 16000, prompt: '0.00000012' },
};
const OPENAI = 'openai/text-embedding-3-small';
const PROMPT_PRICE = 0.000001; // USD per token, so micro-USD = tokens
const tokensOf = (pixels: number) => Math.ceil(pixels / 560);

beforeAll(async () => {
  voyageUp = await startFakeUpstream({
    'POST /v1/multimodalembeddings': (r) => ({
      json: {
        object: 'list',
        data: r.json.inputs.map((_: unknown, index: number) => ({
          object: 'embedding',
          embedding: vectorFor(index),
          index,
        })),
        model: r.json.model,
        ...(voyageUsage === 'full'
          ? { usage: { text_tokens: 9, image_pixels: 100000, video_pixels: 0, total_tokens: 188 } }
          : {}),
      },
    }),
    'POST /v1/embeddings': (r) => ({
      json: {
        object: 'list',
        data: r.json.input.map((_: unknown, index: number) => ({
          object: 'embedding',
          // Voyage answers a quantized output_dtype with integers.
          embedding: r.json.output_dtype === 'int8' ? int8VectorFor(index) : vectorFor(index),
          index,
        })),
        model: r.json.model,
        usage: { total_tokens: 12 },
      },
    }),
  });
  openaiUp = await startFakeUpstream({
    'POST /v1/embeddings': (r) => {
      const input: string[] = typeof r.json.input === 'string' ? [r.json.input] : r.json.input;
      if (input.includes('SLOW'))
        return { delayMs: 1_500, json: { object: 'list', data: [], model: 'm', usage: { total_tokens: 1 } } };
      const limited = input.find((i) => typeof i === 'string' && i.startsWith('RATE LIMITED '));
      if (limited)
        return {
          status: 429,
          headers: { 'retry-after': limited.slice('RATE LIMITED '.length) },
          json: { error: { message: 'Rate limit reached', type: 'requests', param: null, code: null } },
        };
      if (input.includes('TOO LONG'))
        return {
          status: 400,
          json: {
            error: {
              message:
                "This model's maximum context length is 8192 tokens, however you requested 9000 tokens.",
              type: 'invalid_request_error',
              param: null,
              code: null,
            },
          },
        };
      return {
        json: {
          object: 'list',
          data: input.map((_, index) => ({ object: 'embedding', index, embedding: vectorFor(index) })),
          model: 'text-embedding-3-small',
          usage: { prompt_tokens: 8, total_tokens: 8 },
        },
      };
    },
  });
  imageHost = createServer((req, res) => {
    imageHits.push(req.url ?? '');
    const answer = () => res.writeHead(200, { 'content-type': 'image/jpeg' }).end(makeJpeg(800, 600));
    if (req.url?.startsWith('/slow/')) setTimeout(answer, 300);
    else answer();
  });
  imageHost.listen(0); // dual stack, so `localhost` reaches it over either family
  await once(imageHost, 'listening');
  imagePort = (imageHost.address() as AddressInfo).port;

  gw = await startTestGateway({
    gateway: {
      discover_models: false,
      default_embedding_model: VOYAGE_MM,
      image_allow_hosts: ['localhost'],
      image_fetch_timeout_ms: 2000,
      max_attempts: 1,
    },
    channels: [
      {
        name: 'voyage',
        kind: 'voyage',
        base_url: `${voyageUp.url}/v1`,
        keys: ['voyage-key'],
        models: [VOYAGE_MM, VOYAGE_MM_35, VOYAGE_TEXT, ...Object.keys(VOYAGE_DEFAULT_TEXT)],
      },
      {
        name: 'openai',
        kind: 'openai-compatible',
        base_url: `${openaiUp.url}/v1`,
        keys: ['openai-key'],
        models: [OPENAI],
        model_mapping: { [OPENAI]: 'text-embedding-3-small' },
      },
    ],
    models: [
      // image_pixel 0: images are paid through their token equivalent at the prompt price, not at
      // the default entry's per-pixel rate (config prices merge key by key over the defaults).
      { id: VOYAGE_MM, pricing: { prompt: String(PROMPT_PRICE), image_pixel: '0' } },
      { id: OPENAI, pricing: { prompt: String(PROMPT_PRICE) } },
    ],
  });
  cookie = await gw.login();
  const created = (await gw.call('POST', '/api/key', { cookie, body: { name: 'emb', quota_limit: 100 } }))
    .body.data;
  key = created.key;
  keyId = created.id;
});

afterAll(async () => {
  await gw?.close();
  await voyageUp?.close();
  await openaiUp?.close();
  imageHost?.close();
});

beforeEach(() => {
  imageHits = [];
  voyageUsage = 'full';
  voyageUp.requests.length = 0;
  openaiUp.requests.length = 0;
});

const voyage = (apiKey = key) => new VoyageAIClient({ apiKey, baseUrl: `${gw.url}/v1`, maxRetries: 0 });
const openai = () => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
const imageUrl = (path: string) => `http://localhost:${imagePort}${path}`;

async function newKey(body: Record<string, unknown>): Promise<string> {
  return (await gw.call('POST', '/api/key', { cookie, body: { name: 'k', ...body } })).body.data.key;
}

async function failure(p: Promise<unknown>): Promise<VoyageAIError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(VoyageAIError);
  return err as VoyageAIError;
}

describe('voyageai SDK multimodalEmbed', () => {
  it('text and images interleaved: base64 PNG and an allow-listed URL; upstream usage wins', async () => {
    const res = await voyage().multimodalEmbed({
      model: VOYAGE_MM,
      inputType: 'document',
      inputs: [
        {
          content: [
            { type: 'text', text: 'a grey square' },
            { type: 'image_base64', imageBase64: dataUrl('image/png', makePng(40, 30)) },
            { type: 'text', text: 'and more text' },
          ],
        },
        { content: [{ type: 'image_url', imageUrl: imageUrl('/photo.jpg') }] },
      ],
    });
    expect(res.data?.map((d) => [d.index, d.embedding])).toEqual([
      [0, vectorFor(0)],
      [1, vectorFor(1)],
    ]);
    expect(res.model).toBe(VOYAGE_MM);
    expect(res.usage).toMatchObject({
      text_tokens: 9,
      image_pixels: 100000,
      video_pixels: 0,
      totalTokens: 188,
    });
    expect(imageHits).toEqual(['/photo.jpg']);
    const sent = voyageUp.requests[0]!;
    expect(sent.headers.authorization).toBe('Bearer voyage-key');
    expect(sent.json.model).toBe('voyage-multimodal-3');
    expect(sent.json.input_type).toBe('document');
    // The upstream receives our copy of the URL image, never the client's URL.
    expect(sent.json.inputs[1].content[0]).toEqual({
      type: 'image_base64',
      image_base64: dataUrl('image/jpeg', makeJpeg(800, 600)),
    });
  });

  it('usage computed from the images when the upstream reports none', async () => {
    voyageUsage = 'none';
    const text = 'The quick brown fox jumps over the lazy dog';
    const res = await voyage().multimodalEmbed({
      model: VOYAGE_MM,
      inputs: [
        {
          content: [
            { type: 'text', text },
            { type: 'image_base64', imageBase64: dataUrl('image/png', makePng(40, 30)) },
          ],
        },
        { content: [{ type: 'image_url', imageUrl: imageUrl('/b.jpg') }] },
      ],
    });
    const textTokens = countTokens(text);
    // As Voyage bills them: the 40x30 image as its minimum of 50,000 pixels.
    expect(res.usage).toMatchObject({
      text_tokens: textTokens,
      image_pixels: 50_000 + 800 * 600,
      video_pixels: 0,
      totalTokens: textTokens + tokensOf(50_000) + tokensOf(800 * 600),
    });
  });

  it('model omitted: the configured default embedding model serves', async () => {
    // The SDK insists on a model, so this one is sent by hand.
    const r = await gw.call('POST', '/v1/multimodalembeddings', {
      token: key,
      body: { inputs: [{ content: [{ type: 'text', text: 'x' }] }], model: null },
    });
    expect(r.status).toBe(200);
    expect(r.body.model).toBe(VOYAGE_MM);
    expect(voyageUp.requests).toHaveLength(1);
  });

  it('base64 output is little-endian float32', async () => {
    const res = await voyage().multimodalEmbed({
      model: VOYAGE_MM,
      encodingFormat: 'base64',
      inputs: [{ content: [{ type: 'text', text: 'x' }] }],
    });
    const buf = Buffer.from(res.data![0]!.embedding as unknown as string, 'base64');
    expect(Array.from(new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4))).toEqual(
      vectorFor(0).map(Math.fround),
    );
  });
});

describe('voyage-multimodal-3.5 from the default model list', () => {
  it('takes text and images at its default prices (tokens and pixels), without a config entry', async () => {
    const fresh = (await gw.call('POST', '/api/key', { cookie, body: { name: 'mm35', quota_limit: 1 } })).body
      .data;
    const res = await voyage(fresh.key).multimodalEmbed({
      model: VOYAGE_MM_35,
      inputs: [
        {
          content: [
            { type: 'text', text: 'a photo' },
            { type: 'image_url', imageUrl: imageUrl('/mm35.jpg') },
          ],
        },
      ],
    });
    expect(res.model).toBe(VOYAGE_MM_35);
    expect(voyageUp.requests[0]!.json.model).toBe('voyage-multimodal-3.5');
    await gw.services.requestLogs.flush();
    const row = await gw.services.repos.apiKeys.byId(fresh.id);
    // Voyage's rates: 9 text tokens at $0.12 per million (1.08 micro-USD) and 100,000 image pixels
    // at $0.60 per billion (60 micro-USD); not the 188 total tokens at the token rate (22.56).
    expect(row!.quota_used_micros).toBe(61);
    const listed = (await gw.call('GET', '/v1/models', { token: key })).body.data.find(
      (m: { id: string }) => m.id === VOYAGE_MM_35,
    );
    expect(listed).toMatchObject({
      context_length: 32000,
      architecture: { input_modalities: ['text', 'image'], output_modalities: ['embeddings'] },
    });
  });
});

describe('Voyage text models from the default model list', () => {
  it('are listed by /v1/models with their context length, price and modalities', async () => {
    const listed: { id: string }[] = (await gw.call('GET', '/v1/models', { token: key })).body.data;
    for (const [id, { context, prompt }] of Object.entries(VOYAGE_DEFAULT_TEXT)) {
      expect(
        listed.find((m) => m.id === id),
        id,
      ).toMatchObject({
        context_length: context,
        pricing: { prompt, completion: '0', request: '0', image: '0' },
        architecture: { input_modalities: ['text'], output_modalities: ['embeddings'] },
      });
    }
  });

  it('each goes to the Voyage text endpoint under its upstream name', async () => {
    for (const id of Object.keys(VOYAGE_DEFAULT_TEXT)) {
      voyageUp.requests.length = 0;
      const res = await voyage().embed({ model: id, input: ['alpha'], inputType: 'document' });
      expect(res.model, id).toBe(id);
      expect(res.data?.map((d) => d.embedding)).toEqual([vectorFor(0)]);
      expect(voyageUp.requests).toHaveLength(1);
      expect(voyageUp.requests[0]!.path).toBe('/v1/embeddings');
      expect(voyageUp.requests[0]!.json).toMatchObject({
        model: id.slice('voyageai/'.length),
        input: ['alpha'],
        input_type: 'document',
      });
    }
  });
});

describe('voyageai SDK embed and openai SDK embeddings.create', () => {
  it('embed: Voyage text model through /v1/embeddings', async () => {
    const res = await voyage().embed({ model: VOYAGE_TEXT, input: ['alpha', 'beta'], inputType: 'query' });
    expect(res.data?.map((d) => d.embedding)).toEqual([vectorFor(0), vectorFor(1)]);
    expect(res.usage?.totalTokens).toBe(12);
    expect(res.model).toBe(VOYAGE_TEXT);
    expect(voyageUp.requests[0]!.json).toMatchObject({ input: ['alpha', 'beta'], input_type: 'query' });
  });

  it('float', async () => {
    const res = await openai().embeddings.create({ model: OPENAI, input: 'one', encoding_format: 'float' });
    expect(res.data[0]!.embedding).toEqual(vectorFor(0));
    expect(res.model).toBe(OPENAI);
    expect(res.usage).toEqual({ prompt_tokens: 8, total_tokens: 8 });
    expect(openaiUp.requests[0]!.json.model).toBe('text-embedding-3-small');
  });

  it('base64 (the SDK default, decoded by the SDK) and explicit base64', async () => {
    const res = await openai().embeddings.create({ model: OPENAI, input: ['one', 'two', 'three'] });
    expect(res.data.map((d) => d.embedding)).toEqual([0, 1, 2].map((i) => vectorFor(i).map(Math.fround)));
    const b = await openai().embeddings.create({ model: OPENAI, input: 'one', encoding_format: 'base64' });
    const buf = Buffer.from(b.data[0]!.embedding as unknown as string, 'base64');
    expect(Array.from(new Float32Array(buf.buffer, buf.byteOffset, 3))).toEqual(
      vectorFor(0).map(Math.fround),
    );
  });

  it('one tokenized input (a flat int array) may hold more ids than the 2048-input limit', async () => {
    // OpenAI takes up to 8192 tokens per input; a flat array of token ids is ONE input.
    const tokens = Array.from({ length: 3000 }, (_, i) => (i * 7) % 100_000);
    const res = await openai().embeddings.create({ model: OPENAI, input: tokens, encoding_format: 'float' });
    expect(res.data.map((d) => d.embedding)).toEqual([vectorFor(0)]);
    expect(openaiUp.requests[0]!.json.input).toEqual([tokens]);
  });

  it('an upstream context-length error is a 400 about input, not messages', async () => {
    const err = await openai()
      .embeddings.create({ model: OPENAI, input: ['ok', 'TOO LONG'] })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ param: 'input' });
    // The failed request's log keeps the attempt trail.
    await gw.services.requestLogs.flush();
    const logs = await gw.call('GET', '/api/log?status=400&page_size=100', { cookie });
    const failed = logs.body.data.find((l: { error_kind: string }) => l.error_kind === 'context_length');
    expect(failed.attempts).toEqual([expect.objectContaining({ ok: false, error_kind: 'context_length' })]);
  });
});

describe('output_dtype', () => {
  it('a quantized type reaches an upstream that returns it; base64 carries one byte per value', async () => {
    const res = await voyage().embed({
      model: VOYAGE_TEXT,
      input: ['alpha', 'beta'],
      outputDtype: 'int8',
      encodingFormat: 'base64',
    });
    expect(voyageUp.requests[0]!.json.output_dtype).toBe('int8');
    const buf = Buffer.from(res.data![1]!.embedding as unknown as string, 'base64');
    expect(Array.from(new Int8Array(buf.buffer, buf.byteOffset, buf.byteLength))).toEqual(int8VectorFor(1));
  });

  // An upstream that only returns floats must not be asked: the client would decode float32
  // bytes as int8 (the Python SDK always asks for base64) and get four times as many garbage values.
  it.each([
    ['/v1/embeddings', { input: ['alpha'], encoding_format: 'base64' }],
    ['/v1/multimodalembeddings', { inputs: [{ content: [{ type: 'text', text: 'alpha' }] }] }],
  ])('%s: a float-only upstream is a 400 naming output_dtype', async (path, body) => {
    const r = await gw.call('POST', path, {
      token: key,
      body: { model: OPENAI, output_dtype: 'int8', ...body },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 400, param: 'output_dtype' });
    expect(r.body.error.message).toMatch(/output_dtype "int8"/);
    expect(openaiUp.requests).toEqual([]);
  });

  it('float (explicit) still reaches a float-only upstream', async () => {
    const r = await gw.call('POST', '/v1/embeddings', {
      token: key,
      body: { model: OPENAI, input: ['alpha'], output_dtype: 'float' },
    });
    expect(r.status).toBe(200);
    expect(r.body.data[0].embedding).toEqual(vectorFor(0));
  });
});

describe('upstream Retry-After', () => {
  it('a 0, negative or garbage value reaches the client as at least 1 second', async () => {
    for (const [value, expected] of [
      ['0', '1'],
      ['-2', '1'],
      ['later', '1'],
      ['4', '4'],
    ]) {
      const r = await gw.call('POST', '/v1/embeddings', {
        token: key,
        body: { model: OPENAI, input: [`RATE LIMITED ${value}`] },
      });
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after'), `Retry-After: ${value}`).toBe(expected);
    }
  });
});

describe('a client that leaves', () => {
  it('is logged 499 with the try it cut in the trail: ended by the client, with how long it ran', async () => {
    const abort = new AbortController();
    const sent = fetch(`${gw.url}/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: OPENAI, input: ['SLOW'] }),
      signal: abort.signal,
    }).catch(() => 'aborted');
    await expect.poll(() => openaiUp.requests.length, { timeout: 5_000, interval: 10 }).toBe(1);
    await new Promise((r) => setTimeout(r, 200));
    abort.abort();
    expect(await sent).toBe('aborted');
    let log: any;
    for (let i = 0; i < 100 && !log; i++) {
      await gw.services.requestLogs.flush();
      const logs = await gw.call('GET', '/api/log?status=499&page_size=100', { cookie });
      log = logs.body.data.find((l: { endpoint: string }) => l.endpoint === 'embeddings');
      if (!log) await new Promise((r) => setTimeout(r, 50));
    }
    expect(log).toMatchObject({ status: 499, provider: 'openai', error_kind: 'aborted' });
    expect(log.attempts).toEqual([
      {
        model: OPENAI,
        provider: 'openai',
        channel_id: expect.any(Number),
        ok: false,
        error_kind: 'client_aborted',
        ms: expect.any(Number),
      },
    ]);
    expect(log.attempts[0].ms).toBeGreaterThanOrEqual(190);
    expect(log.attempts[0].ms).toBeLessThanOrEqual(log.latency_ms);
  });
  it('fetches no further image URL once it left, and aborts those in flight', async () => {
    const abort = new AbortController();
    // 16 slow image URLs, fetched 4 at a time: without the client, 12 would still go out.
    const inputs = Array.from({ length: 16 }, (_, i) => ({
      content: [{ type: 'image_url', image_url: imageUrl(`/slow/${i}.jpg`) }],
    }));
    const sent = fetch(`${gw.url}/v1/multimodalembeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: VOYAGE_MM, inputs }),
      signal: abort.signal,
    }).catch(() => 'aborted');
    await expect.poll(() => imageHits.length, { timeout: 5_000, interval: 5 }).toBe(4);
    abort.abort();
    expect(await sent).toBe('aborted');
    // Long enough for three more rounds of 300 ms fetches, had the queue gone on.
    await new Promise((r) => setTimeout(r, 1_200));
    expect(imageHits).toHaveLength(4);
    expect(voyageUp.requests).toEqual([]);
    let log: any;
    for (let i = 0; i < 100 && !log; i++) {
      await gw.services.requestLogs.flush();
      const logs = await gw.call('GET', '/api/log?status=499&page_size=100', { cookie });
      log = logs.body.data.find((l: { endpoint: string }) => l.endpoint === 'multimodalembeddings');
      if (!log) await new Promise((r) => setTimeout(r, 50));
    }
    expect(log).toMatchObject({ status: 499, error_kind: 'aborted', model: VOYAGE_MM });
  });
});

describe('routing and access', () => {
  const body = (model: string) => ({ model, inputs: [{ content: [{ type: 'text', text: 'x' }] }] });

  it('404 for an unknown model, with Voyage detail', async () => {
    const r = await gw.call('POST', '/v1/multimodalembeddings', { token: key, body: body('nope/nothing') });
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({
      detail: 'model not found: nope/nothing',
      error: { code: 404, param: 'model' },
    });
  });

  it('403 for a model outside the key allow-list; the allowed model passes', async () => {
    const limited = await newKey({ allowed_models: ['text-embedding-3-small'] });
    const r = await gw.call('POST', '/v1/multimodalembeddings', { token: limited, body: body(VOYAGE_MM) });
    expect(r.status).toBe(403);
    // `param` names the refused field, as for the other errors about the request.
    expect(r.body).toMatchObject({
      detail: `this API key may not use model ${VOYAGE_MM}`,
      error: { code: 403, param: 'model' },
    });
    const refused = await gw.call('POST', '/v1/embeddings', {
      token: limited,
      body: { model: VOYAGE_MM, input: 'x' },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 403, param: 'model' });
    const ok = await gw.call('POST', '/v1/embeddings', {
      token: limited,
      body: { model: OPENAI, input: 'x' },
    });
    expect(ok.status).toBe(200);
  });

  it('401 without a key, in the endpoint body shape', async () => {
    const r = await gw.call('POST', '/v1/multimodalembeddings', { body: body(VOYAGE_MM) });
    expect(r.status).toBe(401);
    expect(typeof r.body.detail).toBe('string');
  });

  it('images never reach a text-only model', async () => {
    const r = await gw.call('POST', '/v1/multimodalembeddings', {
      token: key,
      body: {
        model: OPENAI,
        inputs: [{ content: [{ type: 'image_base64', image_base64: dataUrl('image/png', makePng(4, 4)) }] }],
      },
    });
    expect(r.status).toBe(400);
    expect(r.body.detail).toMatch(/cannot embed images/);
    expect(openaiUp.requests).toEqual([]);
  });

  it('the /api/v1 alias answers and keeps the Voyage error shape', async () => {
    const ok = await gw.call('POST', '/api/v1/multimodalembeddings', { token: key, body: body(VOYAGE_MM) });
    expect(ok.status).toBe(200);
    const bad = await gw.call('POST', '/api/v1/multimodalembeddings', {
      token: key,
      body: { model: VOYAGE_MM, inputs: [] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toBe('inputs must not be empty');
  });
});

describe('bad input: a 400 whose detail names the input', () => {
  const png = (w: number, h: number) => dataUrl('image/png', makePng(w, h));
  const bmp = Buffer.concat([Buffer.from('BM', 'latin1'), Buffer.alloc(60)]);
  it.each([
    ['empty inputs', [], /^inputs must not be empty$/],
    [
      'more than 1000 inputs',
      Array.from({ length: 1001 }, () => ({ content: [{ type: 'text', text: 'x' }] })),
      /^inputs has 1001 items, more than the limit of 1000$/,
    ],
    [
      'an empty content',
      [{ content: [{ type: 'text', text: 'ok' }] }, { content: [] }],
      /^inputs\[1\]\.content: must not be empty$/,
    ],
    [
      'an unknown part type',
      [
        {
          content: [
            { type: 'text', text: 'ok' },
            { type: 'video_url', video_url: 'x' },
          ],
        },
      ],
      /^inputs\[0\]\.content\[1\]: unsupported part type "video_url"/,
    ],
    [
      'an image over the pixel limit',
      [
        { content: [{ type: 'text', text: 'ok' }] },
        { content: [{ type: 'image_base64', image_base64: dataUrl('image/gif', makeGif(5000, 4000)) }] },
      ],
      /^inputs\[1\]\.content\[0\]: .*16000000/,
    ],
    [
      'an unsupported format',
      [{ content: [{ type: 'image_base64', image_base64: dataUrl('image/png', bmp) }] }],
      /^inputs\[0\]\.content\[0\]: unsupported image format/,
    ],
    [
      'a non-image data URL type',
      [
        {
          content: [
            { type: 'text', text: 'ok' },
            { type: 'image_url', image_url: dataUrl('image/bmp', bmp) },
          ],
        },
      ],
      /^inputs\[0\]\.content\[1\]: /,
    ],
  ])('%s', async (_name, inputs, detail) => {
    const r = await gw.call('POST', '/v1/multimodalembeddings', {
      token: key,
      body: { model: VOYAGE_MM, inputs: [...(inputs as unknown[])] },
    });
    expect(r.status).toBe(400);
    expect(r.body.detail).toMatch(detail);
    expect(r.body.error).toMatchObject({ code: 400, message: r.body.detail });
    expect(voyageUp.requests).toEqual([]);
  });

  it('an image within limits still passes (control)', async () => {
    const r = await gw.call('POST', '/v1/multimodalembeddings', {
      token: key,
      body: {
        model: VOYAGE_MM,
        inputs: [{ content: [{ type: 'image_base64', image_base64: png(10, 10) }] }],
      },
    });
    expect(r.status).toBe(200);
  });

  it.each([
    ['a loopback literal', () => `http://127.0.0.1:${imagePort}/`],
    ['the metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
  ])('refuses %s without connecting', async (_name, url) => {
    const err = await failure(
      voyage().multimodalEmbed({
        model: VOYAGE_MM,
        inputs: [
          { content: [{ type: 'text', text: 'fine' }] },
          {
            content: [
              { type: 'text', text: 'see' },
              { type: 'image_url', imageUrl: url() },
            ],
          },
        ],
      }),
    );
    expect(err.statusCode).toBe(400);
    expect((err.body as { detail: string }).detail).toMatch(
      /^inputs\[1\]\.content\[1\]: refused to fetch image URL/,
    );
    expect(imageHits).toEqual([]);
    expect(voyageUp.requests).toEqual([]);
  });

  // docs/embeddings.md "Empty text": each route does what its provider is documented to do.
  // OpenAI refuses an empty string (the voyageai SDK's embed gets the same); what Voyage's multimodal
  // endpoint does with an empty text part is not documented, so it is forwarded for Voyage to judge.
  it('an empty text part is forwarded on the multimodal route, refused on /v1/embeddings', async () => {
    const mm = await gw.call('POST', '/v1/multimodalembeddings', {
      token: key,
      body: {
        model: VOYAGE_MM,
        inputs: [
          {
            content: [
              { type: 'text', text: '' },
              { type: 'image_base64', image_base64: png(4, 4) },
            ],
          },
        ],
      },
    });
    expect(mm.status).toBe(200);
    expect(voyageUp.requests[0]!.json.inputs[0].content[0]).toEqual({ type: 'text', text: '' });
    const err = await voyage()
      .embed({ model: VOYAGE_TEXT, input: ['alpha', ''] })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(VoyageAIError);
    expect((err as VoyageAIError).statusCode).toBe(400);
    expect(voyageUp.requests).toHaveLength(1);
  });

  it('openai endpoint: the offending input index in the message and param', async () => {
    const r = await gw.call('POST', '/v1/embeddings', {
      token: key,
      body: { model: OPENAI, input: ['ok', ''] },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 400, param: 'input[1]' });
    expect(r.body.detail).toBeUndefined();
  });
});

describe('usage accounting', () => {
  it('settles the quota on the actual usage and writes a request log per request', async () => {
    const fresh = await gw.call('POST', '/api/key', { cookie, body: { name: 'acct', quota_limit: 1 } });
    const acct = fresh.body.data;
    voyageUsage = 'none';
    await voyage(acct.key).multimodalEmbed({
      model: VOYAGE_MM,
      inputs: [{ content: [{ type: 'image_url', imageUrl: imageUrl('/c.jpg') }] }],
    });
    await voyage(acct.key).embed({ model: OPENAI, input: ['a', 'b'] });
    // Settlements are written with the request logs: flush before reading the spend.
    await gw.services.requestLogs.flush();
    const row = await gw.services.repos.apiKeys.byId(acct.id);
    // 800x600 image = 858 tokens and 8 upstream-reported tokens, at 1 micro-USD per token.
    expect(row!.quota_used_micros).toBe(tokensOf(800 * 600) + 8);
    const { rows } = await gw.services.repos.logs.list({ keyId: acct.id }, 0, 10);
    expect(
      rows.map((r) => [r.endpoint, r.model, r.status, r.prompt_tokens, r.cost_micros, r.provider]).sort(),
    ).toEqual(
      [
        ['embeddings', OPENAI, 200, 8, 8, 'openai'],
        ['multimodalembeddings', VOYAGE_MM, 200, tokensOf(800 * 600), tokensOf(800 * 600), 'voyage'],
      ].sort(),
    );
  });

  it('holds quota for a large photo as Voyage bills it (2 megapixels), not its own 12', async () => {
    // $0.01 = 10,000 micro-USD at 1 micro-USD a token: 12,000,000 pixels would be 21,429 tokens
    // (refused as over quota before the call), Voyage bills 2,000,000 (3,572 tokens).
    const fresh = (await gw.call('POST', '/api/key', { cookie, body: { name: 'photo', quota_limit: 0.01 } }))
      .body.data;
    voyageUsage = 'none';
    const photo = dataUrl('image/jpeg', makeJpeg(4000, 3000));
    const res = await voyage(fresh.key).multimodalEmbed({
      model: VOYAGE_MM,
      inputs: [{ content: [{ type: 'image_base64', imageBase64: photo }] }],
    });
    expect(res.usage).toMatchObject({
      text_tokens: 0,
      image_pixels: 2_000_000,
      totalTokens: tokensOf(2_000_000),
    });
    await gw.services.requestLogs.flush();
    expect((await gw.services.repos.apiKeys.byId(fresh.id))!.quota_used_micros).toBe(tokensOf(2_000_000));
    // What the upstream reports passes through as it is.
    voyageUsage = 'full';
    const reported = await voyage(fresh.key).multimodalEmbed({
      model: VOYAGE_MM,
      inputs: [{ content: [{ type: 'image_base64', imageBase64: photo }] }],
    });
    expect(reported.usage).toMatchObject({ text_tokens: 9, image_pixels: 100000, totalTokens: 188 });
  });

  it('402 when the quota is exhausted, logged, and nothing sent upstream', async () => {
    const broke = await gw.call('POST', '/api/key', { cookie, body: { name: 'broke', quota_limit: 0 } });
    const err = await failure(
      voyage(broke.body.data.key).multimodalEmbed({
        model: VOYAGE_MM,
        inputs: [{ content: [{ type: 'text', text: 'x' }] }],
      }),
    );
    expect(err.statusCode).toBe(402);
    expect((err.body as { detail: string }).detail).toMatch(/quota exhausted/);
    expect(voyageUp.requests).toEqual([]);
    await gw.services.requestLogs.flush();
    const { rows } = await gw.services.repos.logs.list({ keyId: broke.body.data.id }, 0, 10);
    expect(rows.map((r) => [r.endpoint, r.status])).toEqual([['multimodalembeddings', 402]]);
  });

  it('a key over its quota is refused before any image URL is fetched', async () => {
    const broke = await gw.call('POST', '/api/key', { cookie, body: { name: 'broke-urls', quota_limit: 0 } });
    const err = await failure(
      voyage(broke.body.data.key).multimodalEmbed({
        model: VOYAGE_MM,
        inputs: Array.from({ length: 8 }, (_, i) => ({
          content: [{ type: 'image_url' as const, imageUrl: imageUrl(`/paid/${i}.jpg`) }],
        })),
      }),
    );
    expect(err.statusCode).toBe(402);
    expect(imageHits).toEqual([]);
    expect(voyageUp.requests).toEqual([]);
  });

  it('all the image fetches of a request share one deadline (gateway.image_fetch_total_timeout_ms)', async () => {
    const quick = await startTestGateway({
      gateway: {
        discover_models: false,
        image_allow_hosts: ['localhost'],
        image_fetch_timeout_ms: 2000,
        image_fetch_total_timeout_ms: 500,
        max_attempts: 1,
      },
      channels: [
        {
          name: 'voyage',
          kind: 'voyage',
          base_url: `${voyageUp.url}/v1`,
          keys: ['voyage-key'],
          models: [VOYAGE_MM],
        },
      ],
      models: [{ id: VOYAGE_MM, pricing: { prompt: String(PROMPT_PRICE), image_pixel: '0' } }],
    });
    try {
      const c = await quick.login();
      const k = (await quick.call('POST', '/api/key', { cookie: c, body: { name: 'deadline' } })).body.data
        .key;
      // 12 images of 300 ms each, 4 at a time: 900 ms, each well within its own 2 s.
      const r = await quick.call('POST', '/v1/multimodalembeddings', {
        token: k,
        body: {
          model: VOYAGE_MM,
          inputs: Array.from({ length: 12 }, (_, i) => ({
            content: [{ type: 'image_url', image_url: imageUrl(`/slow/deadline-${i}.jpg`) }],
          })),
        },
      });
      expect(r.status).toBe(400);
      expect(r.body.detail).toContain('took longer than 500 ms');
      expect(voyageUp.requests).toEqual([]);
    } finally {
      await quick.close();
    }
  });

  it('logs failures of the main key too', async () => {
    await gw.services.requestLogs.flush();
    const { rows } = await gw.services.repos.logs.list({ keyId }, 0, 200);
    expect(rows.some((r) => r.status === 200 && r.endpoint === 'multimodalembeddings')).toBe(true);
    expect(rows.some((r) => r.status === 400 && r.error_kind === 'context_length')).toBe(true);
  });
});

describe('without a default embedding model', () => {
  it('a request without model is a 400 naming model', async () => {
    const bare = await startTestGateway({ gateway: { discover_models: false } });
    try {
      const c = await bare.login();
      const k = (await bare.call('POST', '/api/key', { cookie: c, body: { name: 'x' } })).body.data.key;
      const r = await bare.call('POST', '/v1/multimodalembeddings', {
        token: k,
        body: { inputs: [{ content: [{ type: 'text', text: 'x' }] }] },
      });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: { param: 'model' } });
      expect(r.body.detail).toMatch(/^model: is required/);
    } finally {
      await bare.close();
    }
  });
});
