import type { Kysely } from 'kysely';

/**
 * The outcome of a channel's last model listing, on the channel's row (so it goes with the
 * channel, and every instance on the database answers it in `GET /api/channel`): when it ended
 * (`listing_time`, Unix seconds), whether it succeeded (`listing_ok`, 0/1), how many models it
 * listed, and for a failure the fields a failed channel test answers (error kind, upstream
 * status, message). All NULL until the channel is first listed, as for the channels stored
 * before this migration. Written by ChannelsRepo.setListing, which does not move the revision.
 */
export function channelListingOutcome() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      // One column a statement: SQLite's ALTER TABLE adds one at a time.
      const columns: Array<[string, 'bigint' | 'integer' | 'varchar(32)' | 'text']> = [
        ['listing_time', 'bigint'],
        ['listing_ok', 'integer'],
        ['listing_models', 'integer'],
        ['listing_error_kind', 'varchar(32)'],
        ['listing_upstream_status', 'integer'],
        ['listing_message', 'text'],
      ];
      for (const [name, type] of columns)
        await db.schema.alterTable('channels').addColumn(name, type).execute();
    },
  };
}
