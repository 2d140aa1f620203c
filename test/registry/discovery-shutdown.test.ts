/**
 * `POST /api/channel` answers before the model listing it starts has ended (the upstream's
 * `GET /models`, in the background). A gateway stopped meanwhile ends that listing before it
 * closes the database: before, the listing went on and, when the upstream answered, wrote to a
 * closed database (logged as a failed discovery), with its upstream connection still open.
 * SQLite here, PostgreSQL under `npm run test:pg`.
 */
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { type ChannelChange, ChannelService } from '../../src/gateway/registry/channel-service.js';
import { ChannelsRepo } from '../../src/store/channels-repo.js';
import { openDatabase } from '../../src/store/database.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/** The outcome of the channel's last listing as the database holds it after the gateway stopped. */
async function storedOutcome(databaseUrl: string, name: string) {
  const d = openDatabase(databaseUrl);
  try {
    const row = await new ChannelsRepo(d).byName(name);
    return { ok: row?.listing_ok, models: row?.listing_models, kind: row?.listing_error_kind };
  } finally {
    await d.close();
  }
}

/** A promise the test settles (`done()`) when it says so. */
function deferred(): { promise: Promise<void>; done: () => void } {
  let done!: () => void;
  const promise = new Promise<void>((r) => {
    done = r;
  });
  return { promise, done };
}

let up: FakeUpstream | undefined;
let gw: TestGateway | undefined;
afterAll(async () => {
  vi.restoreAllMocks();
  await up?.close();
  // The test stops the gateway itself (its subject); close() also drops its PostgreSQL database.
  await gw?.close();
});

describe('a gateway stopping while a new channel lists its models', () => {
  it('ends the listing before closing the database: no write after, nothing logged, nothing left open', async () => {
    const { done: asked, promise: listingAsked } = deferred();
    const { done: answer, promise: answered } = deferred();
    // The upstream's listing answers only when the test says so (after the stop).
    up = await startFakeUpstream({
      'GET /v1/models': async () => {
        asked();
        await answered;
        return { json: { object: 'list', data: [{ id: 'late-model', object: 'model' }] } };
      },
    });
    const logged: Array<{ level: number; msg: string; reason?: string }> = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => logged.push(JSON.parse(line)) });
    gw = await startTestGateway({ gateway: { discover_models: true } }, { log: log as FastifyBaseLogger });
    const create = vi.spyOn(ChannelService.prototype, 'create');

    const cookie = await gw.login();
    const res = await gw.call('POST', '/api/channel', {
      cookie,
      body: { name: 'slow-lister', kind: 'openai-compatible', base_url: `${up.url}/v1` },
    });
    expect(res.status).toBe(200);
    const change = (await create.mock.results[0]!.value) as ChannelChange;
    let ended = false;
    const outcome = change.listing!.then((o) => {
      ended = true;
      return o;
    });
    await listingAsked;

    await gw.stop();
    // Ended by the stop, not left to write its models to the closed database when the upstream answers.
    expect(ended).toBe(true);
    expect(await outcome).toEqual({ error: 'the gateway stopped before the listing ended' });
    // Its upstream call was cut (the connection closed before any answer), not left open.
    const listed = up.requests.filter((r) => r.method === 'GET' && r.path === '/v1/models');
    expect(listed).toHaveLength(1);
    expect(await listed[0]!.closed).toEqual({ completed: false });
    answer();
    expect(logged.map((l) => [l.msg, l.reason])).toEqual([]);
    // A listing cut records no outcome: the channel was never listed.
    expect(await storedOutcome(gw.databaseUrl, 'slow-lister')).toEqual({
      ok: null,
      models: null,
      kind: null,
    });
  });
});

describe('a gateway stopping while a periodic refresh lists a channel’s models', () => {
  let up2: FakeUpstream | undefined;
  let gw2: TestGateway | undefined;
  afterAll(async () => {
    await up2?.close();
    await gw2?.close();
  });

  it('cuts that listing and waits for it, starts no round after, and logs nothing', async () => {
    const { done: asked, promise: periodicAsked } = deferred();
    const { done: answer, promise: answered } = deferred();
    const listing = (ids: string[]) => ({
      json: { object: 'list', data: ids.map((id) => ({ id, object: 'model', owned_by: 'vllm' })) },
    });
    // The start's listing answers at once; the first periodic one only when the test says so.
    up2 = await startFakeUpstream({
      'GET /v1/models': [
        listing(['early-model']),
        async () => {
          asked();
          await answered;
          return listing(['early-model', 'late-model']);
        },
      ],
    });
    const logged: Array<{ level: number; msg: string }> = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => logged.push(JSON.parse(line)) });
    gw2 = await startTestGateway(
      {
        gateway: { discover_models: true, discovery_interval_ms: 100 },
        channels: [{ name: 'lister', kind: 'openai-compatible', base_url: `${up2.url}/v1` }],
      },
      { log: log as FastifyBaseLogger },
    );
    await periodicAsked;

    const started = Date.now();
    await gw2.stop();
    // Cut, not waited out: the listing's own timeout is 10 s.
    expect(Date.now() - started).toBeLessThan(5000);
    const listed = up2.requests.filter((r) => r.method === 'GET' && r.path === '/v1/models');
    expect(listed).toHaveLength(2);
    expect(await listed[1]!.closed).toEqual({ completed: false });
    answer();
    await new Promise((r) => setTimeout(r, 400));
    expect(up2.requests).toHaveLength(2);
    expect(logged.map((l) => l.msg)).toEqual([]);
    // The cut round recorded nothing: the outcome is still the start's listing of one model.
    expect(await storedOutcome(gw2.databaseUrl, 'lister')).toEqual({ ok: 1, models: 1, kind: null });
  });
});
