/**
 * The outcome of a channel's last model listing (migration 0010): kept on the channel's row, so
 * every instance on the database answers it, written without moving the channel's revision (a
 * listing is not a change of the channel), and only while the channel exists. SQLite here,
 * PostgreSQL under `npm run test:pg`.
 */
import { Migrator } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { ChannelsRepo, type NewChannelRow } from '../../src/store/channels-repo.js';
import { type Database, openDatabase } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { migrationsFor } from '../../src/store/migrations/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';

const channel = (name: string): NewChannelRow => ({
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
  source: 'api',
  created_time: 1,
  updated_time: 1,
});

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

const FAILED = {
  listing_time: 1_800_000_000,
  listing_ok: 0,
  listing_models: null,
  listing_error_kind: 'server_error',
  listing_upstream_status: 500,
  listing_message: 'http://127.0.0.1:9 answered 500: boom',
};
const LISTED = {
  listing_time: 1_800_000_060,
  listing_ok: 1,
  listing_models: 3,
  listing_error_kind: null,
  listing_upstream_status: null,
  listing_message: null,
};

describe('ChannelsRepo listing outcome', () => {
  it('stores the last outcome on the channel, replacing the one before, without moving its revision', async () => {
    const repo = await fresh();
    const c = await repo.insert(channel('one'));
    expect(c).toMatchObject({ listing_time: null, listing_ok: null, listing_message: null });

    expect(await repo.setListing(c.id, FAILED)).toBe(true);
    const failed = await repo.byId(c.id);
    expect({ ...failed, listing_time: Number(failed!.listing_time) }).toMatchObject({
      ...FAILED,
      revision: c.revision,
      updated_time: c.updated_time,
    });

    expect(await repo.setListing(c.id, LISTED)).toBe(true);
    const listed = (await repo.list(0, 10)).rows[0]!;
    expect({ ...listed, listing_time: Number(listed.listing_time) }).toMatchObject({
      ...LISTED,
      revision: c.revision,
    });

    // A change of the channel keeps it (it writes only the channel's own fields).
    const changed = await repo.update(c.id, c.revision, {
      base_url: 'http://127.0.0.1:10/v1',
      updated_time: 2,
    });
    expect(changed).toMatchObject({ listing_ok: 1, listing_models: 3, revision: c.revision + 1 });
  });

  it('writes nothing for a channel that is gone', async () => {
    const repo = await fresh();
    const c = await repo.insert(channel('gone'));
    expect(await repo.delete(c.id)).toBe(true);
    expect(await repo.setListing(c.id, FAILED)).toBe(false);
    expect(await repo.all()).toEqual([]);
  });

  it('migration 0010 gives the channels already stored no outcome', async () => {
    t = await createTestDatabase();
    d = openDatabase(t.url);
    const before = Object.fromEntries(
      Object.entries(migrationsFor(d.dialect)).filter(([name]) => name < '0010'),
    );
    const r = await new Migrator({
      db: d.db,
      provider: { getMigrations: async () => before },
      migrationTableName: 'mg_migrations',
      migrationLockTableName: 'mg_migrations_lock',
    }).migrateToLatest();
    if (r.error) throw r.error;
    const old = await new ChannelsRepo(d).insert(channel('old'));
    expect((await migrateToLatest(d))[0]).toBe('0010-channel-listing-outcome');
    const repo = new ChannelsRepo(d);
    expect(await repo.byId(old.id)).toMatchObject({
      name: 'old',
      revision: old.revision,
      listing_time: null,
      listing_ok: null,
      listing_models: null,
      listing_error_kind: null,
      listing_upstream_status: null,
      listing_message: null,
    });
    expect(await repo.setListing(old.id, FAILED)).toBe(true);
  });
});
