/**
 * A round of discovery (`discoverAll`) works from the channels it has loaded; a channel deleted
 * after that snapshot (here or on another instance) and before its lookup is a normal race, not a
 * failed discovery: it is skipped without a warning or an error. The delete is made to land
 * exactly between the two (on the channel's first lookup), so the interleaving is fixed, not
 * timed. SQLite here, PostgreSQL under `npm run test:pg`.
 */
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ChannelsRepo } from '../../src/store/channels-repo.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let up: FakeUpstream;
let gw: TestGateway;
const logged: Array<{ level: number; msg: string; reason?: string }> = [];

beforeAll(async () => {
  up = await startFakeUpstream({
    'GET /v1/models': () => ({ json: { object: 'list', data: [{ id: 'kept-model', object: 'model' }] } }),
  });
  const log = pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line)) });
  // No listing starts by itself: the test runs the round.
  gw = await startTestGateway(
    { gateway: { discover_models: false, discovery_interval_ms: 0 } },
    { log: log as FastifyBaseLogger },
  );
});
afterAll(async () => {
  vi.restoreAllMocks();
  await gw?.close();
  await up?.close();
});

describe('discoverAll and a channel deleted mid-round', () => {
  it('skips the deleted channel without a warning and still lists the others', async () => {
    const cookie = await gw.login();
    const ids: number[] = [];
    for (const name of ['doomed', 'kept']) {
      const r = await gw.call('POST', '/api/channel', {
        cookie,
        body: { name, kind: 'openai-compatible', base_url: `${up.url}/v1` },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      ids.push(r.body.data.id as number);
    }
    const [doomed, kept] = ids as [number, number];
    const repo = new ChannelsRepo(gw.services.database);
    const byId = ChannelsRepo.prototype.byId;
    // The round has its snapshot; the delete lands just before the doomed channel's lookup.
    vi.spyOn(ChannelsRepo.prototype, 'byId').mockImplementation(async function (this: ChannelsRepo, id) {
      if (id === doomed) await repo.delete(doomed);
      return byId.call(this, id);
    });
    logged.length = 0;

    await gw.services.registry.channels.discoverAll();

    expect(await repo.byId(doomed)).toBeUndefined();
    expect(await repo.discoveredFor(doomed)).toBeUndefined();
    expect(await repo.discoveredFor(kept)).toContain('kept-model');
    // pino levels: 40 warn, 50 error.
    expect(logged.filter((l) => l.level >= 40).map((l) => [l.msg, l.reason])).toEqual([]);
  });
});
