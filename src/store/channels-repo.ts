import { type Insertable, type Selectable, sql, type Updateable } from 'kysely';
import type { Database } from './database.js';
import type { ChannelsTable } from './schema.js';

export type ChannelRow = Selectable<ChannelsTable>;
export type NewChannelRow = Insertable<ChannelsTable>;
/** The outcome of a channel's last model listing, as its row holds it (schema.ts, migration 0010). */
export type ListingColumns = Pick<
  ChannelRow,
  | 'listing_time'
  | 'listing_ok'
  | 'listing_models'
  | 'listing_error_kind'
  | 'listing_upstream_status'
  | 'listing_message'
>;

export class ChannelsRepo {
  constructor(private readonly d: Database) {}

  all(): Promise<ChannelRow[]> {
    return this.d.db.selectFrom('channels').selectAll().orderBy('id').execute();
  }

  byId(id: number): Promise<ChannelRow | undefined> {
    return this.d.db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirst();
  }

  byName(name: string): Promise<ChannelRow | undefined> {
    return this.d.db.selectFrom('channels').selectAll().where('name', '=', name).executeTakeFirst();
  }

  async list(offset: number, limit: number): Promise<{ rows: ChannelRow[]; total: number }> {
    const [rows, total] = await Promise.all([
      this.d.db.selectFrom('channels').selectAll().orderBy('id').offset(offset).limit(limit).execute(),
      this.d.db
        .selectFrom('channels')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(total.n) };
  }

  insert(row: NewChannelRow): Promise<ChannelRow> {
    return this.d.db.insertInto('channels').values(row).returningAll().executeTakeFirstOrThrow();
  }

  /**
   * Insert or replace by name in one statement, so two instances importing the same config at
   * the same moment both succeed and leave one row. A replaced row's revision moves on.
   */
  async upsertByName(row: NewChannelRow): Promise<void> {
    const { created_time: _created, revision: _revision, ...rest } = row;
    await this.d.db
      .insertInto('channels')
      .values(row)
      .onConflict((oc) =>
        oc.column('name').doUpdateSet((eb) => ({ ...rest, revision: eb('channels.revision', '+', 1) })),
      )
      .execute();
  }

  /**
   * Writes `patch` only over the row at `revision` (the one the patch was computed from), moving
   * the revision on: undefined when the row is gone or another write came first. Every write of
   * a channel row moves its revision on (this, upsertByName, adoptUndeclared), so none is undone.
   */
  update(
    id: number,
    revision: number,
    patch: Omit<Updateable<ChannelsTable>, 'revision'>,
  ): Promise<ChannelRow | undefined> {
    return this.d.db
      .updateTable('channels')
      .set((eb) => ({ ...patch, revision: eb('revision', '+', 1) }))
      .where('id', '=', id)
      .where('revision', '=', revision)
      .returningAll()
      .executeTakeFirst();
  }

  /**
   * Deletes the channels the config file or environment declared (source `config` or `env`)
   * whose name is not in `declared`, in one statement: two instances doing it at once both
   * succeed. Their stored listings go with them (see delete()). Returns what was deleted.
   */
  deleteUndeclared(declared: string[]): Promise<Array<{ id: number; name: string }>> {
    let q = this.d.db.deleteFrom('channels').where('source', 'in', DECLARED_SOURCES);
    if (declared.length > 0) q = q.where('name', 'not in', declared);
    return q.returning(['id', 'name']).execute();
  }

  /**
   * Hands undeclared `config`/`env` channels to the console (source `api`), at `updatedTime`
   * (Unix seconds) like any other write of a row; returns them.
   */
  adoptUndeclared(declared: string[], updatedTime: number): Promise<Array<{ id: number; name: string }>> {
    let q = this.d.db
      .updateTable('channels')
      .set((eb) => ({ source: 'api', revision: eb('revision', '+', 1), updated_time: updatedTime }))
      .where('source', 'in', DECLARED_SOURCES);
    if (declared.length > 0) q = q.where('name', 'not in', declared);
    return q.returning(['id', 'name']).execute();
  }

  /**
   * Deletes the channel; its stored listing goes in the same statement, by the database's own
   * trigger (migration 0009), as with any delete of a channel row, so none is left behind by a
   * failure midway. On PostgreSQL the delete's row lock orders it with a listing write under way
   * (setDiscovered): the trigger's delete sees what that write stored.
   */
  async delete(id: number): Promise<boolean> {
    const r = await this.d.db.deleteFrom('channels').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /**
   * Stores the outcome of the channel's last model listing over the one before; false (nothing
   * written) when the channel is gone. Not a change of the channel: its revision and
   * `updated_time` stay, so no PUT made from what an admin read is refused for it, and the
   * channel's own fields are not written (a change under way keeps them).
   */
  async setListing(id: number, outcome: ListingColumns): Promise<boolean> {
    const r = await this.d.db.updateTable('channels').set(outcome).where('id', '=', id).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /**
   * Registry version: a token rewritten on every channel or model change, in the kv table.
   * Other instances poll this one row to know when to reload (cheaper than comparing tables,
   * and it catches two changes within the same second).
   */
  async version(): Promise<string> {
    const r = await this.d.db
      .selectFrom('kv')
      .select('value')
      .where('key', '=', VERSION_KEY)
      .executeTakeFirst();
    return r?.value ?? '';
  }

  async setVersion(token: string): Promise<void> {
    await this.setKv(VERSION_KEY, token);
  }

  /** Whether this database already had its undeclared imports handed over (see adoptUndeclared). */
  async declarationsOwned(): Promise<boolean> {
    const r = await this.d.db.selectFrom('kv').select('key').where('key', '=', OWNED_KEY).executeTakeFirst();
    return r !== undefined;
  }

  async setDeclarationsOwned(): Promise<void> {
    await this.setKv(OWNED_KEY, '1');
  }

  /** Model listings found by discovery, by channel id (JSON text as stored). */
  async discovered(): Promise<Map<number, string>> {
    const rows = await this.d.db
      .selectFrom('kv')
      .selectAll()
      .where('key', 'like', `${DISCOVERED_PREFIX}%`)
      .execute();
    return new Map(rows.map((r) => [Number(r.key.slice(DISCOVERED_PREFIX.length)), r.value]));
  }

  /** One channel's stored listing (JSON text), if any. */
  async discoveredFor(channelId: number): Promise<string | undefined> {
    const r = await this.d.db
      .selectFrom('kv')
      .select('value')
      .where('key', '=', `${DISCOVERED_PREFIX}${channelId}`)
      .executeTakeFirst();
    return r?.value;
  }

  /**
   * Claims a periodic discovery round for the caller, of all instances on this database: true
   * when the round is due at `nowMs` (Unix ms) and this call moved the due time to `nowMs +
   * roundMs` first (compare-and-swap on the stored due time, so two instances due at once get
   * one true). A due time more than `roundMs` ahead was set by a clock ahead of this one, and is
   * not believed.
   */
  async claimDiscoveryRound(nowMs: number, roundMs: number): Promise<boolean> {
    const next = String(nowMs + roundMs);
    const row = await this.d.db
      .selectFrom('kv')
      .select('value')
      .where('key', '=', DISCOVERY_DUE_KEY)
      .executeTakeFirst();
    if (!row) {
      const r = await this.d.db
        .insertInto('kv')
        .values({ key: DISCOVERY_DUE_KEY, value: next })
        .onConflict((oc) => oc.column('key').doNothing())
        .executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
    }
    const due = Number(row.value);
    if (due > nowMs && due <= nowMs + roundMs) return false;
    const r = await this.d.db
      .updateTable('kv')
      .set({ value: next })
      .where('key', '=', DISCOVERY_DUE_KEY)
      .where('value', '=', row.value)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /**
   * Stores a channel's listing only while the channel exists, in one statement: false (nothing
   * written) when it was deleted, so a listing that ends after a delete leaves no row behind.
   * SQLite runs the statement alone. On PostgreSQL the check locks the channel's row (FOR SHARE):
   * a delete not yet committed is waited for and then seen, and a delete coming after waits for
   * this write, and the delete's trigger then removes it (delete()).
   */
  async setDiscovered(channelId: number, json: string): Promise<boolean> {
    const key = `${DISCOVERED_PREFIX}${channelId}`;
    let channel = this.d.db.selectFrom('channels').select('id').where('id', '=', channelId);
    if (this.d.dialect === 'postgres') channel = channel.forShare();
    const r = await this.d.db
      .insertInto('kv')
      .columns(['key', 'value'])
      .expression(
        this.d.db
          .selectNoFrom([
            sql<string>`cast(${key} as text)`.as('key'),
            sql<string>`cast(${json} as text)`.as('value'),
          ])
          .where(({ exists }) => exists(channel)),
      )
      .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ value: eb.ref('excluded.value') })))
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  private async setKv(key: string, value: string): Promise<void> {
    await this.d.db
      .insertInto('kv')
      .values({ key, value })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
      .execute();
  }
}

const VERSION_KEY = 'registry:version';
const OWNED_KEY = 'channels:declarations-owned';
const DECLARED_SOURCES = ['config', 'env'];
const DISCOVERED_PREFIX = 'channel-models:';
const DISCOVERY_DUE_KEY = 'discovery:due';
