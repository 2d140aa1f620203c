import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FakeAnswer, FakeUpstream, ReceivedRequest } from '../helpers/fake-upstream.js';
import {
  clearRequests,
  type EmbeddingGateway,
  firsts,
  limited,
  sizes,
  startTeiGateway,
  texts,
  vectors,
} from './embedding-gateway.js';

/**
 * A request split into several upstream calls (a stated batch cap, halving after a 413) whose
 * call fails after others were served (docs/embeddings.md, "Retries"): the retry on the same
 * channel sends only the inputs still missing, and the answer is billed once, on the calls that
 * served it. A request that fails in the end is billed nothing. Each channel serves one model
 * alone, two tries each; 2 tokens an input at 1 micro-USD a token.
 */
const ONCE = 'tei/once'; // over 35 inputs refused (no cap stated); the call from t35 fails once
const CAPPED = 'tei/capped'; // states a cap of 32; the call from t32 fails once
const BROKEN = 'tei/broken'; // over 35 refused; the call from t35 always fails
const RACY = 'tei/racy'; // cap 32; its first t0 call fails at once while the t32 one is slow

const BACKEND_500: FakeAnswer = { status: 500, json: { error: 'backend failed', error_type: 'Backend' } };

/** Answers 500 to the first call whose first input is `from`, `then` to every other call. */
function failsOnce(from: string, then: (r: ReceivedRequest) => FakeAnswer) {
  let failed = false;
  return (r: ReceivedRequest): FakeAnswer => {
    if (r.json.input[0] !== from || failed) return then(r);
    failed = true;
    return BACKEND_500;
  };
}

/** A TEI with `--max-client-batch-size 32`. */
const cap32 =
  (then: (r: ReceivedRequest) => FakeAnswer) =>
  (r: ReceivedRequest): FakeAnswer => {
    const n = (r.json.input as string[]).length;
    if (n <= 32) return then(r);
    return {
      status: 413,
      json: { error: `batch size ${n} > maximum allowed batch size 32`, error_type: 'Validation' },
    };
  };

/**
 * Once `race.armed`: t0's first call fails at once, t32's first is served after 300 ms, by which
 * time the retry has started (its calls take 600 ms) and sent t32's inputs again.
 */
const race = { armed: false };
function racing() {
  const seen = new Map<string, number>();
  return (r: ReceivedRequest): FakeAnswer => {
    if (!race.armed) return vectors()(r);
    const first = r.json.input[0] as string;
    const n = (seen.get(first) ?? 0) + 1;
    seen.set(first, n);
    if (first === 't0' && n === 1) return BACKEND_500;
    return { ...vectors()(r), delayMs: first === 't32' && n === 1 ? 300 : 600 };
  };
}

let once: FakeUpstream;
let capped: FakeUpstream;
let broken: FakeUpstream;
let racy: FakeUpstream;
let g: EmbeddingGateway;
const all = () => [once, capped, broken, racy];

beforeAll(async () => {
  ({
    g,
    ups: { once, capped, broken, racy },
  } = await startTeiGateway({
    once: [ONCE, limited(35, failsOnce('t35', vectors()))],
    capped: [CAPPED, cap32(failsOnce('t32', vectors()))],
    broken: [BROKEN, limited(35, (r) => (r.json.input[0] === 't35' ? BACKEND_500 : vectors()(r)))],
    racy: [RACY, cap32(racing())],
  }));
});
afterAll(() => g?.close());
beforeEach(() => clearRequests(all()));

/** The first input of each call `up` received, in order. */
const heads = (up: FakeUpstream) => up.requests.map((r) => r.json.input[0] as string);
/** Every input of the calls `up` served (answered 2xx), in the order they were received. */
const servedInputs = (up: FakeUpstream, statuses: number[]) =>
  up.requests.filter((_, i) => statuses[i] === 200).flatMap((r) => r.json.input as string[]);

describe('a retry on the same channel', () => {
  it('after halving: sends only the inputs still missing, at the size halving came to; billed once', async () => {
    const acct = await g.newKey('once');
    const r = await g.embed(ONCE, texts(70), { token: acct.key });
    expect(r.status).toBe(200);
    expect(firsts(r)).toEqual(texts(70).map((_, i) => i));
    expect(r.body.usage).toEqual({ prompt_tokens: 140, total_tokens: 140 });
    // 70 refused, t0..t34 served, t35..t69 a 500; the retry sends t35..t69 alone, not the whole
    // request again (which was refused, halved and t0..t34 embedded a second time).
    expect(sizes(once)).toEqual([70, 35, 35, 35]);
    expect(heads(once)).toEqual(['t0', 't0', 't35', 't35']);
    expect(servedInputs(once, [413, 200, 500, 200])).toEqual(texts(70));
    expect(r.headers.get('x-modelgate-attempts')).toBe(`once/${ONCE}=server_error:500, once/${ONCE}=ok`);
    const { rows, used } = await g.billing(acct.id);
    expect(rows.map((l) => [l.status, l.prompt_tokens, l.cost_micros, l.provider])).toEqual([
      [200, 140, 140, 'once'],
    ]);
    expect(used).toBe(140);
  });

  it('after a stated cap: the missing inputs only, split to the cap up front', async () => {
    const r = await g.embed(CAPPED, texts(70));
    expect(r.status).toBe(200);
    expect(firsts(r)).toEqual(texts(70).map((_, i) => i));
    expect(r.body.usage).toEqual({ prompt_tokens: 140, total_tokens: 140 });
    // 70 refused (cap 32), t0..t31 served, t32..t63 a 500 (t64.. never sent); the retry: t32..t63
    // and t64..t69, side by side.
    expect(heads(capped).slice(0, 3)).toEqual(['t0', 't0', 't32']);
    expect(heads(capped).slice(3).sort()).toEqual(['t32', 't64']);
    expect(sizes(capped)).toEqual([70, 32, 32, ...(heads(capped)[3] === 't32' ? [32, 6] : [6, 32])]);
  });

  it('a call of the failed try that is served once the retry began is dropped: nothing billed twice', async () => {
    // The cap, learned first: the next request is split to 32 up front, two calls side by side.
    expect((await g.embed(RACY, texts(40))).status).toBe(200);
    racy.requests.length = 0;
    race.armed = true;
    const acct = await g.newKey('racy');
    const r = await g.embed(RACY, texts(64), { token: acct.key });
    expect(r.status).toBe(200);
    expect(firsts(r)).toEqual(texts(64).map((_, i) => i));
    expect(r.body.usage).toEqual({ prompt_tokens: 128, total_tokens: 128 });
    // t0 failed at once and the retry sent both halves; t32..t63 of the first try was served
    // while the retry's own t32..t63 was on its way.
    expect(heads(racy).sort()).toEqual(['t0', 't0', 't32', 't32']);
    await Promise.all(racy.requests.map((q) => q.closed));
    const { rows, used } = await g.billing(acct.id);
    expect(rows.map((l) => [l.status, l.prompt_tokens, l.cost_micros])).toEqual([[200, 128, 128]]);
    expect(used).toBe(128);
  });
});

describe('a request that fails in the end', () => {
  it('is billed nothing for the calls that served: the client received none of it', async () => {
    const acct = await g.newKey('broken');
    const r = await g.embed(BROKEN, texts(70), { token: acct.key });
    expect(r.status).toBe(502);
    expect(r.headers.get('x-modelgate-attempts')).toBe(
      `broken/${BROKEN}=server_error:500, broken/${BROKEN}=server_error:500`,
    );
    // The retry sent the missing half only.
    expect(sizes(broken)).toEqual([70, 35, 35, 35]);
    expect(heads(broken)).toEqual(['t0', 't0', 't35', 't35']);
    const { rows, used } = await g.billing(acct.id);
    expect(rows.map((l) => [l.status, l.prompt_tokens, l.cost_micros])).toEqual([[502, 0, 0]]);
    expect(used).toBe(0);
  });
});
