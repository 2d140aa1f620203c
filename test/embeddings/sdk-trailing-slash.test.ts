import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VoyageAIClient, VoyageAIError } from 'voyageai';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * SDKs given a base URL with a trailing slash (`http://gw/v1/`, as the voyageai SDK's own default
 * `https://api.voyageai.com/v1/` is written) join their paths onto it with a slash of their own:
 * `/v1//multimodalembeddings`. The router treats a run of slashes as one (app-wide
 * `ignoreDuplicateSlashes`), so such a client is served instead of answered a 404 without
 * Voyage's `detail`.
 */
let gw: TestGateway;
let up: FakeUpstream;
let key: string;

const MM = 'voyageai/voyage-multimodal-3';
const TEXT = 'openai/text-embedding-3-small';

beforeAll(async () => {
  const answer = (n: number) => ({
    object: 'list',
    data: Array.from({ length: n }, (_, index) => ({ object: 'embedding', index, embedding: [index, 0.5] })),
    model: 'm',
  });
  up = await startFakeUpstream({
    'POST /v1/multimodalembeddings': (r) => ({
      json: {
        ...answer(r.json.inputs.length),
        usage: { text_tokens: 3, image_pixels: 0, video_pixels: 0, total_tokens: 3 },
      },
    }),
    'POST /v1/embeddings': (r) => ({
      json: { ...answer(r.json.input.length), usage: { prompt_tokens: 2, total_tokens: 2 } },
    }),
  });
  gw = await startTestGateway({
    gateway: { discover_models: false },
    channels: [
      { name: 'voyage', kind: 'voyage', base_url: `${up.url}/v1`, keys: ['vk'], models: [MM] },
      { name: 'openai', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['ok'], models: [TEXT] },
    ],
  });
  const cookie = await gw.login();
  key = (await gw.call('POST', '/api/key', { cookie, body: { name: 'k' } })).body.data.key;
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

describe('a base URL with a trailing slash', () => {
  it('voyageai SDK: multimodalEmbed and embed are served', async () => {
    const voyage = new VoyageAIClient({ apiKey: key, baseUrl: `${gw.url}/v1/`, maxRetries: 0 });
    const mm = await voyage.multimodalEmbed({
      inputs: [{ content: [{ type: 'text', text: 'hello' }] }],
      model: 'voyage-multimodal-3',
    });
    expect(mm.data?.[0]?.embedding).toEqual([0, 0.5]);
    const text = await voyage.embed({ input: ['a', 'b'], model: 'text-embedding-3-small' });
    expect(text.data?.map((d) => d.embedding)).toEqual([
      [0, 0.5],
      [1, 0.5],
    ]);
  });

  it("voyageai SDK: an error there still carries Voyage's detail", async () => {
    const voyage = new VoyageAIClient({ apiKey: key, baseUrl: `${gw.url}/v1/`, maxRetries: 0 });
    const err = await voyage.multimodalEmbed({ inputs: [], model: 'voyage-multimodal-3' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(VoyageAIError);
    expect((err as VoyageAIError).statusCode).toBe(400);
    expect((err as VoyageAIError).body).toMatchObject({ detail: expect.stringContaining('inputs') });
  });

  it('openai SDK: embeddings.create and models.list are served', async () => {
    const openai = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1/`, maxRetries: 0 });
    const r = await openai.embeddings.create({ model: TEXT, input: ['x'], encoding_format: 'float' });
    expect(r.data[0]?.embedding).toEqual([0, 0.5]);
    const ids = [];
    for await (const m of openai.models.list()) ids.push(m.id);
    expect(ids.sort()).toEqual([TEXT, MM].sort());
  });

  it('raw: a doubled slash is the same route, and an unknown path stays a 404', async () => {
    const r = await fetch(`${gw.url}/v1//multimodalembeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: [{ content: [{ type: 'text', text: 'x' }] }], model: MM }),
    });
    expect(r.status).toBe(200);
    const refused = await fetch(`${gw.url}/v1//multimodalembeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: [], model: MM }),
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ detail: expect.stringContaining('inputs') });
    const models = await fetch(`${gw.url}//v1//models`, { headers: { authorization: `Bearer ${key}` } });
    expect(models.status).toBe(200);
    const missing = await fetch(`${gw.url}/v1//nothing-here`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(missing.status).toBe(404);
  });
});
