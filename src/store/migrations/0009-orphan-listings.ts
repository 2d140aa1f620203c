import type { Kysely } from 'kysely';

/**
 * Deletes the stored model listings (`kv` rows `channel-models:<id>`) of channels that no longer
 * exist. Before, a channel deleted while its listing was under way could be left one when the
 * listing ended after the delete; ChannelsRepo now refuses that write and deletes a channel's
 * listing with it, so none arises again. Channel ids are never handed out twice (AUTOINCREMENT,
 * serial), so such a row was dead weight, never a new channel's listing; it goes all the same.
 */
export function orphanListings() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      const ids = new Set(
        (await db.selectFrom('channels').select('id').execute()).map((r) => String(Number(r.id))),
      );
      const orphans = (await db.selectFrom('kv').select('key').where('key', 'like', `${PREFIX}%`).execute())
        .map((r) => String(r.key))
        .filter((key) => !ids.has(key.slice(PREFIX.length)));
      for (let i = 0; i < orphans.length; i += BATCH)
        await db
          .deleteFrom('kv')
          .where('key', 'in', orphans.slice(i, i + BATCH))
          .execute();
    },
  };
}

const PREFIX = 'channel-models:';
const BATCH = 500;
