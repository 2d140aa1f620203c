/**
 * A channel deleted while its model listing is in flight (the listing its create started, an
 * admin's refresh) leaves no stored listing behind: the listing's write finds the channel gone and
 * writes nothing (ChannelsRepo.setDiscovered), and the delete takes any stored listing with it in
 * the same transaction. Before, the listing ended after the delete and wrote a `channel-models:<id>`
 * row for a channel that no longer existed. The upstream's `GET /v1/models` answers only when the
 * test says so, after the delete: the interleaving is fixed, not timed. SQLite here, PostgreSQL
 * under `npm run test:pg`.
 */
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type ChannelChange, ChannelService } from '../../src/gateway/registry/channel-service.js';
import { ChannelsRepo } from '../../src/store/channels-repo.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/** A promise the test settles (`done()`) when it says so. */
function deferred(): { promise: Promise<void>; done: () => void } {
  let done!: () => void;
  const promise = new Promise<void>((r) => {
    done = r;
  });
  return { promise, done };
}

/**
 * An upstream whose listing waits for `hold` (when set): `asked` settles when a listing arrives.
 * Each test arms it anew.
 */
const upstream = {
  asked: deferred(),
  hold: undefined as Promise<void> | undefined,
};

let up: FakeUpstream;
let a: TestGateway;
let b: TestGateway;
const logged: Array<{ msg: string; reason?: string }> = [];

beforeAll(async () => {
  up = await startFakeUpstream({
    'GET /v1/models': async () => {
      upstream.asked.done();
      await upstream.hold;
      return { json: { object: 'list', data: [{ id: 'late-model', object: 'model' }] } };
    },
  });
  const log = pino({ level: 'warn' }, { write: (line: string) => logged.push(JSON.parse(line)) });
  // No periodic rounds: the only listings are the ones the tests start.
  const config = { gateway: { discover_models: true, discovery_interval_ms: 0 } };
  a = await startTestGateway(config, { log: log as FastifyBaseLogger });
  b = await startTestGateway(config, { databaseUrl: a.databaseUrl });
});
afterAll(async () => {
  vi.restoreAllMocks();
  await b?.close();
  await a?.close();
  await up?.close();
});

const repo = () => new ChannelsRepo(a.services.database);
const lister = (name: string) => ({ name, kind: 'openai-compatible', base_url: `${up.url}/v1` });

/** Arms the upstream to hold its next listing until `release()`. */
function holdListing(): { asked: Promise<void>; release: () => void } {
  upstream.asked = deferred();
  const held = deferred();
  upstream.hold = held.promise;
  return { asked: upstream.asked.promise, release: held.done };
}

describe('a channel deleted while its listing is in flight', () => {
  it('leaves no listing behind when the listing its create started ends after the delete (delete on another instance)', async () => {
    const create = vi.spyOn(ChannelService.prototype, 'create');
    const held = holdListing();
    const cookieA = await a.login();
    const created = await a.call('POST', '/api/channel', { cookie: cookieA, body: lister('doomed') });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.data.id as number;
    const change = (await create.mock.results.at(-1)!.value) as ChannelChange;
    await held.asked;

    const cookieB = await b.login();
    expect((await b.call('DELETE', `/api/channel/${id}`, { cookie: cookieB })).status).toBe(200);
    logged.length = 0;
    held.release();

    expect(await change.listing).toEqual({
      error: `channel ${id} was deleted while its models were listed`,
    });
    expect(await repo().discoveredFor(id)).toBeUndefined();
    expect([...(await repo().discovered()).keys()]).not.toContain(id);
    // A channel deleted is not a discovery that failed.
    expect(logged.map((l) => [l.msg, l.reason])).toEqual([]);

    // The next channel does not inherit the dead one's listing: it has an id of its own (ids are
    // never handed out twice) and no listing until its own ends.
    const next = await a.call('POST', '/api/channel', {
      cookie: cookieA,
      body: { ...lister('doomed'), models: ['own-model'] },
    });
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(next.body.data.id).toBeGreaterThan(id);
    expect(await repo().discoveredFor(next.body.data.id)).toBeUndefined();
    expect(a.services.registry.targetsFor('late-model', { endpoint: 'chat' })).toEqual([]);
  });

  it('answers an admin’s refresh of a channel deleted meanwhile with a 404, and stores nothing', async () => {
    upstream.hold = undefined;
    const cookie = await a.login();
    const created = await a.call('POST', '/api/channel', { cookie, body: lister('refreshed') });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.data.id as number;
    // The listing the create started has ended and stored its models.
    await vi.waitUntil(async () => (await repo().discoveredFor(id)) !== undefined, { timeout: 10_000 });

    const held = holdListing();
    const refresh = a.call('POST', `/api/channel/${id}/models/refresh`, { cookie });
    await held.asked;
    expect((await a.call('DELETE', `/api/channel/${id}`, { cookie })).status).toBe(200);
    // The delete took the stored listing along.
    expect(await repo().discoveredFor(id)).toBeUndefined();
    held.release();

    const r = await refresh;
    expect(r.status, JSON.stringify(r.body)).toBe(404);
    expect(r.body.message).toBe(`channel ${id} was deleted while its models were listed`);
    expect(await repo().discoveredFor(id)).toBeUndefined();
  });
});
