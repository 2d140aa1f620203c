import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChannelsRepo } from '../../src/store/channels-repo.js';
import { type FakeAnswer, type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Model listings are read again every `gateway.discovery_interval_ms` (jittered), not only at
 * start: before, an upstream's new model was unknown until a restart, and a listing stored before
 * a fact was read lacked it until then. One round at a time; a failed listing keeps the stored
 * one; an unchanged one writes nothing; the instances on one database take turns (one claims a
 * round, ChannelsRepo.claimDiscoveryRound). SQLite here, PostgreSQL under `npm run test:pg`.
 */
const INTERVAL_MS = 200;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** A vLLM server's `GET /v1/models`: the test changes `models` (id -> max_model_len) between rounds. */
function vllm() {
  const state = {
    models: new Map<string, number | undefined>([['acme-a', 8192]]),
    /** Set: the listing answers this instead (an outage), or waits for it (a hung upstream). */
    answer: undefined as FakeAnswer | Promise<void> | undefined,
  };
  const route = async (): Promise<FakeAnswer> => {
    if (state.answer instanceof Promise) await state.answer;
    else if (state.answer) return state.answer;
    const data = [...state.models].map(([id, len]) => ({
      id,
      object: 'model',
      created: 1700000000,
      owned_by: 'vllm',
      ...(len ? { max_model_len: len } : {}),
    }));
    return { json: { object: 'list', data } };
  };
  return { state, route };
}

const channel = (up: FakeUpstream) => ({
  name: 'local',
  kind: 'openai-compatible',
  base_url: `${up.url}/v1`,
});
const listings = (up: FakeUpstream) => up.requests.filter((r) => r.path === '/v1/models').length;
const serves = (gw: TestGateway, id: string) =>
  gw.services.registry.targetsFor(id, { endpoint: 'chat' }).length > 0;

describe('one instance', () => {
  const fake = vllm();
  let up: FakeUpstream;
  let gw: TestGateway;
  const logged: Array<{ msg: string; channel?: string }> = [];
  const version = () => new ChannelsRepo(gw.services.database).version();

  beforeAll(async () => {
    up = await startFakeUpstream({ 'GET /v1/models': fake.route });
    const log = pino({ level: 'warn' }, { write: (line: string) => logged.push(JSON.parse(line)) });
    gw = await startTestGateway(
      { gateway: { discovery_interval_ms: INTERVAL_MS }, channels: [channel(up)] },
      { log: log as FastifyBaseLogger },
    );
  });
  afterAll(async () => {
    await gw?.close();
    await up?.close();
  });

  it('serves a model the upstream lists after the start, and stops serving one it no longer lists', async () => {
    expect(serves(gw, 'acme-a')).toBe(true);
    fake.state.models.set('acme-b', 32768);
    await until(() => serves(gw, 'acme-b'), 'acme-b to be served');
    fake.state.models.delete('acme-a');
    await until(() => !serves(gw, 'acme-a'), 'acme-a to be gone');
    expect(serves(gw, 'acme-b')).toBe(true);
  });

  it('takes up a fact the stored listing lacked', async () => {
    fake.state.models.set('acme-b', 65536);
    await until(() => gw.services.registry.resolve('acme-b')?.context_length === 65536, 'the new window');
  });

  it('writes nothing while the listing is unchanged: no version moves, no instance reloads', async () => {
    const before = await version();
    const asked = listings(up);
    await until(() => listings(up) >= asked + 3, 'three more rounds');
    expect(await version()).toBe(before);
  });

  it('keeps the last good listing while the upstream fails, and logs each failure', async () => {
    fake.state.answer = { status: 500, json: { error: { message: 'boom', type: 'server_error' } } };
    const asked = listings(up);
    logged.length = 0;
    await until(() => listings(up) >= asked + 3, 'three failed rounds');
    fake.state.answer = undefined;
    expect(serves(gw, 'acme-b')).toBe(true);
    expect(gw.services.registry.resolve('acme-b')?.context_length).toBe(65536);
    expect(logged.some((l) => l.msg === 'model discovery failed' && l.channel === 'local')).toBe(true);
  });

  it('keeps the stored listing when a round reads an empty one; an admin refresh clears it', async () => {
    const listed = new Map(fake.state.models);
    fake.state.models.clear();
    const asked = listings(up);
    logged.length = 0;
    await until(() => listings(up) >= asked + 3, 'three empty rounds');
    expect(serves(gw, 'acme-b')).toBe(true);
    expect(logged.some((l) => l.msg === 'model discovery failed' && l.channel === 'local')).toBe(true);
    // Asked for, an empty listing is the upstream's answer.
    const cookie = await gw.login();
    const r = await gw.call('POST', '/api/channel/1/models/refresh', { cookie });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toEqual([]);
    expect(serves(gw, 'acme-b')).toBe(false);
    for (const [id, len] of listed) fake.state.models.set(id, len);
    await until(() => serves(gw, 'acme-b'), 'acme-b to be served again');
  });

  it('never overlaps itself: a round waiting on its upstream holds the next one back', async () => {
    let release!: () => void;
    fake.state.answer = new Promise<void>((r) => {
      release = r;
    });
    const asked = listings(up);
    await until(() => listings(up) === asked + 1, 'a round to ask');
    // Several intervals pass while that round waits: no second listing starts.
    await sleep(INTERVAL_MS * 4);
    expect(listings(up)).toBe(asked + 1);
    fake.state.answer = undefined;
    release();
    await until(() => listings(up) >= asked + 2, 'the next round after it ended');
  });
});

/**
 * For the describe that calls it: a vLLM fake and two instances on one database with that
 * channel, listing it every `intervalMs`; `b` can be stopped by a test (then undefined).
 */
function twoInstances(intervalMs: number) {
  const t = {
    fake: vllm(),
    up: undefined as unknown as FakeUpstream,
    a: undefined as unknown as TestGateway,
    b: undefined as TestGateway | undefined,
  };
  beforeAll(async () => {
    t.up = await startFakeUpstream({ 'GET /v1/models': t.fake.route });
    const config = { gateway: { discovery_interval_ms: intervalMs }, channels: [channel(t.up)] };
    t.a = await startTestGateway(config);
    t.b = await startTestGateway(config, { databaseUrl: t.a.databaseUrl });
  });
  afterAll(async () => {
    await t.b?.close();
    await t.a?.close();
    await t.up?.close();
  });
  return t;
}

describe('two instances on one database', () => {
  const t = twoInstances(INTERVAL_MS);
  const version = () => new ChannelsRepo(t.a.services.database).version();
  const stored = async () =>
    JSON.parse((await new ChannelsRepo(t.a.services.database).discoveredFor(1)) ?? 'null');

  it('both serve a new model, the stored listing is the upstream’s, and it is not rewritten round after round', async () => {
    t.fake.state.models.set('acme-new', 4096);
    await until(
      () => serves(t.a, 'acme-new') && serves(t.b!, 'acme-new'),
      'both instances to serve acme-new',
    );
    expect(await stored()).toEqual([
      { name: 'acme-a', contextLength: 8192, created: 1700000000 },
      { name: 'acme-new', contextLength: 4096, created: 1700000000 },
    ]);
    const before = await version();
    const asked = listings(t.up);
    await until(() => listings(t.up) >= asked + 4, 'four more rounds');
    expect(await version()).toBe(before);
    expect(await stored()).toHaveLength(2);
  });

  it('rounds go on when the other instance stops', async () => {
    await t.b!.close();
    t.b = undefined;
    t.fake.state.models.set('acme-late', 2048);
    await until(() => serves(t.a, 'acme-late'), 'the remaining instance to serve acme-late');
  });
});

describe('an explicit refresh finding the listing another instance stored', () => {
  const t = twoInstances(0);

  it('serves it before answering, though nothing new is written', async () => {
    const { a, b } = t as { a: TestGateway; b: TestGateway };
    t.fake.state.models.set('acme-other', 1024);
    // Instance b lists first (through its service: no pub/sub message reaches a), then a, before
    // its once-a-second poll of the version row: a finds what b stored, and writes nothing.
    await b.services.registry.channels.refreshModels(1);
    expect(serves(b, 'acme-other')).toBe(true);
    const version = await new ChannelsRepo(a.services.database).version();
    expect(await a.services.registry.channels.refreshModels(1)).toContain('acme-other');
    expect(serves(a, 'acme-other')).toBe(true);
    expect(await new ChannelsRepo(a.services.database).version()).toBe(version);
  });
});

describe('claiming a round (ChannelsRepo.claimDiscoveryRound)', () => {
  let a: TestGateway;
  let b: TestGateway;
  let ra: ChannelsRepo;
  let rb: ChannelsRepo;

  beforeAll(async () => {
    // No periodic refresh of their own: the test claims rounds itself.
    a = await startTestGateway({ gateway: { discovery_interval_ms: 0 } });
    b = await startTestGateway({ gateway: { discovery_interval_ms: 0 } }, { databaseUrl: a.databaseUrl });
    ra = new ChannelsRepo(a.services.database);
    rb = new ChannelsRepo(b.services.database);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('gives a due round to one instance, and the next one once it is due', async () => {
    const t = 1_000_000;
    expect(await ra.claimDiscoveryRound(t, 1000)).toBe(true);
    expect(await rb.claimDiscoveryRound(t + 1, 1000)).toBe(false);
    expect(await ra.claimDiscoveryRound(t + 999, 1000)).toBe(false);
    expect(await rb.claimDiscoveryRound(t + 1000, 1000)).toBe(true);
    expect(await ra.claimDiscoveryRound(t + 1500, 1000)).toBe(false);
  });

  it('gives a round claimed by both at once to exactly one', async () => {
    for (let i = 0; i < 20; i++) {
      const t = 2_000_000 + i * 1000;
      const won = await Promise.all([ra.claimDiscoveryRound(t, 1000), rb.claimDiscoveryRound(t, 1000)]);
      expect(won.filter(Boolean), `round ${i}`).toHaveLength(1);
    }
  });

  it('does not believe a due time set by a clock far ahead', async () => {
    expect(await ra.claimDiscoveryRound(9_000_000_000, 1000)).toBe(true);
    expect(await rb.claimDiscoveryRound(3_000_000, 1000)).toBe(true);
    expect(await ra.claimDiscoveryRound(3_000_001, 1000)).toBe(false);
  });
});

describe('gateway.discovery_interval_ms: 0', () => {
  it('lists at start only', async () => {
    const fake = vllm();
    const up = await startFakeUpstream({ 'GET /v1/models': fake.route });
    const gw = await startTestGateway({ gateway: { discovery_interval_ms: 0 }, channels: [channel(up)] });
    try {
      expect(listings(up)).toBe(1);
      fake.state.models.set('acme-b', 1024);
      await sleep(INTERVAL_MS * 3);
      expect(listings(up)).toBe(1);
      expect(serves(gw, 'acme-b')).toBe(false);
    } finally {
      await gw.close();
      await up.close();
    }
  });
});
