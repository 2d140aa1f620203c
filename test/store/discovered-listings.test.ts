/**
 * A channel's stored model listing (`kv` row `channel-models:<id>`) lives and dies with the
 * channel: a listing write for a channel that is gone writes nothing, a delete takes the listing
 * along (the database's trigger, migration 0009), and that migration removes the listings an
 * earlier version left behind. SQLite here, PostgreSQL under `npm run test:pg` (where a delete
 * not yet committed is waited for).
 */
import { Migrator, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { ChannelsRepo, type NewChannelRow } from '../../src/store/channels-repo.js';
import { type Database, openDatabase } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { migrationsFor } from '../../src/store/migrations/index.js';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/databases.js';

const channel = (name: string, source = 'api'): NewChannelRow => ({
  name,
  kind: 'openai-compatible',
  base_url: 'http://127.0.0.1:9/v1',
  keys: '[]',
  models: '[]',
  model_mapping: '{}',
  priority: 0,
  weight: 1,
  status: 1,
  settings: '{}',
  source,
  created_time: 1,
  updated_time: 1,
});
const LISTING = JSON.stringify([{ name: 'm1' }]);

let t: TestDatabase | undefined;
let d: Database | undefined;
afterEach(async () => {
  await d?.close();
  await t?.drop();
  d = undefined;
  t = undefined;
});

async function fresh(): Promise<ChannelsRepo> {
  t = await createTestDatabase();
  d = openDatabase(t.url);
  await migrateToLatest(d);
  return new ChannelsRepo(d);
}

describe('ChannelsRepo listings', () => {
  it('stores a listing only while its channel exists, and a delete takes it along', async () => {
    const repo = await fresh();
    const c = await repo.insert(channel('one'));
    expect(await repo.setDiscovered(c.id, LISTING)).toBe(true);
    expect(await repo.setDiscovered(c.id, '[]')).toBe(true);
    expect(await repo.discoveredFor(c.id)).toBe('[]');

    expect(await repo.delete(c.id)).toBe(true);
    expect(await repo.discoveredFor(c.id)).toBeUndefined();
    expect(await repo.setDiscovered(c.id, LISTING)).toBe(false);
    expect(await repo.discovered()).toEqual(new Map());
    expect(await repo.setDiscovered(c.id + 100, LISTING)).toBe(false);
    expect(await repo.discovered()).toEqual(new Map());

    // The id of the channel deleted last is not handed out again.
    const next = await repo.insert(channel('one'));
    expect(next.id).toBeGreaterThan(c.id);
  });

  it('deletes the listings of the declared channels a start removes', async () => {
    const repo = await fresh();
    const kept = await repo.insert(channel('kept', 'config'));
    const gone = await repo.insert(channel('gone', 'config'));
    await repo.setDiscovered(kept.id, LISTING);
    await repo.setDiscovered(gone.id, LISTING);
    expect(await repo.deleteUndeclared(['kept'])).toEqual([{ id: gone.id, name: 'gone' }]);
    expect([...(await repo.discovered()).keys()]).toEqual([kept.id]);
  });

  it('writes nothing for a channel whose delete commits while the write waits on it', async () => {
    const repo = await fresh();
    const c = await repo.insert(channel('racing'));
    let write: Promise<boolean> | undefined;
    await d!.db.transaction().execute(async (trx) => {
      // The delete has run, not yet committed; the listing's write comes now.
      await trx.deleteFrom('channels').where('id', '=', c.id).execute();
      let settled = false;
      write = repo.setDiscovered(c.id, LISTING).finally(() => {
        settled = true;
      });
      // PostgreSQL: the write waits for the delete's row lock (or, wrongly, did not wait at all).
      if (onPostgres) await waitingOnALock(d!, () => settled);
    });
    expect(await write).toBe(false);
    expect(await repo.discoveredFor(c.id)).toBeUndefined();
  });
});

/**
 * Until a session of this database waits for a lock (the write, on the channel's row), or the write
 * ended without waiting. Asked on
 * another connection: inside a transaction, PostgreSQL answers pg_stat_activity from one snapshot.
 */
async function waitingOnALock(database: Database, settled: () => boolean): Promise<void> {
  while (!settled()) {
    const r = await sql<{ n: number }>`
      select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`.execute(database.db);
    if (r.rows[0]!.n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('migration 0009-channel-listings', () => {
  it('deletes the listings of channels that no longer exist, and keeps the others', async () => {
    t = await createTestDatabase();
    d = openDatabase(t.url);
    const before = Object.fromEntries(
      Object.entries(migrationsFor(d.dialect)).filter(([name]) => name < '0009'),
    );
    const r = await new Migrator({
      db: d.db,
      provider: { getMigrations: async () => before },
      migrationTableName: 'mg_migrations',
      migrationLockTableName: 'mg_migrations_lock',
    }).migrateToLatest();
    if (r.error) throw r.error;
    const repo = new ChannelsRepo(d);
    const live = await repo.insert(channel('live'));
    // As the earlier version left them: listings of deleted channels, written straight.
    await d.db
      .insertInto('kv')
      .values([
        { key: `channel-models:${live.id}`, value: LISTING },
        { key: `channel-models:${live.id + 1}`, value: LISTING },
        { key: `channel-models:${live.id + 20}`, value: '[]' },
        { key: 'registry:version', value: 'v1' },
      ])
      .execute();

    expect(await migrateToLatest(d)).toContain('0009-channel-listings');
    expect([...(await repo.discovered()).keys()]).toEqual([live.id]);
    expect(await repo.version()).toBe('v1');
    // From now on a channel's row takes its listing along however it is deleted, by hand too.
    await sql`delete from channels where id = ${live.id}`.execute(d.db);
    expect(await repo.discovered()).toEqual(new Map());
  });
});
