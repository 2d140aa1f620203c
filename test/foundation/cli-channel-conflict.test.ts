/**
 * `modelgate channel update --pricing` writes the prices over the settings it read, at the
 * revision it read them. A change of the channel by someone else between its read and its write
 * (another administrator, the console, a gateway start) makes that write a 409: the command reads
 * the channel again and lays the prices over it as it is now, so both changes are kept.
 *
 * In-process, so the other writer can be slipped in exactly between the command's read and its
 * write: the service's update runs the other writer's change (on its own database connection)
 * first. SQLite here, PostgreSQL under `npm run test:pg`.
 */
import { Command } from 'commander';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { registerChannelCommands } from '../../src/cli/channel-commands.js';
import { ChannelService } from '../../src/gateway/registry/channel-service.js';
import { ChannelsRepo } from '../../src/store/channels-repo.js';
import { type Database, openDatabase } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';

let db: TestDatabase;
let other: Database;
let channels: ChannelsRepo;

beforeAll(async () => {
  db = await createTestDatabase();
  other = openDatabase(db.url);
  await migrateToLatest(other);
  channels = new ChannelsRepo(other);
});
afterAll(async () => {
  await other?.close();
  await db?.drop();
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

/** Runs `modelgate channel <args>` in this process; resolves with what it printed, or its error. */
async function cli(args: string[]): Promise<{ stdout: string; error?: string }> {
  vi.stubEnv('DATABASE_URL', db.url);
  vi.stubEnv('MODELGATE_LOG_LEVEL', 'silent');
  vi.stubEnv('MODELGATE_CONFIG', '');
  let stdout = '';
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  const program = new Command('modelgate').exitOverride();
  registerChannelCommands(program);
  try {
    await program.parseAsync(['channel', ...args], { from: 'user' });
    return { stdout };
  } catch (err) {
    return { stdout, error: (err as Error).message };
  } finally {
    write.mockRestore();
  }
}

/** Before each of the command's first `times` writes, another writer changes the channel. */
function changedMeanwhile(times: number, change: (n: number) => Record<string, unknown>): () => number {
  const update = ChannelService.prototype.update;
  let n = 0;
  vi.spyOn(ChannelService.prototype, 'update').mockImplementation(async function (
    this: ChannelService,
    ...args: Parameters<ChannelService['update']>
  ) {
    if (n < times) {
      const now = (await channels.byId(args[0]))!;
      await channels.update(args[0], now.revision, change(++n));
    }
    return update.apply(this, args);
  });
  return () => n;
}

async function addChannel(name: string): Promise<number> {
  const added = await cli([
    'add',
    '--name',
    name,
    '--kind',
    'openai-compatible',
    '--base-url',
    'http://127.0.0.1:9/v1',
    '--models',
    'm1',
  ]);
  expect(added.error).toBeUndefined();
  return (await channels.byName(name))!.id;
}

describe('modelgate channel update --pricing, with another change in between', () => {
  it('reads the channel again and keeps both changes', async () => {
    const id = await addChannel('raced');
    const theirs = changedMeanwhile(1, () => ({
      priority: 7,
      settings: JSON.stringify({ rpm: 60, pricing: { 'x/y': { prompt: '1' } } }),
    }));
    const r = await cli(['update', 'raced', '--pricing', '{"m1": {"prompt": "0.000001"}}']);
    expect(r).toEqual({
      stdout: expect.stringMatching(new RegExp(`^updated channel raced \\(id ${id}\\): pricing\\n`)),
    });
    expect(theirs()).toBe(1);
    const stored = (await channels.byId(id))!;
    // Their priority and rpm, and the command's prices (which replace theirs).
    expect(stored.priority).toBe(7);
    expect(JSON.parse(stored.settings)).toEqual({ rpm: 60, pricing: { m1: { prompt: '0.000001' } } });
    // Added at 1, their change 2, the command's 3.
    expect(stored.revision).toBe(3);
  });

  it('gives up after a few tries with a clear error, writing nothing', async () => {
    const id = await addChannel('busy');
    const theirs = changedMeanwhile(Number.POSITIVE_INFINITY, (n) => ({ weight: n }));
    const r = await cli(['update', 'busy', '--pricing', '{"m1": {"prompt": "0.000001"}}']);
    expect(r).toEqual({
      stdout: '',
      error: `channel busy (id ${id}) was changed by others 5 times while its prices were being set: nothing was written; try again`,
    });
    expect(theirs()).toBe(5);
    const stored = (await channels.byId(id))!;
    expect(stored).toMatchObject({ weight: 5, revision: 6 });
    expect(JSON.parse(stored.settings)).toEqual({});
  });
});
