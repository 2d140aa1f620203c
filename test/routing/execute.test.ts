import { describe, expect, it } from 'vitest';
import { UnfitCandidate, UpstreamError } from '../../src/gateway/errors.js';
import { attemptsOf, executeRoute } from '../../src/gateway/routing/execute.js';
import { HealthTracker } from '../../src/gateway/routing/health.js';
import type { Candidate, RouteTarget } from '../../src/gateway/routing/types.js';

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
