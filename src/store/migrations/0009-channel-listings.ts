import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * A channel's stored model listing (`kv` row `channel-models:<id>`) goes with the channel, in the
 * database itself: a trigger deletes it with any delete of the channel's row, in the same
 * statement. Before, the listing was deleted by a second statement, and a listing under way when
 * its channel was deleted wrote one afterwards for a channel that no longer existed
 * (ChannelsRepo.setDiscovered now writes only while the channel exists).
 *
 * The listings earlier versions left that way are deleted here. Channel ids are never handed out
 * twice (AUTOINCREMENT, serial), so such a row was dead weight, never a new channel's listing.
 * A trigger, not a transaction around two deletes: on SQLite a transaction held across awaits
 * blocks every other connection of the process (instances in one test process) for its busy wait.
 */
export function channelListings(dialect: Dialect) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      if (dialect === 'postgres') {
        await sql`
          CREATE FUNCTION channels_delete_listing() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            DELETE FROM kv WHERE key = 'channel-models:' || OLD.id;
            RETURN OLD;
          END $$`.execute(db);
        await sql`
          CREATE TRIGGER channels_delete_listing AFTER DELETE ON channels
          FOR EACH ROW EXECUTE FUNCTION channels_delete_listing()`.execute(db);
      } else
        await sql`
          CREATE TRIGGER channels_delete_listing AFTER DELETE ON channels BEGIN
            DELETE FROM kv WHERE key = 'channel-models:' || OLD.id;
          END`.execute(db);
      await deleteOrphans(db);
    },
  };
}

async function deleteOrphans(db: Kysely<any>): Promise<void> {
  const ids = new Set((await db.selectFrom('channels').select('id').execute()).map((r) => String(r.id)));
  const orphans = (await db.selectFrom('kv').select('key').where('key', 'like', `${PREFIX}%`).execute())
    .map((r) => String(r.key))
    .filter((key) => !ids.has(key.slice(PREFIX.length)));
  for (let i = 0; i < orphans.length; i += BATCH)
    await db
      .deleteFrom('kv')
      .where('key', 'in', orphans.slice(i, i + BATCH))
      .execute();
}

const PREFIX = 'channel-models:';
const BATCH = 500;
