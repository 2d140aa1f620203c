import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { FakeUpstream } from '../helpers/fake-upstream.js';
import {
  bodyLimited,
  clearRequests,
  type EmbeddingGateway,
  firsts,
  sizes,
  startTeiGateway,
  texts,
} from './embedding-gateway.js';

/**
 * What halving after a 413 that states no cap teaches about an upstream's body limit
 * (docs/embeddings.md, "Batching"): once a request was served, the largest body served below the
 * smallest refused is remembered for the channel for 10 minutes, and later requests are split up
 * front so each call's body fits it. Bytes, not an input count: a body limit counts bytes. A
 * request that fails remembers nothing. Each channel has its own memory.
 */
const AGING = 'tei/gte-large'; // bodies over AGING_LIMIT refused: a remembered body size that expires
const BYTES = 'tei/bge-base'; // channel bytes: bodies over BODY_LIMIT refused
const MIXED = 'tei/bge-large'; // channel mixed: the same limit
const HEAVY = 'tei/bge-small'; // channel heavy: the same limit
const BODY_LIMIT = 5_000; // bytes
const AGING_LIMIT = 150; // bytes: 10 inputs t<i> a call, not 20

let aging: FakeUpstream;
let bytes: FakeUpstream;
let mixed: FakeUpstream;
let heavy: FakeUpstream;
let g: EmbeddingGateway;
const all = () => [aging, bytes, mixed, heavy];

beforeAll(async () => {
  ({
    g,
    ups: { aging, bytes, mixed, heavy },
  } = await startTeiGateway({
    aging: [AGING, bodyLimited(AGING_LIMIT)],
    bytes: [BYTES, bodyLimited(BODY_LIMIT)],
    mixed: [MIXED, bodyLimited(BODY_LIMIT)],
    heavy: [HEAVY, bodyLimited(BODY_LIMIT)],
  }));
});
afterAll(() => g?.close());
beforeEach(() => clearRequests(all()));

const embed = (model: string, input: string[]) => g.embed(model, input);

describe('a body size learned by halving, remembered', () => {
  it('for 10 minutes, like a stated cap', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const t0 = Date.now();
      expect((await embed(AGING, texts(40))).status).toBe(200);
      expect(sizes(aging)).toEqual([40, 20, 10, 10, 10, 10]);
      // The largest body served: 10 inputs of two digits (t10..t19, and t20.. after them).
      const served = Math.max(...aging.requests.slice(2).map((q) => Buffer.byteLength(q.body)));
      aging.requests.length = 0;
      vi.setSystemTime(t0 + 10 * 60_000 - 1);
      expect((await embed(AGING, texts(25))).status).toBe(200);
      // Split up front to that body: 11 inputs a byte shorter in the first call, nothing refused.
      expect(sizes(aging).sort((a, b) => a - b)).toEqual([4, 10, 11]);
      for (const q of aging.requests) expect(Buffer.byteLength(q.body)).toBeLessThanOrEqual(served);
      aging.requests.length = 0;
      vi.setSystemTime(t0 + 10 * 60_000);
      const late = await embed(AGING, texts(25));
      expect(late.status).toBe(200);
      expect(firsts(late)).toEqual(texts(25).map((_, i) => i));
      expect(sizes(aging)).toEqual([25, 13, 12]);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('only what a served attempt proved is remembered', () => {
  it('one input too large at any size: the attempt fails and its halved sizes are forgotten', async () => {
    // 99 small inputs and one of 6,000 characters, behind a 5,000-byte body limit: every slice
    // without the large input is served, the one with it is halved down to it alone, refused.
    const input = [...texts(99), 'x'.repeat(6_000)];
    const r = await embed(BYTES, input);
    expect(r.status).toBe(413);
    expect(r.body.error.metadata).toEqual({ upstream_kind: 'too_large', upstream_status: 413 });
    expect(sizes(bytes)).toEqual([100, 50, 50, 25, 25, 13, 12, 6, 6, 3, 3, 2, 1]);

    // Nothing remembered: a request of small inputs goes whole, not 2 inputs a call. The same bad
    // request again cannot renew anything either.
    bytes.requests.length = 0;
    expect((await embed(BYTES, input)).status).toBe(413);
    bytes.requests.length = 0;
    const good = await embed(BYTES, texts(100));
    expect(good.status).toBe(200);
    expect(firsts(good)).toEqual(texts(100).map((_, i) => i));
    expect(sizes(bytes)).toEqual([100]);
  });

  it('slices served at different sizes: the largest body served below the smallest refused, so the same request is not refused again', async () => {
    // 40 inputs of a few bytes, then 40 of about 400: the light half is served 40 at a time, the
    // heavy one only 10 at a time.
    const input = texts(80).map((t, i) => (i < 40 ? t : `${t}${' '.repeat(400)}`));
    const r = await embed(MIXED, input);
    expect(r.status).toBe(200);
    expect(firsts(r)).toEqual(texts(80).map((_, i) => i));
    expect(sizes(mixed)).toEqual([80, 40, 40, 20, 10, 10, 10, 10]);
    // 40 inputs were served but also refused in this attempt: as an input count the size to
    // remember was 10, which served every slice. In bytes there is no such conflict: the body of
    // 10 heavy inputs, the largest served, is below every body refused. The same request is then
    // split to it up front, the light inputs together with 9 heavy ones, and nothing is refused.
    const served = Math.max(
      ...mixed.requests.filter((q) => q.json.input.length === 10).map((q) => Buffer.byteLength(q.body)),
    );
    mixed.requests.length = 0;
    const again = await embed(MIXED, input);
    expect(again.status).toBe(200);
    expect(firsts(again)).toEqual(texts(80).map((_, i) => i));
    expect(sizes(mixed).sort((a, b) => a - b)).toEqual([1, 10, 10, 10, 49]);
    for (const q of mixed.requests) expect(Buffer.byteLength(q.body)).toBeLessThanOrEqual(served);
  });
});

describe('a body limit is remembered in bytes, not inputs', () => {
  it('one heavy input that fits only alone does not have later requests sent one input a call', async () => {
    // 20 small inputs and one of 4,934 characters, behind a 5,000-byte body limit: halved down to
    // the heavy input alone, which is served (a body of 4,998 bytes; with one more input, 5,004).
    const first = await embed(HEAVY, [...texts(20), 'h'.repeat(4_934)]);
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(21);
    expect(sizes(heavy)).toEqual([21, 11, 10, 5, 5, 3, 2, 1, 1]);
    // Remembered as an input count, that 1 had the next 10 minutes of requests sent one input a
    // call: 100 calls for these 100 small inputs. Their body is far below the one served.
    heavy.requests.length = 0;
    const small = await embed(HEAVY, texts(100));
    expect(small.status).toBe(200);
    expect(firsts(small)).toEqual(texts(100).map((_, i) => i));
    expect(sizes(heavy)).toEqual([100]);
    // A request larger than the body served is split up front to fit it: nothing refused.
    heavy.requests.length = 0;
    const large = texts(100).map((t) => `${t}${' '.repeat(100)}`);
    const split = await embed(HEAVY, large);
    expect(split.status).toBe(200);
    expect(firsts(split)).toEqual(texts(100).map((_, i) => i));
    const bodies = heavy.requests.map((q) => Buffer.byteLength(q.body));
    expect(bodies.length).toBeGreaterThan(2);
    for (const b of bodies) expect(b).toBeLessThanOrEqual(BODY_LIMIT);
    expect(sizes(heavy).reduce((a, b) => a + b, 0)).toBe(100);
  });
});
