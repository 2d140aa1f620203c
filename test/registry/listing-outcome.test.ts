/**
 * `GET /api/channel` answers each channel's last model listing (`listing`): when it ended,
 * whether it succeeded and how many models it listed, or why it failed in the fields a failed
 * Test answers. Before, a channel serving no models said nothing of whether its list could not be
 * read or was empty, and the refresh's failure carried its kind only in its message text.
 * SQLite here, PostgreSQL under `npm run test:pg`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChannelChange } from '../../src/gateway/registry/channel-service.js';
import { ChannelsRepo } from '../../src/store/channels-repo.js';
import { openDatabase } from '../../src/store/database.js';
import { type FakeAnswer, type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const LISTED: FakeAnswer = {
  json: {
    object: 'list',
    data: [
      { id: 'alpha-model', object: 'model', owned_by: 'vllm' },
      { id: 'beta-model', object: 'model', owned_by: 'vllm' },
    ],
  },
};

let up: FakeUpstream;
let gw: TestGateway;
let root: string;
const startedAt = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  // The upstream is failing when the gateway starts.
  up = await startFakeUpstream({ 'GET /v1/models': { status: 500, json: { error: { message: 'boom' } } } });
  gw = await startTestGateway({
    gateway: { discover_models: true, discovery_interval_ms: 0 },
    channels: [{ name: 'flaky', kind: 'openai-compatible', base_url: `${up.url}/v1` }],
  });
  root = await gw.login();
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

async function channel(name: string): Promise<any> {
  const list = await gw.call('GET', '/api/channel', { cookie: root });
  expect(list.status).toBe(200);
  return list.body.data.find((c: any) => c.name === name);
}

describe('the outcome of the last model listing', () => {
  it("shows the start's failed listing, with its kind, status and message", async () => {
    const c = await channel('flaky');
    expect(c.served_models).toEqual([]);
    expect(c.listing).toEqual({
      time: expect.any(Number),
      ok: false,
      models: null,
      error_kind: 'server_error',
      upstream_status: 500,
      message: expect.stringContaining('boom'),
    });
    expect(c.listing.time).toBeGreaterThanOrEqual(startedAt);
    expect((await gw.call('GET', `/api/channel/${c.id}`, { cookie: root })).body.data.listing).toEqual(
      c.listing,
    );
  });

  it('answers a failed refresh with the same fields, and a later success replaces them', async () => {
    const { id } = await channel('flaky');
    // Garbage where the list should be: the answer is not the channel kind's wire format.
    up.on('GET /v1/models', {
      body: '<html>not a model list</html>',
      headers: { 'content-type': 'text/html' },
    });
    const failed = await gw.call('POST', `/api/channel/${id}/models/refresh`, { cookie: root });
    expect(failed.status).toBe(502);
    expect(failed.body).toMatchObject({
      success: false,
      message: expect.stringContaining('unparseable model list'),
      data: { ok: false, models: null, error_kind: 'bad_response', upstream_status: 200 },
    });
    const shown = (await channel('flaky')).listing;
    expect(shown).toEqual(failed.body.data);
    expect(shown.message).toContain('unparseable model list');

    up.on('GET /v1/models', LISTED);
    const listed = await gw.call('POST', `/api/channel/${id}/models/refresh`, { cookie: root });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual(['alpha-model', 'beta-model']);
    const c = await channel('flaky');
    expect(c.served_models).toEqual(['alpha-model', 'beta-model']);
    expect(c.listing).toEqual({
      time: expect.any(Number),
      ok: true,
      models: 2,
      error_kind: null,
      upstream_status: null,
      message: null,
    });
  });

  it('tells an empty listing from one that could not be read', async () => {
    const { id } = await channel('flaky');
    up.on('GET /v1/models', { json: { object: 'list', data: [] } });
    expect((await gw.call('POST', `/api/channel/${id}/models/refresh`, { cookie: root })).status).toBe(200);
    const c = await channel('flaky');
    expect(c.served_models).toEqual([]);
    expect(c.listing).toMatchObject({ ok: true, models: 0, error_kind: null });
  });

  it("records the listing a create starts, null before any, and another instance's GET answers it", async () => {
    up.on('GET /v1/models', { status: 401, json: { error: { message: 'bad key' } } });
    const made = await gw.services.registry.channels.create({
      name: 'made',
      kind: 'openai-compatible',
      base_url: `${up.url}/v1`,
    });
    expect(made.channel.listing).toBeNull();
    expect(await (made as ChannelChange).listing).toEqual({ error: expect.stringContaining('bad key') });
    expect((await channel('made')).listing).toMatchObject({
      ok: false,
      error_kind: 'auth',
      upstream_status: 401,
    });

    // A declared channel naming its models is never listed.
    const named = await gw.call('POST', '/api/channel', {
      cookie: root,
      body: { name: 'named', kind: 'openai-compatible', base_url: `${up.url}/v1`, models: ['m/one'] },
    });
    expect(named.body.data.listing).toBeNull();

    // Declaring the same channel: its start writes it again, and keeps its listing's outcome.
    const other = await startTestGateway(
      {
        gateway: { discover_models: false },
        channels: [{ name: 'flaky', kind: 'openai-compatible', base_url: `${up.url}/v1` }],
      },
      { databaseUrl: gw.databaseUrl },
    );
    try {
      const cookie = await other.login();
      const seen = (await other.call('GET', '/api/channel', { cookie })).body.data;
      expect(seen.find((c: any) => c.name === 'made').listing).toMatchObject({ error_kind: 'auth' });
      expect(seen.find((c: any) => c.name === 'flaky').listing).toMatchObject({ ok: true, models: 0 });
    } finally {
      await other.stop();
    }
  });

  it('an empty listing kept over a stored one (a background round) is recorded as such', async () => {
    up.on('GET /v1/models', LISTED);
    const { id } = await channel('flaky');
    expect((await gw.call('POST', `/api/channel/${id}/models/refresh`, { cookie: root })).status).toBe(200);
    up.on('GET /v1/models', { json: { object: 'list', data: [] } });
    await gw.services.registry.channels.discoverAll();
    const c = await channel('flaky');
    expect(c.served_models).toEqual(['alpha-model', 'beta-model']);
    expect(c.listing).toMatchObject({
      ok: false,
      models: 0,
      error_kind: 'empty',
      upstream_status: null,
      message: expect.stringContaining('kept the 2 it listed before'),
    });
    // The row the database holds, as any instance reads it.
    const d = openDatabase(gw.databaseUrl);
    try {
      expect(await new ChannelsRepo(d).byId(id)).toMatchObject({
        listing_ok: 0,
        listing_error_kind: 'empty',
      });
    } finally {
      await d.close();
    }
  });
});
