import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { createServices } from '../../src/services.js';
import { TEST_REDIS_URL } from '../helpers/databases.js';
import { ROOT_PASSWORD, startTestGateway, type TestGateway } from '../helpers/gateway.js';

// The config file and the environment own the channels they declare: what they stop declaring
// leaves service at the next start (docs/configuration.md, "Upstreams (channels)").

const open: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  for (const g of open.reverse()) await g.close().catch(() => {});
});

const decl = (name: string, model = `${name}-model`) => ({
  name,
  kind: 'openai-compatible',
  base_url: 'http://127.0.0.1:9/v1',
  models: [model],
});

interface Started extends TestGateway {
  warnings: string[];
}

/** One start of the gateway: a fresh database, or `databaseUrl` for a restart on the same one. */
async function start(
  channels: unknown[],
  opts: { databaseUrl?: string; env?: Record<string, string> } = {},
): Promise<Started> {
  const warnings: string[] = [];
  const log = pino(
    { level: 'warn' },
    { write: (line: string) => warnings.push(JSON.parse(line).msg as string) },
  ) as FastifyBaseLogger;
  const gw = await startTestGateway(
    { channels, gateway: { discover_models: false } },
    { databaseUrl: opts.databaseUrl, env: opts.env, log },
  );
  open.push(opts.databaseUrl ? { close: () => gw.stop() } : gw);
  return Object.assign(gw, { warnings });
}

async function rows(gw: TestGateway): Promise<Array<{ id: number; name: string; source: string }>> {
  const cookie = await gw.login();
  const data = (await gw.call('GET', '/api/channel?page_size=100', { cookie })).body.data as any[];
  return data.map((c) => ({ id: c.id, name: c.name, source: c.source }));
}

const served = (gw: TestGateway, model: string) =>
  gw.services.registry.targetsFor(model, { endpoint: 'chat' }).map((t) => t.channelName);

async function createInConsole(gw: TestGateway, body: Record<string, unknown>): Promise<number> {
  const cookie = await gw.login();
  const res = await gw.call('POST', '/api/channel', { cookie, body });
  expect(res.status).toBe(200);
  return res.body.data.id as number;
}

describe('declared channels at start', () => {
  it('a channel removed from the file is deleted at the next start; console channels stay', async () => {
    const first = await start([decl('cfg-a'), decl('cfg-b')]);
    const apiId = await createInConsole(first, decl('console-c'));
    const before = await rows(first);
    await first.stop();

    const second = await start([decl('cfg-a')], { databaseUrl: first.databaseUrl });
    expect(await rows(second)).toEqual([
      before.find((r) => r.name === 'cfg-a'),
      { id: apiId, name: 'console-c', source: 'api' },
    ]);
    expect(served(second, 'cfg-b-model')).toEqual([]);
    expect(served(second, 'console-c-model')).toEqual(['console-c']);
    expect(second.warnings).toContain(
      'channel cfg-b deleted: the config file or environment no longer declares it',
    );
    // and the next start with the same file changes nothing more
    const kept = await rows(second);
    await second.stop();
    const third = await start([decl('cfg-a')], { databaseUrl: first.databaseUrl });
    expect(await rows(third)).toEqual(kept);
    expect(third.warnings).toEqual([]);
  });

  it('an env-<p> channel is deleted when its variable is gone', async () => {
    const env = { OPENAI_API_KEY: 'sk-env-key-abcdefghijkl', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' };
    const first = await start([decl('cfg-a')], { env: { ...env, OPENAI_MODELS: 'gpt-4o-mini' } });
    expect((await rows(first)).map((r) => [r.name, r.source])).toEqual([
      ['cfg-a', 'config'],
      ['env-openai', 'env'],
    ]);
    expect(served(first, 'openai/gpt-4o-mini')).toEqual(['env-openai']);
    await first.stop();

    const second = await start([decl('cfg-a')], { databaseUrl: first.databaseUrl });
    expect((await rows(second)).map((r) => r.name)).toEqual(['cfg-a']);
    expect(served(second, 'openai/gpt-4o-mini')).toEqual([]);
    expect(second.warnings).toContain(
      'channel env-openai deleted: the config file or environment no longer declares it',
    );
  });

  it('renaming a channel in the file replaces it', async () => {
    const first = await start([decl('cfg-old', 'm1')]);
    const [old] = await rows(first);
    await first.stop();

    const second = await start([decl('cfg-new', 'm1')], { databaseUrl: first.databaseUrl });
    const after = await rows(second);
    expect(after.map((r) => [r.name, r.source])).toEqual([['cfg-new', 'config']]);
    expect(after[0]!.id).not.toBe(old!.id);
    expect(served(second, 'm1')).toEqual(['cfg-new']);
  });

  it('a declared name equal to a console channel takes that channel over; removed, it is deleted', async () => {
    const first = await start([]);
    const id = await createInConsole(first, { ...decl('shared', 'console-model'), priority: 7 });
    await first.stop();

    const second = await start([decl('shared', 'file-model')], { databaseUrl: first.databaseUrl });
    expect(await rows(second)).toEqual([{ id, name: 'shared', source: 'config' }]);
    expect(served(second, 'file-model')).toEqual(['shared']);
    expect(served(second, 'console-model')).toEqual([]);
    expect(second.warnings).toContain(
      'channel shared was created in the console and is now declared with the same name: the config file owns it from now on',
    );
    await second.stop();

    const third = await start([], { databaseUrl: first.databaseUrl });
    expect(await rows(third)).toEqual([]);
  });

  it('a config channel deleted in the console comes back from the file at the next start', async () => {
    const first = await start([decl('cfg-a')]);
    const cookie = await first.login();
    const [row] = await rows(first);
    expect((await first.call('DELETE', `/api/channel/${row!.id}`, { cookie })).status).toBe(200);
    expect(await rows(first)).toEqual([]);
    await first.stop();

    const second = await start([decl('cfg-a')], { databaseUrl: first.databaseUrl });
    expect((await rows(second)).map((r) => [r.name, r.source])).toEqual([['cfg-a', 'config']]);
    expect(served(second, 'cfg-a-model')).toEqual(['cfg-a']);
  });

  it('two instances starting together without a channel both start and delete it once', async () => {
    const first = await start([decl('cfg-a'), decl('cfg-b')]);
    await createInConsole(first, decl('console-c'));
    await first.stop();

    const both = await Promise.all([
      start([decl('cfg-a')], { databaseUrl: first.databaseUrl }),
      start([decl('cfg-a')], { databaseUrl: first.databaseUrl }),
    ]);
    for (const gw of both) {
      expect((await rows(gw)).map((r) => r.name)).toEqual(['cfg-a', 'console-c']);
      // The instance whose delete came second found nothing to delete; it learns of the other's
      // from the registry version, like any change made by another instance.
      await vi.waitFor(() => expect(served(gw, 'cfg-b-model')).toEqual([]), { timeout: 5000, interval: 50 });
    }
    const deletions = both.flatMap((gw) => gw.warnings).filter((w) => w.startsWith('channel cfg-b deleted'));
    expect(deletions).toHaveLength(1);
  });

  it('the first start under this rule keeps what an older start imported and is no longer declared', async () => {
    const first = await start([decl('cfg-a'), decl('cfg-b')]);
    // A database from before: no record that the declarations own their channels.
    await first.services.database.db
      .deleteFrom('kv')
      .where('key', '=', 'channels:declarations-owned')
      .execute();
    // cfg-b last written long ago (the test runs within a second, and times are whole seconds).
    const old = 1_600_000_000;
    await first.services.database.db
      .updateTable('channels')
      .set({ updated_time: old })
      .where('name', '=', 'cfg-b')
      .execute();
    await first.stop();

    const handedOver = Math.floor(Date.now() / 1000);
    const second = await start([decl('cfg-a')], { databaseUrl: first.databaseUrl });
    expect((await rows(second)).map((r) => [r.name, r.source])).toEqual([
      ['cfg-a', 'config'],
      ['cfg-b', 'api'],
    ]);
    // The hand-over is a write of the row like any other: its updated_time moves on.
    const adopted = await second.services.database.db
      .selectFrom('channels')
      .select('updated_time')
      .where('name', '=', 'cfg-b')
      .executeTakeFirstOrThrow();
    expect(Number(adopted.updated_time)).toBeGreaterThanOrEqual(handedOver);
    expect(served(second, 'cfg-b-model')).toEqual(['cfg-b']);
    expect(second.warnings).toContain(
      'channel cfg-b was imported from the config file or environment, which no longer declare it: kept as a console channel (delete it in the console if it is not wanted)',
    );
    await second.stop();
    // from then on it is a console channel: later starts leave it alone
    const third = await start([decl('cfg-a')], { databaseUrl: first.databaseUrl });
    expect((await rows(third)).map((r) => r.name)).toEqual(['cfg-a', 'cfg-b']);
  });

  it('a CLI command run without the channels removes nothing', async () => {
    const first = await start([decl('cfg-a')]);
    await first.stop();
    const services = await createServices(
      loadConfig(
        {},
        {
          database: { url: first.databaseUrl, pool_size: 2 },
          redis: { url: TEST_REDIS_URL },
          auth: { root_password: ROOT_PASSWORD },
          log: { level: 'silent' },
          catalog: { seed: false },
          gateway: { discover_models: false },
        },
      ),
    );
    const left = await services.registry.channels.list(0, 10);
    await services.close();
    expect(left.rows.map((r) => [r.name, r.source])).toEqual([['cfg-a', 'config']]);
  });
});
