/**
 * Two gateway instances on one database (and one Redis when TEST_REDIS_URL is set) behind a
 * fake OpenAI-compatible upstream. Without Redis the same scenarios run with per-instance
 * limits; only the assertions that need shared state branch on `withRedis`.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { model, oaChunk, oaCompletion, sse } from '../chat/chat-helpers.js';
import { TEST_REDIS_URL } from '../helpers/databases.js';
import { startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const withRedis = TEST_REDIS_URL !== '';
const USAGE = { prompt_tokens: 11, completion_tokens: 50 };
// 11 x $1/M + 50 x $2/M
const MICROS_PER_CALL = 111;

let up: Awaited<ReturnType<typeof startFakeUpstream>>;
let gw1: TestGateway;
let gw2: TestGateway;
let root: string;

// Unique per run (test files share one Redis, and key ids repeat across their databases), and
// the same for every instance of this file so they share limits and the invalidation channel.
const KEY_PREFIX = `scale:${process.pid}:${Date.now()}:`;
const overrides = () => ({
  channels: [
    { name: 'up', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: ['acme/m'] },
  ],
  models: [model('acme/m')],
  gateway: { retry_base_ms: 1, first_byte_timeout_ms: 5000, discover_models: false },
  redis: { key_prefix: KEY_PREFIX },
});

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': (req) =>
      req.json?.stream
        ? {
            sse: sse([
              oaChunk({ role: 'assistant', content: 'hi' }),
              oaChunk({}, 'stop'),
              { ...oaChunk({}), choices: [], usage: { ...USAGE, total_tokens: 61 } },
            ]),
          }
        : { json: oaCompletion('hi', USAGE) },
  });
  gw1 = await startTestGateway(overrides());
  gw2 = await startTestGateway(overrides(), { databaseUrl: gw1.databaseUrl });
  root = await gw1.login();
}, 60_000);

afterAll(async () => {
  await gw2?.stop();
  await gw1?.close();
  await up?.close();
});

async function newKey(gw: TestGateway, body: Record<string, unknown>) {
  const r = await gw.call('POST', '/api/key', { cookie: root, body: { name: 'scale', ...body } });
  if (r.status !== 200) throw new Error(`key: ${r.status} ${JSON.stringify(r.body)}`);
  return { id: r.body.data.id as number, secret: r.body.data.key as string };
}

const chat = (gw: TestGateway, key: string, stream = false) =>
  gw.call('POST', '/v1/chat/completions', {
    token: key,
    body: { model: 'acme/m', messages: [{ role: 'user', content: 'hello' }], stream },
  });

/** Runs `tasks` with at most `width` in flight. */
async function pool<T>(tasks: Array<() => Promise<T>>, width: number): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < tasks.length) {
        const i = next++;
        out[i] = await tasks[i]!();
      }
    }),
  );
  return out;
}

describe('two instances, one database', () => {
  it('mixed catalog and chat load: downloads and spend add up exactly', async () => {
    const app = await gw1.call('POST', '/api/app', {
      cookie: root,
      body: { name: 'Scale app', download_url: 'https://example.com/app' },
    });
    expect(app.status).toBe(200);
    const appId = app.body.data.id as number;
    const key = await newKey(gw1, { quota_limit: 5 });

    const N = 150;
    const tasks = Array.from({ length: N }, (_, i) => {
      const gw = i % 2 ? gw1 : gw2;
      if (i % 3 === 0) return () => gw.call('POST', `/api/app/download/${appId}`);
      return () => chat(gw, key.secret, i % 5 === 0);
    });
    const results = await pool(tasks, 16);
    expect(results.filter((r) => r.status !== 200).map((r) => [r.status, r.body])).toEqual([]);
    const downloads = tasks.filter((_, i) => i % 3 === 0).length;
    const chats = N - downloads;
    const seen = results.filter((_, i) => i % 3 === 0).map((r) => r.body.data.download_count);
    expect(new Set(seen).size).toBe(downloads);
    expect((await gw2.call('GET', `/api/app/${appId}`)).body.data.download_count).toBe(downloads);

    await Promise.all([gw1.services.requestLogs.flush(), gw2.services.requestLogs.flush()]);
    const db = gw1.services.database.db;
    const logged = await sql<{ n: number; micros: number }>`
      select count(*) as n, coalesce(sum(cost_micros), 0) as micros from request_logs where key_id = ${key.id}`.execute(
      db,
    );
    const row = await sql<{
      used: number;
    }>`select quota_used_micros as used from api_keys where id = ${key.id}`.execute(db);
    expect(Number(logged.rows[0]!.n)).toBe(chats);
    expect(Number(logged.rows[0]!.micros)).toBe(chats * MICROS_PER_CALL);
    expect(Number(row.rows[0]!.used)).toBe(chats * MICROS_PER_CALL);

    // Both instances counted their share in /metrics.
    const m = await gw1.call('GET', '/metrics');
    expect(m.status).toBe(200);
    expect(m.headers.get('content-type')).toContain('text/plain');
    expect(m.body).toMatch(
      /modelgate_http_requests_total\{method="POST",route="\/v1\/chat\/completions",status="200"\} \d+/,
    );
    expect(m.body).toMatch(/modelgate_tokens_total\{model="acme\/m",type="completion"\} \d+/);
    expect(m.body).toMatch(/modelgate_cost_usd_total\{model="acme\/m"\} [\d.e-]+/);
    expect(m.body).toMatch(
      /modelgate_time_to_first_token_seconds_count\{model="acme\/m",provider="up"\} \d+/,
    );
    expect(m.body).toContain('modelgate_circuit_state{target=');
    expect(m.body).toContain('process_cpu_seconds_total');
    if (withRedis) expect(m.body).toContain('modelgate_redis_up 1');
    const spec = await gw1.call('GET', '/openapi.json');
    expect(Object.keys(spec.body.paths)).not.toContain('/metrics');
  }, 120_000);

  it('a per-key rpm limit holds across both instances', async () => {
    const limit = 6;
    const key = await newKey(gw1, { rpm_limit: limit });
    const started = Date.now();
    const results = await pool(
      Array.from({ length: 24 }, (_, i) => () => chat(i % 2 ? gw1 : gw2, key.secret)),
      8,
    );
    // GCRA refills one request every 60 s / limit: allow for what a slow machine took.
    const refill = Math.floor((Date.now() - started) / (60_000 / limit));
    const accepted = results.filter((r) => r.status === 200).length;
    const refused = results.filter((r) => r.status === 429);
    expect(accepted + refused.length).toBe(results.length);
    if (withRedis) expect(accepted).toBeLessThanOrEqual(limit + refill);
    else expect(accepted).toBeLessThanOrEqual(2 * (limit + refill)); // one allowance per instance
    expect(accepted).toBeGreaterThanOrEqual(limit);

    const r = refused[0]!;
    expect(r.body.error).toMatchObject({ code: 429, type: expect.any(String) });
    expect(r.body.error.message).toContain('requests a minute');
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(r.headers.get('x-ratelimit-limit')).toBe(String(limit));
    expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(r.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(1);
    const ok = results.find((x) => x.status === 200)!;
    expect(ok.headers.get('x-ratelimit-limit-requests')).toBe(String(limit));

    const m = await gw1.call('GET', '/metrics');
    expect(m.body).toMatch(/modelgate_rate_limit_rejections_total\{scope="key_rpm"\} [1-9]/);
  }, 60_000);

  it('a tpm limit charges the usage the calls reported, not only the prompt estimate', async () => {
    // Each call reports 61 tokens; the prompt estimate alone is about 8. With 200 tokens a
    // minute, counting only estimates would admit 20+ calls; with the correction about 4.
    const key = await newKey(gw1, { tpm_limit: 200 });
    const statuses: number[] = [];
    for (let i = 0; i < 12 && !statuses.includes(429); i++) {
      const r = await chat(i % 2 ? gw1 : gw2, key.secret);
      statuses.push(r.status);
      if (r.status === 429) {
        expect(r.body.error.message).toContain('tokens a minute');
        expect(r.headers.get('x-ratelimit-limit-tokens')).toBe('200');
      }
    }
    const accepted = statuses.filter((s) => s === 200).length;
    expect(statuses).toContain(429);
    // Without Redis each instance keeps its own allowance (twice the calls at most).
    expect(accepted).toBeLessThanOrEqual(withRedis ? 5 : 9);
  }, 60_000);

  it('requests sharing a client x-request-id each get their usage charged to their own key', async () => {
    // The allowance refills continuously (1,000 a minute: ~17 tokens a second), so the figures
    // below are read with that much room; a lost correction is 61 tokens off.
    const tpm = 1_000;
    const a = await newKey(gw1, { tpm_limit: tpm });
    const b = await newKey(gw1, { tpm_limit: tpm });
    const same = (key: string) =>
      gw1.call('POST', '/v1/chat/completions', {
        token: key,
        headers: { 'x-request-id': `shared-${KEY_PREFIX}` },
        body: { model: 'acme/m', messages: [{ role: 'user', content: 'hello' }] },
      });
    const firstA = await same(a.secret);
    const prompt = tpm - Number(firstA.headers.get('x-ratelimit-remaining-tokens'));
    expect(prompt).toBeGreaterThan(0);
    expect(prompt).toBeLessThan(61);
    // Three at once under one id: two on key A, one on key B.
    const all = await Promise.all([same(a.secret), same(a.secret), same(b.secret)]);
    expect(all.map((r) => r.status)).toEqual([200, 200, 200]);
    await new Promise((r) => setTimeout(r, 200));
    // Each call reported 61 tokens: A has used 3 x 61, B 61, and a next call is charged its prompt.
    const nextA = await same(a.secret);
    const nextB = await same(b.secret);
    const left = (r: { headers: Headers }) => Number(r.headers.get('x-ratelimit-remaining-tokens'));
    expect(left(nextA)).toBeGreaterThanOrEqual(tpm - 3 * 61 - prompt);
    expect(left(nextA)).toBeLessThan(tpm - 3 * 61 - prompt + 30);
    expect(left(nextB)).toBeGreaterThanOrEqual(tpm - 61 - prompt);
    expect(left(nextB)).toBeLessThan(tpm - 61 - prompt + 30);
  }, 60_000);

  it('a key disabled through one instance is refused by the other within a second', async () => {
    const key = await newKey(gw1, {});
    expect((await chat(gw2, key.secret)).status).toBe(200); // now cached on gw2
    const heard: string[] = [];
    const off = gw2.services.invalidation.subscribe((t) => void heard.push(t));
    const put = await gw1.call('PUT', '/api/key', { cookie: root, body: { id: key.id, status: 2 } });
    expect(put.status).toBe(200);
    const disabledAt = Date.now();
    // Every request sent a second or more after the change must be refused (the credential
    // cache lives at most 1 s); with Redis the push makes it much sooner.
    let refusedAfter = -1;
    while (Date.now() - disabledAt < 3000) {
      const sentAfter = Date.now() - disabledAt;
      const r = await chat(gw2, key.secret);
      if (r.status === 401) {
        refusedAfter = sentAfter;
        break;
      }
      expect(r.status).toBe(200);
      expect(sentAfter).toBeLessThan(1000);
      await new Promise((res) => setTimeout(res, 20));
    }
    off();
    expect(refusedAfter).toBeGreaterThanOrEqual(0);
    if (withRedis) expect(refusedAfter).toBeLessThan(500);
    // With Redis the change is pushed (pub/sub) rather than waited out by the cache TTL.
    if (withRedis) expect(heard).toContain('keys');
  }, 30_000);
});

describe('an instance whose Redis is unreachable', () => {
  it('still serves, with limits kept per instance and readiness degraded, not failed', async () => {
    const gw3 = await startTestGateway(
      { ...overrides(), redis: { url: 'redis://127.0.0.1:1/0' } },
      { databaseUrl: gw1.databaseUrl },
    );
    try {
      const key = await newKey(gw1, { rpm_limit: 3 });
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await chat(gw3, key.secret)).status);
      expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
      expect(statuses.slice(3)).toEqual([429, 429]);

      const ready = await gw3.call('GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body.checks.database).toBe('ok');
      expect(ready.body.checks.redis).toMatch(/^degraded: /);

      const m = await gw3.call('GET', '/metrics');
      expect(m.body).toContain('modelgate_redis_up 0');

      // Its management writes still take effect locally at once.
      const k2 = await newKey(gw1, {});
      expect((await chat(gw3, k2.secret)).status).toBe(200);
      const del = await gw3.call('DELETE', `/api/key/${k2.id}`, { cookie: root });
      expect(del.status).toBe(200);
      expect((await chat(gw3, k2.secret)).status).toBe(401);
    } finally {
      await gw3.stop();
    }
  }, 60_000);
});
