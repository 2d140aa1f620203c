import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeAnswer, type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  clearRequests,
  type EmbeddingGateway,
  embeddingModel,
  ROUTE,
  startEmbeddingGateway,
  vectors,
} from './embedding-gateway.js';

/**
 * An empty account or a rate limit named by an embeddings upstream's error code, whatever the
 * status, as chat reads them (docs/routing.md, "Execution: retries and fallbacks"): OpenAI answers
 * an exhausted account with 429 `insufficient_quota`, and some OpenAI-compatible servers and
 * proxies a rate limit with a 400 `rate_limit_exceeded`.
 */
const EMPTY: FakeAnswer = {
  status: 429,
  json: {
    error: {
      message: 'You exceeded your current quota, please check your plan and billing details.',
      type: 'insufficient_quota',
      param: null,
      code: 'insufficient_quota',
    },
  },
};
const LIMITED: FakeAnswer = {
  status: 400,
  json: {
    error: {
      message: 'Rate limit reached for requests',
      type: 'requests',
      param: null,
      code: 'rate_limit_exceeded',
    },
  },
};

let broke: FakeUpstream;
let limited: FakeUpstream;
let backup: FakeUpstream;
let g: EmbeddingGateway;

beforeAll(async () => {
  broke = await startFakeUpstream({ [ROUTE]: EMPTY });
  limited = await startFakeUpstream({ [ROUTE]: LIMITED });
  backup = await startFakeUpstream({ [ROUTE]: vectors() });
  const channel = (name: string, up: FakeUpstream, model: string, keys: string[], priority: number) => ({
    name,
    kind: 'openai-compatible',
    base_url: `${up.url}/v1`,
    keys,
    models: [model],
    priority,
  });
  g = await startEmbeddingGateway(
    {
      channels: [
        channel('broke', broke, 'acme/empty', ['k1', 'k2'], 1),
        channel('backup', backup, 'acme/empty', ['k3'], 0),
        channel('limited', limited, 'acme/limited', ['k4'], 0),
      ],
      models: [embeddingModel('acme/empty'), embeddingModel('acme/limited')],
    },
    () => [broke, limited, backup],
  );
});
afterAll(async () => {
  await g?.close();
});
beforeEach(() => clearRequests([broke, limited, backup]));

describe('account errors of an embeddings upstream', () => {
  it('a 429 insufficient_quota is an empty account: each key once, then the next channel, and the client is not told to retry', async () => {
    const r = await g.embed('acme/empty', ['t0', 't1']);
    expect(r.status).toBe(200);
    expect(r.body.data.map((d: { embedding: number[] }) => d.embedding[0])).toEqual([0, 1]);
    // Not retried on the same key with backoff as a rate limit would be.
    expect(broke.requests.map((q) => q.headers.authorization).sort()).toEqual(['Bearer k1', 'Bearer k2']);
    expect(r.headers.get('x-modelgate-attempts')).toMatch(
      /^broke\/acme\/empty=payment:429, .*backup\/acme\/empty=ok$/,
    );
  });

  it('with no other channel the client gets a 502 naming the upstream account, not a 429 to retry', async () => {
    const cookie = g.cookie;
    const list = await g.gw.call('GET', '/api/channel', { cookie });
    const id = list.body.data.find((c: { name: string }) => c.name === 'backup').id;
    await g.gw.call('PUT', '/api/channel', { cookie, body: { id, status: 2 } });
    try {
      // The registry reloads within a second of the change: until then the backup still serves.
      let r = await g.embed('acme/empty', ['t0']);
      for (let i = 0; i < 30 && r.status === 200; i++) {
        await new Promise((res) => setTimeout(res, 100));
        r = await g.embed('acme/empty', ['t0']);
      }
      expect(r.status).toBe(502);
      expect(r.headers.get('retry-after')).toBeNull();
      expect(r.body.error.metadata).toMatchObject({ upstream_kind: 'payment', upstream_status: 429 });
    } finally {
      await g.gw.call('PUT', '/api/channel', { cookie, body: { id, status: 1 } });
    }
  });

  it("a 400 rate_limit_exceeded is a rate limit: retried, then the client's 429, not a 400 blaming its request", async () => {
    const r = await g.embed('acme/limited', ['t0']);
    expect(r.status).toBe(429);
    expect(r.body.error.metadata).toMatchObject({ upstream_kind: 'rate_limited', upstream_status: 400 });
    expect(limited.requests.length).toBeGreaterThan(1);
  });
});
