/**
 * Channel updates are compare-and-swap on `channels.revision`: two admins (or two instances on
 * one database) changing different fields at once both land, and a client that sends the
 * revision it read gets a 409 instead of overwriting a change it has not seen. SQLite here,
 * PostgreSQL under `npm run test:pg`.
 *
 * The second instance runs in its own process: within one process, SQLite's calls are
 * synchronous and one update runs from its read to its write without another in between, so
 * only a second process (as in production) races it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import type { GatewayError } from '../../src/gateway/errors.js';
import { createRegistry } from '../../src/gateway/registry/index.js';
import { sharedUpstreamClient } from '../../src/gateway/upstream/upstream-client.js';
import { ChannelsRepo } from '../../src/store/channels-repo.js';
import { openDatabase } from '../../src/store/database.js';
import { ModelsRepo } from '../../src/store/models-repo.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const DECLARED = {
  name: 'declared',
  kind: 'openai-compatible',
  base_url: 'http://127.0.0.1:9/v1',
  models: ['m-declared'],
};
const CONFIG = { channels: [DECLARED], gateway: { discover_models: false } };

interface Instance {
  url: string;
}

let gw1: TestGateway;
let gw2: Instance;
let child: ChildProcess | undefined;
let root: string;

/** `modelgate serve` in a child process on the same database and declarations as gw1. */
async function serveInChild(databaseUrl: string): Promise<Instance> {
  const config = join(mkdtempSync(join(tmpdir(), 'mg-rev-')), 'modelgate.json');
  writeFileSync(config, JSON.stringify({ ...CONFIG, server: { host: '127.0.0.1', serve_console: false } }));
  child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve'], {
    env: {
      PATH: process.env.PATH ?? '',
      MODELGATE_CONFIG: config,
      DATABASE_URL: databaseUrl,
      MODELGATE_PORT: '0',
      MODELGATE_LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child!.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /modelgate listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child!.once('exit', (code) => reject(new Error(`serve exited (${code}): ${out}`)));
  });
  return { url };
}

beforeAll(async () => {
  gw1 = await startTestGateway(CONFIG);
  gw2 = await serveInChild(gw1.databaseUrl);
  root = await gw1.login();
}, 60_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child!.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  await gw1?.close();
});

async function create(name: string) {
  const r = await call(gw1, 'POST', '/api/channel', {
    name,
    kind: 'openai-compatible',
    base_url: 'http://127.0.0.1:9/v1',
    models: ['m'],
  });
  expect(r.status).toBe(200);
  return r.body.data as { id: number; revision: number };
}

async function call(gw: Instance, method: string, path: string, body?: unknown) {
  const res = await fetch(gw.url + path, {
    method,
    headers: { cookie: root, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}
const put = (gw: Instance, body: Record<string, unknown>) => call(gw, 'PUT', '/api/channel', body);
const get = async (gw: Instance, id: number) => (await call(gw, 'GET', `/api/channel/${id}`)).body.data;

describe('channel revision', () => {
  it('is in every answer and moves on by one with each change', async () => {
    const c = await create('rev-answers');
    expect(c.revision).toBe(1);
    expect((await get(gw1, c.id)).revision).toBe(1);
    const list = await call(gw2, 'GET', '/api/channel?page_size=100');
    expect(list.body.data.find((x: { id: number }) => x.id === c.id).revision).toBe(1);

    const a = await put(gw1, { id: c.id, priority: 3 });
    expect(a.status).toBe(200);
    expect(a.body.data).toMatchObject({ priority: 3, revision: 2 });
    const b = await put(gw2, { id: c.id, weight: 4, revision: 2 });
    expect(b.status).toBe(200);
    expect(b.body.data).toMatchObject({ priority: 3, weight: 4, revision: 3 });
    expect(await get(gw1, c.id)).toMatchObject({ priority: 3, weight: 4, revision: 3 });
  });

  it('PUTs of different fields at the same time all land, through one instance or two', async () => {
    const c = await create('rev-race');
    for (let i = 1; i <= 40; i++) {
      // Two instances race every round; the third PUT races on one instance too (PostgreSQL).
      const [a, b, d] = await Promise.all([
        put(gw1, { id: c.id, priority: i }),
        put(gw2, { id: c.id, settings: { rpm: 100 + i } }),
        put(i % 2 ? gw1 : gw2, { id: c.id, weight: i }),
      ]);
      expect([a.status, b.status, d.status], JSON.stringify([a.body, b.body, d.body])).toEqual([
        200, 200, 200,
      ]);
      const stored = await get(gw1, c.id);
      expect(stored, `round ${i}`).toMatchObject({ priority: i, weight: i, settings: { rpm: 100 + i } });
      expect(stored.revision).toBe(1 + 3 * i);
    }
  });

  it('a PUT with a stale revision is a 409 and writes nothing', async () => {
    const c = await create('rev-stale');
    expect((await put(gw1, { id: c.id, priority: 7, revision: 1 })).status).toBe(200);
    const before = await get(gw1, c.id);

    const stale = await put(gw2, { id: c.id, weight: 9, settings: { rpm: 5 }, revision: 1 });
    expect(stale.status).toBe(409);
    expect(stale.body).toEqual({
      success: false,
      message: `channel ${c.id} was changed after revision 1 (it is at 2): nothing was written; read it again and redo the change`,
    });
    expect(await get(gw1, c.id)).toEqual(before);
    // A revision ahead of the stored one is no better.
    expect((await put(gw1, { id: c.id, weight: 9, revision: 3 })).status).toBe(409);
    expect(await get(gw1, c.id)).toEqual(before);

    // Unknown channel: still a 404, revision or not.
    expect((await put(gw1, { id: 999_999, weight: 9, revision: 1 })).status).toBe(404);
    expect((await put(gw1, { id: c.id, revision: -1 })).status).toBe(400);
  });

  it('the config import and the hand-over of undeclared channels move the revision on', async () => {
    const repo = new ChannelsRepo(gw1.services.database);
    const declared = (await repo.byName(DECLARED.name))!;
    expect(declared.revision).toBe(1);
    expect((await put(gw1, { id: declared.id, priority: 2 })).body.data.revision).toBe(2);

    // A third instance starts with the declaration as it was: the console's edit is undone.
    const gw3 = await startTestGateway(CONFIG, { databaseUrl: gw1.databaseUrl });
    try {
      expect(await get(gw3, declared.id)).toMatchObject({ priority: 0, revision: 3 });
      // So a client that read revision 2 does not write over what the start put back.
      expect((await put(gw3, { id: declared.id, weight: 2, revision: 2 })).status).toBe(409);
    } finally {
      await gw3.stop();
    }

    const adopted = await repo.adoptUndeclared([], Math.floor(Date.now() / 1000));
    expect(adopted.map((a) => a.name)).toEqual([DECLARED.name]);
    expect(await get(gw1, declared.id)).toMatchObject({ source: 'api', revision: 4 });
  });
});

/** The real repository, with another writer's write (on its own connection) landing just before each of ours. */
class RaceLosingRepo extends ChannelsRepo {
  before: (id: number) => Promise<void> = async () => {};
  override async update(...args: Parameters<ChannelsRepo['update']>) {
    await this.before(args[0]);
    return super.update(...args);
  }
}

describe('a channel update that loses every race', () => {
  it('gives up with a 409 after a few tries, writing nothing; a delete in between is a 404', async () => {
    const db = openDatabase(gw1.databaseUrl);
    const other = new ChannelsRepo(gw1.services.database);
    const repo = new RaceLosingRepo(db);
    const config = loadConfig(
      {},
      { database: { url: gw1.databaseUrl }, gateway: { discover_models: false } },
    );
    const registry = createRegistry({
      config,
      repos: { channels: repo, models: new ModelsRepo(db) },
      client: sharedUpstreamClient(),
    });
    const failure = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (e: GatewayError) => ({ status: e.status, message: e.message }),
      );
    try {
      const c = await create('rev-losing');
      let theirs = 0;
      repo.before = async (id) => {
        const now = (await other.byId(id))!;
        await other.update(id, now.revision, { priority: ++theirs });
      };
      expect(await failure(registry.channels.update(c.id, { weight: 5 }))).toEqual({
        status: 409,
        message: `channel ${c.id} is being changed by others at the same time: nothing was written; try again`,
      });
      expect(theirs).toBe(5);
      expect(await get(gw1, c.id)).toMatchObject({ priority: 5, weight: 1, revision: 6 });

      repo.before = async (id) => {
        await other.delete(id);
      };
      expect(await failure(registry.channels.update(c.id, { weight: 5 }))).toEqual({
        status: 404,
        message: `channel ${c.id} not found`,
      });
    } finally {
      await registry.close();
      await db.close();
    }
  });
});
