import type { Kysely } from 'kysely';

/**
 * What makes the request path's writes to PostgreSQL safe to repeat when a reply is lost (the
 * connection cut after the server committed): the client cannot tell a commit from a failure.
 * - `request_log_writers`: per request-log writer (one per process), the sequence number of its
 *   last committed batch. A batch retried after its commit is recognised and not written twice.
 * - `quota_holds`: one row per granted quota reservation, written by the same statement as the
 *   hold itself, so a reservation whose answer never came can be looked up and given back.
 * SQLite's writes run in-process and cannot lose their answer; the tables exist there too so
 * both schemas stay one.
 */
export function writeOnce() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('request_log_writers')
        .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('last_seq', 'bigint', (c) => c.notNull())
        .addColumn('updated_time', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('quota_holds')
        .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('created_time', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('quota_holds_time').on('quota_holds').column('created_time').execute();
    },
  };
}
