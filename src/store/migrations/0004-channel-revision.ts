import type { Kysely } from 'kysely';

/**
 * `channels.revision`: a counter every write of the row moves on by one, so an update can be
 * written only over the row it was computed from (`UPDATE ... WHERE id = ? AND revision = ?`) and
 * a client can send the revision it read (`PUT /api/channel`). `updated_time` cannot serve: it
 * is in whole seconds. Existing rows start at 1, as new ones do.
 */
export function channelRevision() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .alterTable('channels')
        .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();
    },
  };
}
