/**
 * Redis stopped and restarted under load (issue 8): a private redis-server on a free port, two
 * gateway instances sharing it and one database. While Redis is down requests keep being served
 * (limits fall back to each instance), no spend is lost (key spend equals the logged costs),
 * and once Redis is back the per-key limit is shared again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { model, oaCompletion } from '../chat/chat-helpers.js';
import { startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { type PrivateRedis, startRedisServer } from '../helpers/redis-server.js';

const USAGE = { prompt_tokens: 11, completion_tokens: 50 };
const MICROS_PER_CALL = 111; // 11 x $1/M + 50 x $2/M

let redis: PrivateRedis;
let up: Awaited<ReturnType<typeof startFakeUpstream>>;
let gw1: TestGateway;
let gw2: TestGateway;
let root: string;

async function until(check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('condition not met in time');
}

beforeAll(async () => {
  redis = await startRedisServer();
  up = await startFakeUpstream({ 'POST /v1/chat/completions': { json: oaCompletion('hi', USAGE) } });
  const overrides = {
    channels: [
      { name: 'up', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: ['acme/m'] },
    ],
    models: [model('acme/m')],
    gateway: { retry_base_ms: 1, discover_models: false },
    redis: { url: redis.url, key_prefix: 'restart:' },
  };
  gw1 = await startTestGateway(overrides);
  gw2 = await startTestGateway(overrides, { databaseUrl: gw1.databaseUrl });
  root = await gw1.login();
}, 60_000);

afterAll(async () => {
  await gw2?.stop();
  await gw1?.close();
  await up?.close();
  await redis?.stop();
});

const chat = (gw: TestGateway, key: string) =>
  gw.call('POST', '/v1/chat/completions', {
    token: key,
    body: { model: 'acme/m', messages: [{ role: 'user', content: 'hi' }] },
  });

describe('Redis stopped and restarted under load', () => {
  it('keeps serving, loses no spend, and shares limits again once Redis is back', async () => {
    const created = await gw1.call('POST', '/api/key', {
      cookie: root,
      body: { name: 'restart', rpm_limit: 1000 },
    });
    const { key, id } = created.body.data as { key: string; id: number };
    const statuses: number[] = [];
    const burst = async (n: number) => {
      const rs = await Promise.all(Array.from({ length: n }, (_, i) => chat(i % 2 ? gw2 : gw1, key)));
      statuses.push(...rs.map((r) => r.status));
    };

    await burst(20);
    await redis.stop();
    await burst(20); // Redis gone: served with local limits
    expect((await gw1.call('GET', '/readyz')).status).toBe(200);
    await redis.restart(); // back on the same port, empty
    await until(async () => (await gw1.call('GET', '/readyz')).body?.checks?.redis === 'ok');
    await until(async () => (await gw2.call('GET', '/readyz')).body?.checks?.redis === 'ok');
    await burst(20);
    expect(statuses).toEqual(Array(60).fill(200));

    await gw1.services.requestLogs.flush();
    await gw2.services.requestLogs.flush();
    const stored = await gw1.services.repos.apiKeys.byId(id);
    expect(stored!.quota_used_micros).toBe(60 * MICROS_PER_CALL);
    const logs = await gw1.call('GET', `/api/log?key_id=${id}&page_size=100`, { cookie: root });
    expect(logs.body.total).toBe(60);
    const loggedMicros = logs.body.data.reduce(
      (s: number, l: { cost: number }) => s + Math.round(l.cost * 1e6),
      0,
    );
    expect(loggedMicros).toBe(60 * MICROS_PER_CALL);

    // Limits recover: a fresh key limited to 4 a minute across both instances.
    const limited = await gw1.call('POST', '/api/key', {
      cookie: root,
      body: { name: 'rpm4', rpm_limit: 4 },
    });
    const rs = await Promise.all(
      Array.from({ length: 12 }, (_, i) => chat(i % 2 ? gw2 : gw1, limited.body.data.key)),
    );
    const accepted = rs.filter((r) => r.status === 200).length;
    expect(accepted).toBeGreaterThanOrEqual(1);
    expect(accepted).toBeLessThanOrEqual(4);
    expect(rs.filter((r) => r.status === 429).length).toBe(12 - accepted);
  }, 90_000);
});
