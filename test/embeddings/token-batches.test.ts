import { countTokens } from 'gpt-tokenizer';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VoyageAIClient } from 'voyageai';
import { decodeImageDataUrl, inspectImage } from '../../src/gateway/images/image-data.js';
import { type FakeAnswer, type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { text } from '../helpers/texts.js';
import { dataUrl, makeJpeg } from './test-images.js';

/**
 * Upstream caps on the tokens of one request (embeddings.md 1.4, 1.7, 4): Voyage 120K for
 * voyage-3-large (and any text model the gateway does not know), 320K for voyage-4, 1M for
 * voyage-4-lite, 320K for the multimodal models (every 560 image pixels one token, an image
 * counted as at least 50,000 and at most 2,000,000 pixels as Voyage bills it), OpenAI
 * 300K. The fakes refuse a request over its cap as the real ones do (a 400), counting text with
 * o200k and images by their pixels; the gateway cuts a large valid request into calls under
 * the cap, and answers it whole, in input order, with the calls' usage summed.
 */
const VOYAGE_TEXT = 'voyageai/voyage-3-large';
const VOYAGE_MM = 'voyageai/voyage-multimodal-3';
const VOYAGE_4 = 'voyageai/voyage-4';
const VOYAGE_4_LITE = 'voyageai/voyage-4-lite';
const OPENAI = 'openai/text-embedding-3-small';
const CAPS: Record<string, number> = {
  'voyage-3-large': 120_000,
  'voyage-4': 320_000,
  'voyage-4-lite': 1_000_000,
  'voyage-multimodal-3': 320_000,
  'text-embedding-3-small': 300_000,
};

let voyageUp: FakeUpstream;
let openaiUp: FakeUpstream;
let gw: TestGateway;
let key: string;

/** Each input's first word is its index, so the vector tells which input it embeds. */
const indexOf = (s: string) => Number(s.slice(0, s.indexOf(' ')));

function overCap(model: string, tokens: number, detail: boolean): FakeAnswer | undefined {
  if (tokens <= CAPS[model]!) return undefined;
  const message = `Request to model '${model}' failed. The max allowed tokens per submitted batch is ${CAPS[model]}. Your batch has ${tokens} tokens.`;
  return detail
    ? { status: 400, json: { detail: message } }
    : { status: 400, json: { error: { message, type: 'invalid_request_error', param: null, code: null } } };
}

/** An image's pixels as Voyage bills them (a larger image is downsampled), embeddings.md 1.4. */
function billedPixels(url: string): number {
  return Math.min(2_000_000, Math.max(50_000, inspectImage(decodeImageDataUrl(url)).pixels));
}

function imageTokens(url: string): number {
  return Math.ceil(billedPixels(url) / 560);
}

beforeAll(async () => {
  voyageUp = await startFakeUpstream({
    'POST /v1/embeddings': (r) => {
      const input: string[] = r.json.input;
      const counts = input.map((s) => countTokens(s));
      const tokens = counts.reduce((a, b) => a + b, 0);
      return (
        overCap(r.json.model, tokens, true) ?? {
          json: {
            object: 'list',
            data: input.map((s, index) => ({ object: 'embedding', embedding: [indexOf(s), 0.5], index })),
            model: r.json.model,
            usage: { total_tokens: tokens },
          },
        }
      );
    },
    'POST /v1/multimodalembeddings': (r) => {
      let textTokens = 0;
      let pixels = 0;
      let tokens = 0;
      const first: number[] = [];
      for (const { content } of r.json.inputs) {
        first.push(indexOf(content[0].text));
        for (const p of content) {
          if (p.type === 'text') {
            const n = countTokens(p.text);
            textTokens += n;
            tokens += n;
          } else {
            pixels += billedPixels(p.image_base64);
            tokens += imageTokens(p.image_base64);
          }
        }
      }
      return (
        overCap(r.json.model, tokens, true) ?? {
          json: {
            object: 'list',
            data: first.map((i, index) => ({ object: 'embedding', embedding: [i, 0.25], index })),
            model: r.json.model,
            usage: { text_tokens: textTokens, image_pixels: pixels, video_pixels: 0, total_tokens: tokens },
          },
        }
      );
    },
  });
  openaiUp = await startFakeUpstream({
    'POST /v1/embeddings': (r) => {
      const input: number[][] = r.json.input;
      const tokens = input.reduce((a, ids) => a + ids.length, 0);
      return (
        overCap('text-embedding-3-small', tokens, false) ?? {
          json: {
            object: 'list',
            data: input.map((ids, index) => ({ object: 'embedding', index, embedding: [ids[0]!, 0.125] })),
            model: 'text-embedding-3-small',
            usage: { prompt_tokens: tokens, total_tokens: tokens },
          },
        }
      );
    },
  });
  gw = await startTestGateway({
    gateway: { discover_models: false, max_attempts: 1 },
    channels: [
      {
        name: 'voyage',
        kind: 'voyage',
        base_url: `${voyageUp.url}/v1`,
        keys: ['voyage-key'],
        models: [VOYAGE_TEXT, VOYAGE_MM, VOYAGE_4, VOYAGE_4_LITE],
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
  });
  const cookie = await gw.login();
  key = (await gw.call('POST', '/api/key', { cookie, body: { name: 'emb' } })).body.data.key;
});

afterAll(async () => {
  await gw?.close();
  await voyageUp?.close();
  await openaiUp?.close();
});

beforeEach(() => {
  voyageUp.requests.length = 0;
  openaiUp.requests.length = 0;
});

const voyage = () => new VoyageAIClient({ apiKey: key, baseUrl: `${gw.url}/v1`, maxRetries: 0 });

describe('a request over the upstream token cap is cut into calls under it', () => {
  it('voyage-3-large (120K tokens a call): 40 texts of ~3,600 tokens', async () => {
    const input = Array.from({ length: 40 }, (_, i) => `${i} ${text(20_000, false, i + 1)}`);
    const total = input.reduce((a, s) => a + countTokens(s), 0);
    expect(total).toBeGreaterThan(CAPS['voyage-3-large']!);
    const res = await voyage().embed({ model: VOYAGE_TEXT, input });
    expect(res.data?.map((d) => d.embedding?.[0])).toEqual(input.map((_, i) => i));
    expect(res.data?.map((d) => d.index)).toEqual(input.map((_, i) => i));
    expect(res.usage?.totalTokens).toBe(total);
    expect(voyageUp.requests.length).toBeGreaterThan(1);
    // Consecutive slices (sent concurrently, so they may arrive in any order): every input once.
    const calls = voyageUp.requests.map((r) => r.json.input as string[]);
    calls.sort((a, b) => indexOf(a[0]!) - indexOf(b[0]!));
    expect(calls.flat()).toEqual(input);
  });

  // The same ~144K tokens, over the 120K a model without a cap of its own gets, fit one call of
  // voyage-4 (320K) and of voyage-4-lite (1M): their caps come from the table, not the fallback.
  for (const model of [VOYAGE_4, VOYAGE_4_LITE])
    it(`${model} (${CAPS[model.slice('voyageai/'.length)]} tokens a call): 40 texts of ~3,600 tokens are one call`, async () => {
      const input = Array.from({ length: 40 }, (_, i) => `${i} ${text(20_000, false, i + 1)}`);
      const total = input.reduce((a, s) => a + countTokens(s), 0);
      expect(total).toBeGreaterThan(CAPS['voyage-3-large']!);
      const res = await voyage().embed({ model, input });
      expect(res.data?.map((d) => d.embedding?.[0])).toEqual(input.map((_, i) => i));
      expect(res.usage?.totalTokens).toBe(total);
      expect(voyageUp.requests).toHaveLength(1);
      expect(voyageUp.requests[0]!.json.model).toBe(model.slice('voyageai/'.length));
    });

  it('voyage-multimodal-3 (320K tokens a call): 100 inputs of text and a 9-megapixel image', async () => {
    const image = dataUrl('image/jpeg', makeJpeg(3000, 3000));
    const captions = Array.from({ length: 100 }, (_, i) => `${i} ${text(400, false, i + 1)}`);
    const inputs = captions.map((caption) => ({
      content: [
        { type: 'text' as const, text: caption },
        { type: 'image_base64' as const, imageBase64: image },
      ],
    }));
    const res = await voyage().multimodalEmbed({ model: VOYAGE_MM, inputs });
    expect(res.data?.map((d) => d.embedding?.[0])).toEqual(inputs.map((_, i) => i));
    const texts = captions.reduce((a, s) => a + countTokens(s), 0);
    // Each image billed (and counted toward the cap) as 2,000,000 pixels, 3,572 tokens.
    expect(res.usage).toMatchObject({
      text_tokens: texts,
      image_pixels: 100 * 2_000_000,
      video_pixels: 0,
      totalTokens: texts + 100 * imageTokens(image),
    });
    expect(texts + 100 * imageTokens(image)).toBeGreaterThan(CAPS['voyage-multimodal-3']!);
    expect(voyageUp.requests.length).toBeGreaterThan(1);
  });

  it('voyage-multimodal-3: 24 inputs with a 9-megapixel image are one call (images count as 2 megapixels)', async () => {
    // Counted at 9,000,000 pixels each (16,072 tokens) they would be 386K tokens, over the cap;
    // Voyage downsamples them to 2,000,000 (3,572 tokens): about 88K, one call.
    const image = dataUrl('image/jpeg', makeJpeg(3000, 3000));
    const captions = Array.from({ length: 24 }, (_, i) => `${i} ${text(400, false, i + 1)}`);
    const inputs = captions.map((caption) => ({
      content: [
        { type: 'text' as const, text: caption },
        { type: 'image_base64' as const, imageBase64: image },
      ],
    }));
    const res = await voyage().multimodalEmbed({ model: VOYAGE_MM, inputs });
    expect(res.data?.map((d) => d.embedding?.[0])).toEqual(inputs.map((_, i) => i));
    expect(res.usage).toMatchObject({ image_pixels: 24 * 2_000_000 });
    expect(voyageUp.requests).toHaveLength(1);
  });

  it('OpenAI (300K tokens a call): 40 token arrays of 8,000 ids', async () => {
    const input = Array.from({ length: 40 }, (_, i) => [
      i,
      ...Array.from({ length: 7_999 }, (_, j) => j % 1000),
    ]);
    const res = await new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 }).embeddings.create({
      model: OPENAI,
      input,
      encoding_format: 'float',
    });
    expect(res.data.map((d) => d.embedding[0])).toEqual(input.map((_, i) => i));
    expect(res.usage).toEqual({ prompt_tokens: 320_000, total_tokens: 320_000 });
    expect(openaiUp.requests.length).toBe(2);
  });

  it('a request well under the cap is one call', async () => {
    const res = await voyage().embed({ model: VOYAGE_TEXT, input: ['0 alpha', '1 beta'] });
    expect(res.data?.map((d) => d.embedding?.[0])).toEqual([0, 1]);
    expect(voyageUp.requests).toHaveLength(1);
  });
});
