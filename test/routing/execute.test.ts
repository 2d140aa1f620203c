import { describe, expect, it } from 'vitest';
import { UnfitCandidate, UpstreamError } from '../../src/gateway/errors.js';
import { attemptsOf, executeRoute } from '../../src/gateway/routing/execute.js';
import { HealthTracker } from '../../src/gateway/routing/health.js';
import type { Candidate, RouteTarget } from '../../src/gateway/routing/types.js';
import { classifyOpenAiError } from '../../src/providers/openai-compatible/openai-response.js';

/** A prompt that does not fit a model skips that model: it is no try, and the last word only. */
const candidate = (channelName: string, modelId: string, channelId: number): Candidate => ({
  target: { channelName, modelId, channelId, keys: ['k'] } as RouteTarget,
  healthKey: `${channelId}:${modelId}`,
});
const TINY = [candidate('a', 'tiny', 1), candidate('b', 'tiny', 2)];
const BIG = candidate('c', 'big', 3);
const options = () => ({
  health: new HealthTracker({ failures: 100, windowMs: 60_000, cooldownMs: 60_000 }),
  maxAttempts: 1,
  retryBaseMs: 1,
  retryMaxMs: 1,
});
const unfit = (model: string) => new UnfitCandidate(`messages: the prompt does not fit ${model}`, 'messages');

describe('executeRoute and candidates the request does not fit', () => {
  it('skips every upstream of that model, without a try, and the next model serves', async () => {
    const called: string[] = [];
    const ex = await executeRoute(
      [...TINY, BIG],
      async (c) => {
        called.push(c.target.channelName);
        if (c.target.modelId === 'tiny') throw unfit('tiny');
        return 'served';
      },
      options(),
    );
    expect(ex.value).toBe('served');
    expect(called).toEqual(['a', 'c']);
    expect(ex.attempts.map((a) => `${a.provider}=${a.ok}`)).toEqual(['c=true']);
  });

  it('is returned only when no candidate could take the request', async () => {
    const none = await executeRoute(
      [...TINY, BIG],
      async (c) => Promise.reject(unfit(c.target.modelId)),
      options(),
    ).catch((e: unknown) => e);
    expect(none).toBeInstanceOf(UnfitCandidate);
    expect((none as UnfitCandidate).status).toBe(400);
    expect(attemptsOf(none)).toEqual([]);
    const failed = await executeRoute(
      [...TINY, BIG],
      async (c) => {
        throw c.target.modelId === 'tiny' ? unfit('tiny') : new UpstreamError('server_error', 'boom');
      },
      options(),
    ).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(UpstreamError);
  });
});

describe('executeRoute and an upstream its adapter refuses to build for', () => {
  it('skips that upstream only, without a try: the same model’s next upstream serves', async () => {
    const called: string[] = [];
    const ex = await executeRoute(
      [...TINY, BIG],
      async (c) => {
        called.push(c.target.channelName);
        if (c.target.channelName === 'a')
          throw new UnfitCandidate('messages.0.content: empty', 'messages.0.content', 'upstream');
        return 'served';
      },
      options(),
    );
    expect(called).toEqual(['a', 'b']);
    expect(ex.candidate.target.channelName).toBe('b');
    expect(ex.attempts.map((a) => `${a.provider}=${a.ok}`)).toEqual(['b=true']);
  });

  it('is the answer when no upstream could take the request', async () => {
    const err = await executeRoute(
      TINY,
      async () =>
        Promise.reject(new UnfitCandidate('messages.0.content: empty', 'messages.0.content', 'upstream')),
      options(),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnfitCandidate);
    expect((err as UnfitCandidate).param).toBe('messages.0.content');
    expect(attemptsOf(err)).toEqual([]);
  });
});

describe("executeRoute and an upstream's Retry-After", () => {
  /** The waits between tries of one candidate that answers 429 with `retryAfterMs`, then serves. */
  const waits = async (retryAfterMs: number) => {
    const slept: number[] = [];
    let calls = 0;
    await executeRoute(
      [candidate('a', 'm', 1)],
      async () => {
        if (calls++ === 0)
          throw new UpstreamError('rate_limited', 'slow down', { upstreamStatus: 429, retryAfterMs });
        return 'served';
      },
      {
        ...options(),
        maxAttempts: 2,
        retryBaseMs: 200,
        retryMaxMs: 5_000,
        random: () => 0.5,
        sleep: async (ms: number) => void slept.push(ms),
      },
    );
    return slept;
  };

  it('is a floor on the backoff: 0 does not make the retry immediate, a longer one is waited', async () => {
    expect(await waits(0)).toEqual([100]);
    expect(await waits(1_000)).toEqual([1_000]);
  });
});

/** A candidate of model `m` on channel `channelId` with these keys. */
const keyed = (channelId: number, keys: string[]): Candidate => ({
  target: { channelName: `c${channelId}`, modelId: 'm', channelId, keys } as RouteTarget,
  healthKey: `${channelId}:m`,
});

describe("executeRoute and a channel's keys", () => {
  const limited = () => new UpstreamError('rate_limited', 'slow down', { upstreamStatus: 429 });

  it('retries go to the next key, whatever the number of keys', async () => {
    for (const keys of [
      ['k0', 'k1'],
      ['k0', 'k1', 'k2'],
      ['k0', 'k1', 'k2', 'k3'],
    ]) {
      const used: string[] = [];
      await executeRoute(
        [keyed(100 + keys.length, keys)],
        async (_c, apiKey) => {
          used.push(apiKey);
          throw limited();
        },
        { ...options(), maxAttempts: keys.length, sleep: async () => {} },
      ).catch(() => undefined);
      expect(new Set(used).size, used.join()).toBe(keys.length);
    }
  });

  it('requests take the keys in turn', async () => {
    const first: string[] = [];
    for (let n = 0; n < 6; n++)
      await executeRoute(
        [keyed(200, ['k0', 'k1', 'k2'])],
        async (_c, apiKey) => {
          first.push(apiKey);
          return 'served';
        },
        options(),
      );
    expect(first.sort()).toEqual(['k0', 'k0', 'k1', 'k1', 'k2', 'k2']);
  });

  it('a rejected key is set aside and the next one tried at once', async () => {
    const used: string[] = [];
    const ex = await executeRoute(
      [keyed(300, ['bad', 'good'])],
      async (_c, apiKey) => {
        used.push(apiKey);
        if (apiKey === 'bad') throw new UpstreamError('auth', 'invalid key', { upstreamStatus: 401 });
        return 'served';
      },
      options(),
    );
    expect(ex.apiKey).toBe('good');
    expect(used.at(-1)).toBe('good');
    expect(used.filter((k) => k === 'bad').length).toBeLessThanOrEqual(1);
  });
});

describe('a rate limit or an empty account named in a 4xx body (not 429)', () => {
  const body = (code: string) => JSON.stringify({ error: { message: 'm', type: 'requests', code } });
  const health = () => new HealthTracker({ failures: 1, windowMs: 60_000, cooldownMs: 60_000 });

  it('is classified by its code: rate_limit_exceeded a rate limit, insufficient_quota a payment failure', () => {
    expect(classifyOpenAiError(400, body('rate_limit_exceeded'), {}).kind).toBe('rate_limited');
    expect(classifyOpenAiError(403, body('insufficient_quota'), {}).kind).toBe('payment');
    expect(classifyOpenAiError(400, body('insufficient_quota'), {}).kind).toBe('payment');
  });

  it("moves on to the channel's next key, then the next upstream, and never opens the circuit", async () => {
    for (const [code, kind] of [
      ['rate_limit_exceeded', 'rate_limited'],
      ['insufficient_quota', 'payment'],
    ]) {
      const h = health();
      const used: string[] = [];
      const ex = await executeRoute(
        [keyed(400, ['spent', 'full']), keyed(500, ['other'])],
        async (c, apiKey) => {
          used.push(apiKey);
          if (apiKey === 'spent' || c.target.channelId === 400)
            throw classifyOpenAiError(400, body(code!), {});
          return 'served';
        },
        { ...options(), health: h, maxAttempts: 3, sleep: async () => {} },
      );
      // Each key of the failing channel once (in either order), then the next upstream.
      expect(ex.apiKey, code).toBe('other');
      expect(used.slice(0, 2).sort(), code).toEqual(['full', 'spent']);
      expect(ex.attempts.slice(0, 2).map((a) => a.error_kind)).toEqual([kind, kind]);
      // One failure opens this tracker's circuit: none was counted.
      expect(h.state('400:m')).toBe('closed');
      expect(h.snapshot().every((s) => s.error_rate === 0)).toBe(true);
    }
  });

  it("an empty account on one key is served by the channel's next key", async () => {
    const used: string[] = [];
    const ex = await executeRoute(
      [keyed(600, ['spent', 'full'])],
      async (_c, apiKey) => {
        used.push(apiKey);
        if (apiKey === 'spent') throw classifyOpenAiError(429, body('insufficient_quota'), {});
        return 'served';
      },
      { ...options(), maxAttempts: 2, sleep: async () => {} },
    );
    expect(ex.apiKey).toBe('full');
    expect(used.filter((k) => k === 'spent').length).toBeLessThanOrEqual(1);
  });
});

describe('the circuit and requests admitted before it opened', () => {
  const tracker = () => new HealthTracker({ failures: 2, windowMs: 60_000, cooldownMs: 1_000 });
  const K = '1:m';
  const ok = { latencyMs: 10 };
  /** Opens the circuit at t=0 and lets its cooldown pass (half-open at t=1000). */
  const opened = (h: HealthTracker) => {
    h.failure(K, 'server_error', false, 0);
    h.failure(K, 'server_error', false, 0);
    expect(h.state(K, 500)).toBe('open');
    expect(h.state(K, 1_000)).toBe('half_open');
  };

  it('a straggler that ends without a verdict does not free the probe slot', () => {
    const h = tracker();
    expect(h.tryAcquire(K, 0)).toBe('pass'); // the straggler, admitted while closed
    opened(h);
    expect(h.tryAcquire(K, 1_000)).toBe('probe');
    h.release(K, false); // the straggler: a client 400, a 429, the client left
    expect(h.tryAcquire(K, 1_001)).toBeNull(); // still one probe at a time
    h.release(K, true);
    expect(h.tryAcquire(K, 1_002)).toBe('probe');
  });

  it("a straggler's success does not close an open circuit; the probe's does", () => {
    const h = tracker();
    opened(h);
    h.success(K, ok, false);
    expect(h.state(K, 1_000)).toBe('half_open');
    expect(h.tryAcquire(K, 1_000)).toBe('probe');
    h.success(K, ok, false);
    expect(h.state(K, 1_000)).toBe('half_open');
    h.success(K, ok, true);
    expect(h.state(K, 1_000)).toBe('closed');
    expect(h.tryAcquire(K, 1_000)).toBe('pass');
  });

  it("a straggler's failure neither reopens nor frees the probe; the probe's failure reopens", () => {
    const h = tracker();
    opened(h);
    expect(h.tryAcquire(K, 1_000)).toBe('probe');
    h.failure(K, 'server_error', false, 1_100);
    expect(h.tryAcquire(K, 1_100)).toBeNull();
    expect(h.state(K, 1_100)).toBe('half_open');
    h.failure(K, 'server_error', true, 1_200);
    expect(h.state(K, 1_300)).toBe('open');
    expect(h.state(K, 2_200)).toBe('half_open');
  });

  it('executeRoute reports its own admission: a probe that fails reopens the circuit', async () => {
    const h = tracker();
    opened(h);
    const now = Date.now;
    Date.now = () => 1_000;
    try {
      const err = await executeRoute(
        [candidate('a', 'm', 1)],
        async () => {
          throw new UpstreamError('server_error', 'still down', { upstreamStatus: 500 });
        },
        { ...options(), health: h },
      ).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UpstreamError);
      expect(h.state(K, 1_000)).toBe('open');
      const ex = await executeRoute([candidate('a', 'm', 1)], async () => 'served', {
        ...options(),
        health: h,
      }).catch((e: unknown) => e);
      expect(ex).toMatchObject({ status: 503 }); // open: not tried
    } finally {
      Date.now = now;
    }
  });
});
