import { afterAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { startGateway } from '../../src/main.js';
import { openDatabase } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { createTestDatabase, TEST_REDIS_URL } from '../helpers/databases.js';
import { ROOT_PASSWORD, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const open: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  for (const g of open.reverse()) await g.close().catch(() => {});
});

const channels = [
  {
    name: 'cfg-anthropic',
    kind: 'anthropic',
    keys: ['sk-ant-config-key-123456'],
    models: ['anthropic/claude-sonnet-4'],
    priority: 3,
  },
  {
    name: 'cfg-local',
    kind: 'openai-compatible',
    base_url: 'http://127.0.0.1:9/v1',
    models: ['local-model'],
  },
];

async function start(databaseUrl?: string): Promise<TestGateway> {
  const gw = await startTestGateway(
    { channels, gateway: { discover_models: false } },
    databaseUrl ? { databaseUrl } : {},
  );
  open.push(databaseUrl ? { close: () => gw.stop() } : gw);
  return gw;
}

async function rows(gw: TestGateway) {
  const cookie = await gw.login();
  return (await gw.call('GET', '/api/channel?page_size=100', { cookie })).body.data as any[];
}

describe('config import', () => {
  it('is idempotent across restarts and instances started together', async () => {
    const first = await start();
    const before = await rows(first);
    expect(before.map((c) => [c.name, c.source])).toEqual([
      ['cfg-anthropic', 'config'],
      ['cfg-local', 'config'],
    ]);
    // a plain restart, then two more instances at the same moment, on the same database
    await first.stop();
    const again = await Promise.all([start(first.databaseUrl), start(first.databaseUrl)]);
    for (const gw of again) {
      const after = await rows(gw);
      expect(after).toEqual(before);
    }
    const t = again[1]!.services.registry.targetsFor('claude-sonnet-4-20250514', { endpoint: 'chat' });
    // listed by registry id on an Anthropic channel: sent under Anthropic's own name
    expect(t[0]).toMatchObject({
      channelName: 'cfg-anthropic',
      upstreamModel: 'claude-sonnet-4-20250514',
      priority: 3,
    });
    expect(t[0]!.keys).toEqual(['sk-ant-config-key-123456']);
  });

  it('two instances starting together on an empty database leave one row per channel', async () => {
    const db = await createTestDatabase();
    open.push({ close: () => db.drop() });
    // Migrations first: two processes racing the SQLite schema creation is a separate matter.
    const d = openDatabase(db.url);
    await migrateToLatest(d);
    await d.close();
    const [a, b] = await Promise.all([start(db.url), start(db.url)]);
    expect((await rows(a)).map((c) => c.name)).toEqual(['cfg-anthropic', 'cfg-local']);
    // served_models is each instance's own catalog: both serve the declared channels once
    // started, also the one that found the other's rows already written (it used to wait a poll).
    expect(await rows(b)).toEqual(await rows(a));
  });

  it('another instance sees a change within its poll interval', async () => {
    const a = await start();
    const b = await start(a.databaseUrl);
    const cookie = await a.login();
    const id = (await rows(a)).find((c) => c.name === 'cfg-local').id;
    expect(b.services.registry.targetsFor('local-model', { endpoint: 'chat' })).toHaveLength(1);
    await a.call('PUT', '/api/channel', { cookie, body: { id, status: 2 } });
    expect(a.services.registry.targetsFor('local-model', { endpoint: 'chat' })).toEqual([]);
    await vi.waitFor(
      () => expect(b.services.registry.targetsFor('local-model', { endpoint: 'chat' })).toEqual([]),
      {
        timeout: 5000,
        interval: 50,
      },
    );
    // a restart re-applies the config file (it owns config channels)
    await b.stop();
    const c = await start(a.databaseUrl);
    expect(c.services.registry.targetsFor('local-model', { endpoint: 'chat' })).toHaveLength(1);
  });

  it('an environment shortcut becomes a channel named env-openai', async () => {
    const db = await createTestDatabase();
    const config = loadConfig(
      {
        OPENAI_API_KEY: 'sk-env-key-abcdefghijkl',
        OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
        OPENAI_MODELS: 'gpt-4o-mini,gpt-4.1',
      },
      {
        server: { host: '127.0.0.1', port: 0, serve_console: false },
        database: { url: db.url, pool_size: 5 },
        redis: { url: TEST_REDIS_URL },
        auth: { root_password: ROOT_PASSWORD },
        log: { level: 'silent' },
        catalog: { seed: false },
        gateway: { discover_models: false },
      },
    );
    const gw = await startGateway(config);
    open.push({
      close: async () => {
        await gw.stop();
        await db.drop();
      },
    });
    const t = gw.services.registry.targetsFor('openai/gpt-4o-mini', { endpoint: 'chat' });
    expect(t).toHaveLength(1);
    expect(t[0]).toMatchObject({
      channelName: 'env-openai',
      kind: 'openai-compatible',
      baseUrl: 'http://127.0.0.1:9/v1',
      upstreamModel: 'gpt-4o-mini',
      keys: ['sk-env-key-abcdefghijkl'],
    });
    const list = await gw.services.registry.channels.list(0, 10);
    expect(list.rows[0]).toMatchObject({ name: 'env-openai', source: 'env', keys: ['sk-e…ijkl'] });
  });
});
