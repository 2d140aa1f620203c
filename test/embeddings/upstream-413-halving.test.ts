import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/gateway/errors.js';
import { decodeImageDataUrl, inspectImage } from '../../src/gateway/images/image-data.js';
import {
  type FakeAnswer,
  type FakeUpstream,
  type ReceivedRequest,
  startFakeUpstream,
} from '../helpers/fake-upstream.js';
import {
  AXUM_413,
  bodyLimited,
  teiChannel as channel,
  clearRequests,
  type EmbeddingGateway,
  embedDirect,
  embeddingModel,
  firsts,
  limited,
  ROUTE,
  sizes,
  startEmbeddingGateway,
  texts,
  vectors,
} from './embedding-gateway.js';
import { dataUrl, makePng } from './test-images.js';

/**
 * An upstream 413 that states no batch cap (docs/embeddings.md, "Batching"): a body limit in front
 * of the model (text-embeddings-inference's `--payload-limit`, whose axum layer answers
 * `413 text/plain` "Failed to buffer the request body: length limit exceeded"; nginx's
 * `client_max_body_size` page). Half as many inputs make about half the body, so the gateway
 * halves the batch and retries on the same upstream, down to one input per call, and, once the
 * request was served, remembers the largest body served (below the smallest refused) for 10
 * minutes, as it remembers a stated cap, splitting later requests up front to fit it
 * (upstream-413-memory.test.ts). One input still refused is `too_large` (the next channel, else the client's
 * 413). TEI's own validation errors, also 413s, are not halved.
 */
const MM_ROUTE = 'POST /v1/multimodalembeddings';
const PROXIED = 'tei/e5-small'; // behind a body limit that fits 20 inputs
const TINY = 'tei/e5-base'; // channel tiny refuses even one input; channel roomy serves
const STRICT = 'tei/e5-large'; // channel strict answers TEI validation 413s; roomy serves
const FLAKY = 'tei/e5-mistral'; // channel flaky: over 35 inputs refused, the second half a 500
const HANGING = 'tei/gte-base'; // over 35 refused, the first half never answered
const VOYAGE_MM = 'voyageai/voyage-multimodal-3'; // behind a proxy's byte limit

const NGINX_413 =
  '<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';
const MM_BODY_LIMIT = 1_600; // bytes
const BODY_LIMIT = 5_000; // bytes

let proxied: FakeUpstream;
let tiny: FakeUpstream;
let strict: FakeUpstream;
let flaky: FakeUpstream;
let hanging: FakeUpstream;
let roomy: FakeUpstream;
let voyage: FakeUpstream;
let g: EmbeddingGateway;

const all = () => [proxied, tiny, strict, flaky, hanging, roomy, voyage];

const byteLimited = bodyLimited(BODY_LIMIT);

/** Voyage multimodal usage for the inputs of one call: 2 text tokens an input, pixels as they are. */
function voyageAnswer(r: ReceivedRequest): FakeAnswer {
  if (Buffer.byteLength(r.body) > MM_BODY_LIMIT)
    return { status: 413, headers: { 'content-type': 'text/html' }, body: NGINX_413 };
  const inputs = r.json.inputs as { content: { type: string; text?: string; image_base64?: string }[] }[];
  let pixels = 0;
  let imageTokens = 0;
  for (const { content } of inputs)
    for (const p of content)
      if (p.type === 'image_base64') {
        const n = inspectImage(decodeImageDataUrl(p.image_base64!)).pixels;
        pixels += n;
        imageTokens += Math.ceil(n / 560);
      }
  const text = 2 * inputs.length;
  return {
    json: {
      object: 'list',
      data: inputs.map(({ content }, index) => ({
        object: 'embedding',
        embedding: [Number(content[0]!.text!.slice(1)), 0.25],
        index,
      })),
      model: r.json.model,
      usage: { text_tokens: text, image_pixels: pixels, video_pixels: 0, total_tokens: text + imageTokens },
    },
  };
}

beforeAll(async () => {
  proxied = await startFakeUpstream({ [ROUTE]: limited(20, vectors()) });
  tiny = await startFakeUpstream({
    [ROUTE]: { status: 413, headers: { 'content-type': 'text/html' }, body: NGINX_413 },
  });
  strict = await startFakeUpstream();
  flaky = await startFakeUpstream({
    [ROUTE]: limited(35, (r) =>
      r.json.input[0] === 't35'
        ? { status: 500, json: { error: 'backend failed', error_type: 'Backend' } }
        : vectors(3)(r),
    ),
  });
  hanging = await startFakeUpstream({ [ROUTE]: limited(35, () => ({ hang: true })) });
  roomy = await startFakeUpstream({ [ROUTE]: vectors() });
  voyage = await startFakeUpstream({ [MM_ROUTE]: voyageAnswer });
  g = await startEmbeddingGateway(
    {
      channels: [
        channel('proxied', proxied, [PROXIED]),
        channel('tiny', tiny, [TINY], 10),
        channel('strict', strict, [STRICT], 10),
        channel('flaky', flaky, [FLAKY], 10),
        channel('roomy', roomy, [TINY, STRICT, FLAKY]),
        channel('hanging', hanging, [HANGING]),
        {
          name: 'voyage',
          kind: 'voyage',
          base_url: `${voyage.url}/v1`,
          keys: ['key-voyage'],
          models: [VOYAGE_MM],
        },
      ],
      models: [
        ...[PROXIED, TINY, STRICT, FLAKY, HANGING].map(embeddingModel),
        // Text at 1 micro-USD a token, images at 1 micro-USD per 100 pixels.
        { id: VOYAGE_MM, pricing: { prompt: '0.000001', image_pixel: '0.00000001' } },
      ],
    },
    all,
  );
});
afterAll(() => g?.close());
beforeEach(() => clearRequests(all()));

const embed = (model: string, input: string[], token?: string) => g.embed(model, input, { token });

describe('an upstream 413 that states no cap', () => {
  it('halves the batch on the same upstream until it is served: input order, usage and billing exact', async () => {
    const acct = await g.newKey('halving');
    const r = await embed(PROXIED, texts(70), acct.key);
    expect(r.status).toBe(200);
    expect(r.body.data.map((d: { index: number }) => d.index)).toEqual(texts(70).map((_, i) => i));
    expect(firsts(r)).toEqual(texts(70).map((_, i) => i));
    expect(r.body.usage).toEqual({ prompt_tokens: 140, total_tokens: 140 });
    // One at a time: 70 refused, 35 refused, 18 and 17 served; the other 35 is not sent whole
    // again, it goes as 18 and 17 at once.
    expect(sizes(proxied)).toEqual([70, 35, 18, 17, 18, 17]);
    expect(r.headers.get('x-modelgate-attempts')).toBe(`proxied/${PROXIED}=ok`);
    const { rows, used } = await g.billing(acct.id);
    expect(rows.map((l) => [l.status, l.prompt_tokens, l.cost_micros])).toEqual([[200, 140, 140]]);
    expect(used).toBe(140);

    // The largest body served (18 inputs t35..t52) is remembered for the channel: the next large
    // request is split to fit it up front, nothing refused. t0..t9 are a byte shorter, so the
    // first call carries 19 of them.
    proxied.requests.length = 0;
    const again = await embed(PROXIED, texts(40));
    expect(again.status).toBe(200);
    expect(firsts(again)).toEqual(texts(40).map((_, i) => i));
    expect(sizes(proxied).sort((a, b) => a - b)).toEqual([3, 18, 19]);
  });

  it('one input still refused is too_large: the next channel serves, and nothing is remembered', async () => {
    for (let round = 0; round < 2; round++) {
      tiny.requests.length = 0;
      roomy.requests.length = 0;
      const r = await embed(TINY, texts(5));
      expect(r.status).toBe(200);
      expect(firsts(r)).toEqual([0, 1, 2, 3, 4]);
      // 5 refused, then 3, then 2, then the first input alone: the attempt ends there.
      expect(sizes(tiny)).toEqual([5, 3, 2, 1]);
      expect(sizes(roomy)).toEqual([5]);
      expect(r.headers.get('x-modelgate-attempts')).toBe(`tiny/${TINY}=too_large:413, roomy/${TINY}=ok`);
    }
  });

  it.each([
    ['an empty input', { error: '`inputs` cannot be empty', error_type: 'Validation' }],
    [
      'a bad dimensions (OpenAI route)',
      { message: '`dimensions` should be positive', code: 413, type: 'Validation' },
    ],
  ])("TEI's validation 413 for %s is not halved: it says the same for fewer inputs", async (_name, json) => {
    strict.on(ROUTE, { status: 413, json });
    const r = await embed(STRICT, texts(6));
    // The client's request, not its size: a 400, the model's other channels not tried
    // (upstream-tei-validation.test.ts).
    expect(r.status).toBe(400);
    expect(r.body.error.metadata).toEqual({ upstream_kind: 'bad_request', upstream_status: 413 });
    expect(sizes(strict)).toEqual([6]);
    expect(sizes(roomy)).toEqual([]);
  });

  it("TEI's 413 for an input over the model's length is not halved: the client's 400", async () => {
    strict.on(ROUTE, {
      status: 413,
      json: {
        error: 'Input validation error: `inputs` must have less than 512 tokens. Given: 600',
        error_type: 'Validation',
      },
    });
    const r = await embed(STRICT, texts(6));
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 400, param: 'input' });
    expect(sizes(strict)).toEqual([6]);
    expect(sizes(roomy)).toEqual([]);
  });

  it('a slice failing otherwise fails the attempt: retried, then the next channel; only what served the answer is billed', async () => {
    const acct = await g.newKey('flaky');
    const r = await embed(FLAKY, texts(70), acct.key);
    expect(r.status).toBe(200);
    expect(firsts(r)).toEqual(texts(70).map((_, i) => i));
    // roomy's 2 tokens an input, not flaky's 3 for the half it embedded before failing.
    expect(r.body.usage).toEqual({ prompt_tokens: 140, total_tokens: 140 });
    // First try: 70 refused, 35 served, the second 35 a 500. The retry on flaky sends the missing
    // 35 only (retry-served-slices.test.ts) and fails alike; roomy then serves the whole request:
    // flaky's vectors are not mixed into roomy's answer (docs/embeddings.md, "Retries").
    expect(sizes(flaky)).toEqual([70, 35, 35, 35]);
    expect(flaky.requests.map((q) => q.json.input[0])).toEqual(['t0', 't0', 't35', 't35']);
    expect(sizes(roomy)).toEqual([70]);
    expect(r.headers.get('x-modelgate-attempts')).toBe(
      `flaky/${FLAKY}=server_error:500, flaky/${FLAKY}=server_error:500, roomy/${FLAKY}=ok`,
    );
    const { rows, used } = await g.billing(acct.id);
    expect(rows.map((l) => [l.status, l.prompt_tokens, l.cost_micros, l.provider])).toEqual([
      [200, 140, 140, 'roomy'],
    ]);
    expect(used).toBe(140);
  });

  it('a client that leaves mid-way stops the slices: the one in flight is cut, no further one starts', async () => {
    const abort = new AbortController();
    const sent = fetch(`${g.gw.url}/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: HANGING, input: texts(70) }),
      signal: abort.signal,
    }).catch(() => 'aborted');
    await expect.poll(() => hanging.requests.length, { timeout: 5_000, interval: 5 }).toBe(2);
    abort.abort();
    expect(await sent).toBe('aborted');
    expect(await hanging.requests[1]!.closed).toEqual({ completed: false });
    let log: any;
    for (let i = 0; i < 100 && !log; i++) {
      await g.gw.services.requestLogs.flush();
      const logs = await g.gw.call('GET', '/api/log?status=499&page_size=100', { cookie: g.cookie });
      log = logs.body.data.find((l: { model: string }) => l.model === HANGING);
      if (!log) await new Promise((res) => setTimeout(res, 20));
    }
    expect(log).toMatchObject({ status: 499, error_kind: 'aborted', cost: 0 });
    expect(log.attempts.map((a: { error_kind: string }) => a.error_kind)).toEqual(['client_aborted']);
    // The attempt is over (logged): the second half of 35 was never sent.
    expect(sizes(hanging)).toEqual([70, 35]);
  });

  it('multimodal inputs behind a byte limit: halved until each call fits, usage and pixels summed', async () => {
    const acct = await g.newKey('voyage');
    const inputs = Array.from({ length: 12 }, (_, i) => ({
      content: [
        { type: 'text', text: `t${i}` },
        { type: 'image_base64', image_base64: dataUrl('image/png', makePng(10 + i, 12)) },
      ],
    }));
    const r = await g.gw.call('POST', '/v1/multimodalembeddings', {
      token: acct.key,
      body: { model: VOYAGE_MM, inputs },
    });
    expect(r.status).toBe(200);
    expect(firsts(r)).toEqual(inputs.map((_, i) => i));
    const pixels = inputs.reduce((sum, _, i) => sum + (10 + i) * 12, 0);
    const imageTokens = inputs.reduce((sum, _, i) => sum + Math.ceil(((10 + i) * 12) / 560), 0);
    expect(r.body.usage).toEqual({
      text_tokens: 24,
      image_pixels: pixels,
      video_pixels: 0,
      total_tokens: 24 + imageTokens,
    });
    const bodies = voyage.requests.map((q) => Buffer.byteLength(q.body));
    expect(bodies[0]).toBeGreaterThan(MM_BODY_LIMIT); // the whole request, refused
    expect(voyage.requests.length).toBeGreaterThan(2);
    // Every input embedded exactly once, by a call that fitted.
    const served = voyage.requests.filter((q) => Buffer.byteLength(q.body) <= MM_BODY_LIMIT);
    expect(served.flatMap((q) => q.json.inputs.map((x: any) => x.content[0].text))).toEqual(
      inputs.map((x) => x.content[0]!.text),
    );
    const { rows, used } = await g.billing(acct.id);
    // 24 text tokens at 1 micro-USD, the pixels at 1 micro-USD per 100.
    const micros = 24 + Math.round(pixels / 100);
    expect(rows.map((l) => [l.status, l.prompt_tokens, l.cost_micros])).toEqual([
      [200, 24 + imageTokens, micros],
    ]);
    expect(used).toBe(micros);
  });
});

describe('embedWithAdapter halving', () => {
  it('never sends a size refused once: each refusal halves every later call of the attempt', async () => {
    // Two batches of 10 (a cap remembered before), one at a time, to an upstream taking 3.
    const { out, learned, bodies, up } = await embedDirect(limited(3, vectors()), texts(20), {
      concurrency: 1,
      maxBatch: 10,
    });
    expect(out).not.toBeInstanceOf(Error);
    const served = out as { vectors: number[][]; usage: unknown };
    expect(served.vectors.map((v) => v[0])).toEqual(texts(20).map((_, i) => i));
    expect(served.usage).toEqual({ textTokens: 40, totalTokens: 40 });
    // 10 refused, 5 refused; the rest never above 3. Halving each refused batch on its own
    // would have sent the other 5 and the second 10 whole, to be refused again.
    expect(sizes(up)).toEqual([10, 5, 3, 2, 3, 2, 3, 3, 3, 1]);
    // No cap stated; the largest body served is reported, once.
    expect(learned).toEqual([]);
    const servedBodies = up.requests
      .filter((q) => q.json.input.length <= 3)
      .map((q) => Buffer.byteLength(q.body));
    expect(bodies).toEqual([Math.max(...servedBodies)]);
  });

  it('a 413 that halving cannot cure ends the attempt after one refused call per size', async () => {
    const { out: err, learned, bodies, up } = await embedDirect(AXUM_413, texts(2048));
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).kind).toBe('too_large');
    // 2048, 1024, ..., 2, 1: twelve calls, not the 4,095 of a full binary split.
    expect(sizes(up)).toEqual([2048, 1024, 512, 256, 128, 64, 32, 16, 8, 4, 2, 1]);
    expect(learned).toEqual([]);
    expect(bodies).toEqual([]);
  });

  it('reports the body size halving proved once the request was served, and none when it failed', async () => {
    // The reviewer's case: 99 small inputs and one of 6,000 characters, a 5,000-byte limit.
    const failed = await embedDirect(byteLimited, [...texts(99), 'x'.repeat(6_000)]);
    expect((failed.out as UpstreamError).kind).toBe('too_large');
    expect(failed.bodies).toEqual([]);
    // Served at 40 light inputs, then 10 heavy ones: told once, after the last slice, the largest
    // body served (10 heavy inputs, larger than 40 light ones), below every body refused.
    const served = await embedDirect(
      byteLimited,
      texts(80).map((t, i) => (i < 40 ? t : `${t}${' '.repeat(400)}`)),
    );
    expect(served.out).not.toBeInstanceOf(Error);
    const bodies = served.up.requests.map((q) => Buffer.byteLength(q.body));
    const largest = Math.max(...bodies.filter((b) => b <= BODY_LIMIT));
    expect(served.bodies).toEqual([largest]);
    expect(served.up.requests.find((q) => Buffer.byteLength(q.body) === largest)!.json.input).toHaveLength(
      10,
    );
    expect(served.learned).toEqual([]);
  });
});
