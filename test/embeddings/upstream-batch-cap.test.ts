import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { UpstreamError } from '../../src/gateway/errors.js';
import {
  type FakeAnswer,
  type FakeUpstream,
  type ReceivedRequest,
  startFakeUpstream,
} from '../helpers/fake-upstream.js';
import {
  teiChannel as channel,
  clearRequests,
  type EmbeddingGateway,
  embedDirect,
  embeddingModel,
  ROUTE,
  sizes,
  startEmbeddingGateway,
  texts,
  vectors as vectorsOf,
} from './embedding-gateway.js';

/**
 * An upstream's own cap on the inputs of one request (docs/embeddings.md, "Batching"): a
 * text-embeddings-inference server started with `--max-client-batch-size 32` refuses a larger
 * batch with `413 {"error":"batch size 70 > maximum allowed batch size 32","error_type":"Validation"}`
 * (its OpenAI route: `{"message", "code": 413, "type"}`). The gateway splits the batch to the
 * stated size and retries on the same upstream, and remembers the cap for the channel. A 413
 * that states no cap (a body limit) is this upstream's limit, not the client's fault: it is halved
 * on the same upstream (upstream-413-halving.test.ts), and when one input alone is refused the next
 * channel serves. TEI's other validation 413s are the client's (upstream-tei-validation.test.ts).
 */
const CAPPED = 'tei/bge-small'; // served by a TEI that caps batches at 32
const CAPPED_OAI = 'tei/bge-base'; // the same, answering with TEI's OpenAI-route error body
const LIMITED = 'tei/gte-small'; // channel a answers 413 without a cap; channel b serves
const AGING = 'tei/bge-large'; // the same TEI as CAPPED, for the expiry of its remembered cap
const CAP = 32;

let tei: FakeUpstream;
let teiOai: FakeUpstream;
let teiAging: FakeUpstream;
let small: FakeUpstream;
let big: FakeUpstream;
let g: EmbeddingGateway;

/** Each input `t<i>` embeds as `[i, 0.5]`, so order is checkable; usage is 2 tokens per input. */
const vectors = vectorsOf(2);

/** A TEI server with `--max-client-batch-size 32`. */
const capped =
  (shape: 'native' | 'openai') =>
  (r: ReceivedRequest): FakeAnswer => {
    const n = (r.json.input as string[]).length;
    if (n <= CAP) return vectors(r);
    const message = `batch size ${n} > maximum allowed batch size ${CAP}`;
    return {
      status: 413,
      json:
        shape === 'native'
          ? { error: message, error_type: 'Validation' }
          : { message, code: 413, type: 'validation' },
    };
  };

beforeAll(async () => {
  tei = await startFakeUpstream({ [ROUTE]: capped('native') });
  teiOai = await startFakeUpstream({ [ROUTE]: capped('openai') });
  teiAging = await startFakeUpstream({ [ROUTE]: capped('native') });
  small = await startFakeUpstream();
  big = await startFakeUpstream({ [ROUTE]: vectors });
  g = await startEmbeddingGateway(
    {
      channels: [
        channel('tei', tei, CAPPED),
        channel('tei-oai', teiOai, CAPPED_OAI),
        channel('tei-aging', teiAging, AGING),
        channel('small', small, LIMITED, 10),
        channel('big', big, LIMITED, 0),
      ],
      models: [CAPPED, CAPPED_OAI, LIMITED, AGING].map(embeddingModel),
    },
    () => [tei, teiOai, teiAging, small, big],
  );
});
afterAll(() => g?.close());
beforeEach(() => clearRequests([tei, teiOai, teiAging, small, big]));

const embed = (model: string, input: string[]) => g.embed(model, input);

describe('an upstream that caps the inputs of one request', () => {
  it.each([
    [CAPPED, () => tei],
    [CAPPED_OAI, () => teiOai],
  ])('%s: splits a refused batch to the stated size, in input order, usage summed', async (model, up) => {
    const r = await embed(model, texts(70));
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(70);
    expect(r.body.data.map((d: { index: number }) => d.index)).toEqual(texts(70).map((_, i) => i));
    expect(r.body.data.map((d: { embedding: number[] }) => d.embedding[0])).toEqual(
      texts(70).map((_, i) => i),
    );
    expect(r.body.usage).toEqual({ prompt_tokens: 140, total_tokens: 140 });
    // The refused batch, then slices of the stated size (a few at a time, so any order).
    expect(sizes(up())[0]).toBe(70);
    expect(
      sizes(up())
        .slice(1)
        .sort((a, b) => a - b),
    ).toEqual([6, 32, 32]);
    expect(r.headers.get('x-modelgate-attempts')).toBe(`${model === CAPPED ? 'tei' : 'tei-oai'}/${model}=ok`);

    // Remembered for the channel: the next large request is split up front, nothing refused.
    up().requests.length = 0;
    const again = await embed(model, texts(40));
    expect(again.status).toBe(200);
    expect(again.body.data.map((d: { embedding: number[] }) => d.embedding[0])).toEqual(
      texts(40).map((_, i) => i),
    );
    expect(sizes(up()).sort((a, b) => a - b)).toEqual([8, 32]);
  });

  it('a 413 that states no cap, even for one input, falls back to the next channel, not a 400 to the client', async () => {
    small.on(ROUTE, {
      status: 413,
      headers: { 'content-type': 'text/plain' },
      body: 'Failed to buffer the request body: length limit exceeded',
    });
    const r = await embed(LIMITED, texts(5));
    expect(r.status).toBe(200);
    expect(r.body.data.map((d: { embedding: number[] }) => d.embedding[0])).toEqual([0, 1, 2, 3, 4]);
    // Halved on the upstream that refused it (upstream-413-halving.test.ts) until one input alone
    // was refused: then the next channel.
    expect(sizes(small)).toEqual([5, 3, 2, 1]);
    expect(sizes(big)).toEqual([5]);
    expect(r.headers.get('x-modelgate-attempts')).toBe(`small/${LIMITED}=too_large:413, big/${LIMITED}=ok`);
  });

  it('when every channel refuses it as too large, the client gets a 413 (not retried by SDKs), not a 400', async () => {
    // TEI's `--payload-limit` (a size refusal; its validation 413s are mostly the client's 400,
    // upstream-tei-validation.test.ts), even for one input.
    const refuse: FakeAnswer = {
      status: 413,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: 'Failed to buffer the request body: length limit exceeded',
    };
    small.on(ROUTE, refuse);
    big.on(ROUTE, refuse);
    try {
      const r = await embed(LIMITED, texts(3));
      expect(r.status).toBe(413);
      expect(r.body.error).toMatchObject({
        code: 413,
        metadata: { upstream_kind: 'too_large', upstream_status: 413 },
      });
      expect(sizes(small)).toEqual([3, 2, 1]);
      expect(sizes(big)).toEqual([3, 2, 1]);
    } finally {
      big.on(ROUTE, vectors);
    }
  });

  it("TEI's 413 for an input over the model's length stays the client's 400 naming input", async () => {
    small.on(ROUTE, {
      status: 413,
      json: {
        error: 'Input validation error: `inputs` must have less than 512 tokens. Given: 600',
        error_type: 'Validation',
      },
    });
    const r = await embed(LIMITED, ['a very long text']);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 400, param: 'input' });
    expect(r.body.error.message).toMatch(/less than 512 tokens/);
  });
});

describe('a remembered cap', () => {
  it('is forgotten after 10 minutes: a server restarted with a larger cap is used fully again', async () => {
    // Only Date is faked: the gateway reads the time for the cap's expiry with Date.now().
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const t0 = Date.now();
      expect((await embed(AGING, texts(40))).status).toBe(200);
      expect(sizes(teiAging)).toEqual([40, 32, 8]); // refused, then split; the cap remembered at t0
      teiAging.requests.length = 0;
      vi.setSystemTime(t0 + 10 * 60_000 - 1);
      expect((await embed(AGING, texts(40))).status).toBe(200);
      expect(sizes(teiAging).sort((a, b) => a - b)).toEqual([8, 32]); // still split up front
      teiAging.requests.length = 0;
      vi.setSystemTime(t0 + 10 * 60_000);
      const late = await embed(AGING, texts(40));
      expect(late.status).toBe(200);
      expect(late.body.data.map((d: { embedding: number[] }) => d.embedding[0])).toEqual(
        texts(40).map((_, i) => i),
      );
      expect(sizes(teiAging)).toEqual([40, 32, 8]); // sent whole once more
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('embedWithAdapter after a stated cap', () => {
  it('starts no further slice of a split batch once another batch failed', async () => {
    // Batches of 5 (a cap remembered before): t0..t4 fails after 100 ms; t5..t9 is refused as
    // over a cap of 2 and split into slices sent one at a time; the first takes 300 ms, so
    // t0..t4 has failed before the second (t7, t8) would start.
    const handler = (r: ReceivedRequest): FakeAnswer => {
      const input = r.json.input as string[];
      if (input[0] === 't0')
        return { delayMs: 100, status: 500, json: { error: 'backend failed', error_type: 'Backend' } };
      if (input.length > 2)
        return {
          status: 413,
          json: { error: `batch size ${input.length} > maximum allowed batch size 2` },
        };
      return { ...vectors(r), delayMs: 300 };
    };
    const {
      out: err,
      learned: caps,
      up,
    } = await embedDirect(
      handler,
      texts(10),
      { concurrency: 2, maxBatch: 5 },
      () => new Promise((r) => setTimeout(r, 500)), // the slices in flight finish
    );
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).kind).toBe('server_error');
    expect(caps).toEqual([2]);
    expect(up.requests.map((r) => r.json.input.join()).sort()).toEqual(
      ['t0,t1,t2,t3,t4', 't5,t6', 't5,t6,t7,t8,t9'].sort(),
    );
  });
});
