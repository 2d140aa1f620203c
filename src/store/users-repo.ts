import {
  type CompiledQuery,
  type ExpressionBuilder,
  type Insertable,
  type Kysely,
  type Selectable,
  sql,
  type Updateable,
} from 'kysely';
import type { Database } from './database.js';
import { emailKey } from './email-key.js';
import { writeWithFollowUps } from './one-transaction.js';
import type { DB, UsersTable } from './schema.js';

export type UserRow = Selectable<UsersTable>;

/** A user write that ends the user's sessions with it, all but `except` (a session id's hash). */
export interface EndSessions {
  except?: string;
}

export class UsersRepo {
  constructor(private readonly d: Database) {}

  byId(id: number): Promise<UserRow | undefined> {
    return this.d.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The quota columns of these users (a key list's owners); deleted ones are left out. */
  spendOf(ids: number[]): Promise<Array<Pick<UserRow, 'id' | 'quota_limit_micros' | 'quota_used_micros'>>> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.d.db
      .selectFrom('users')
      .select(['id', 'quota_limit_micros', 'quota_used_micros'])
      .where('id', 'in', ids)
      .execute();
  }

  /**
   * The user a typed name means (sign-in, the CLI's `-u`): the one spelled exactly so, else the
   * only one whose name differs only in case (`Alice` is `alice`). Usernames that already differed
   * only in case before they were made unique (migration 0005) are each found by their exact
   * spelling only: another one would be a guess among them.
   */
  async byUsername(username: string): Promise<UserRow | undefined> {
    const rows = await this.sameIgnoringCase(username).selectAll().orderBy('id').execute();
    return rows.find((r) => r.username === username) ?? (rows.length === 1 ? rows[0] : undefined);
  }

  /** The oldest user other than `exceptId` whose username equals `username` ignoring case. */
  caseTwin(username: string, exceptId?: number): Promise<UserRow | undefined> {
    return this.sameIgnoringCase(username)
      .selectAll()
      .$if(exceptId !== undefined, (q) => q.where('id', '<>', exceptId!))
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
  }

  /**
   * The usernames that differ only in case from another user's, grouped, oldest first: those
   * already in the database when they were made unique ignoring case (migration 0005), until an
   * admin renames or deletes all but one of each.
   */
  async caseDuplicates(): Promise<UserRow[][]> {
    const rows = await this.d.db
      .selectFrom('users')
      .selectAll()
      .where(
        sql`lower(username)`,
        'in',
        this.d.db
          .selectFrom('users')
          .select(sql<string>`lower(username)`.as('k'))
          .where('case_duplicate', '<>', 0),
      )
      .orderBy(sql`lower(username)`)
      .orderBy('id')
      .execute();
    const groups = new Map<string, UserRow[]>();
    for (const r of rows) {
      const k = usernameKey(r.username);
      groups.set(k, [...(groups.get(k) ?? []), r]);
    }
    return [...groups.values()];
  }

  /**
   * The oldest user other than `exceptId` whose email is `email` ignoring case (email-key.ts);
   * none for no email.
   */
  emailTwin(email: string, exceptId?: number): Promise<UserRow | undefined> {
    const key = emailKey(email);
    if (key === null) return Promise.resolve(undefined);
    return this.d.db
      .selectFrom('users')
      .selectAll()
      .where('email_key', '=', key)
      .$if(exceptId !== undefined, (q) => q.where('id', '<>', exceptId!))
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
  }

  /**
   * The users whose email another user already had (ignoring case) when emails were made unique
   * (migration 0006), grouped by address, oldest first, until an admin changes or clears all but
   * one of each.
   */
  async emailDuplicates(): Promise<UserRow[][]> {
    const rows = await this.d.db
      .selectFrom('users')
      .selectAll()
      .where(
        'email_key',
        'in',
        this.d.db.selectFrom('users').select('email_key').where('email_duplicate', '<>', 0),
      )
      .orderBy('email_key')
      .orderBy('id')
      .execute();
    const groups = new Map<string, UserRow[]>();
    for (const r of rows) groups.set(r.email_key!, [...(groups.get(r.email_key!) ?? []), r]);
    return [...groups.values()];
  }

  /** The index `users_username_ci` serves this (`lower(username)` is its first column). */
  private sameIgnoringCase(username: string) {
    return this.d.db.selectFrom('users').where(sql`lower(username)`, '=', usernameKey(username));
  }

  /** A new user; its email's key is written with it (`email_key`, migration 0006). */
  async insert(row: Insertable<UsersTable>): Promise<UserRow> {
    const key = emailKey(row.email ?? '');
    // No key, no column: NULL is its default (and a database before 0006 has no such column).
    const values = key === null ? row : { ...row, email_key: key };
    return this.d.db.insertInto('users').values(values).returningAll().executeTakeFirstOrThrow();
  }

  /**
   * Sets `patch` on user `id`. With `below`, only while the user's role is below it (an admin's
   * write checks the rank in the same statement, so a promotion since the admin read the user is
   * not overwritten): `'outranked'` when the user is there at that rank or above.
   */
  async update(
    id: number,
    patch: Updateable<UsersTable>,
    below?: number,
    endSessions?: EndSessions,
  ): Promise<UserRow | undefined | 'outranked'> {
    const q = this.d.db
      .updateTable('users')
      .set(bound(patch))
      .where('id', '=', id)
      .$if(below !== undefined, (q) => q.where('role', '<', below!))
      .returningAll()
      .compile();
    const row = await this.writeUser(this.d.db, q, id, endSessions);
    if (row || below === undefined) return row;
    return (await this.byId(id)) ? 'outranked' : undefined;
  }

  /**
   * Replaces user `id`'s password hash with `to` only while it is still `from` (compare-and-swap in
   * one statement, the same on both databases): a sign-in's upgrade of the hash it checked cannot
   * overwrite a password changed since. Whether it was written.
   */
  async replacePasswordHash(id: number, from: string, to: string): Promise<boolean> {
    const r = await this.d.db
      .updateTable('users')
      .set({ password_hash: to })
      .where('id', '=', id)
      .where('password_hash', '=', from)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async delete(id: number): Promise<boolean> {
    const r = await this.d.db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /**
   * `update`, unless the row is an enabled root and no other enabled root would be left:
   * `'last-root'` then. The check and the write are one statement, and on PostgreSQL the enabled
   * roots are locked first in the same transaction, so two roots disabling each other at the same
   * moment cannot both pass (each statement re-reads after the other's commit). SQLite runs one
   * statement at a time on one connection, which makes the statement alone enough there.
   */
  async updateKeepingARoot(
    id: number,
    patch: Updateable<UsersTable>,
    below?: number,
    endSessions?: EndSessions,
  ): Promise<UserRow | undefined | 'last-root' | 'outranked'> {
    const row = await this.keepingARoot(id, (db) => {
      const q = db
        .updateTable('users')
        .set(bound(patch))
        .where('id', '=', id)
        .$if(below !== undefined, (q) => q.where('role', '<', below!))
        .where((eb) => anotherRootOrNotOne(eb, id))
        .returningAll()
        .compile();
      return this.writeUser(db, q, id, endSessions);
    });
    return row ?? this.whyNot(id, below);
  }

  /**
   * Runs the user write `q` and, when it matched and `endSessions` is given, deletes the user's
   * sessions (but `endSessions.except`) in the same transaction: a new password or a disable
   * and the end of the sessions made before it are all or none. The sessions go after the user
   * row (its lock taken): a sign-in under way reads the row after writing its session
   * (`byIdAfterSignIn`), so either its session is there to be deleted or it sees the change.
   * `db` is a transaction already (keepingARoot's on PostgreSQL) or the database.
   */
  private async writeUser(
    db: Kysely<DB>,
    q: CompiledQuery<UserRow>,
    id: number,
    endSessions?: EndSessions,
  ): Promise<UserRow | undefined> {
    if (!endSessions) return (await db.executeQuery(q)).rows[0];
    const del = db
      .deleteFrom('sessions')
      .where('user_id', '=', id)
      .$if(endSessions.except !== undefined, (d) => d.where('id', '<>', endSessions.except!))
      .compile();
    if (db === this.d.db) return writeWithFollowUps(this.d, q, [del]);
    const row = (await db.executeQuery(q)).rows[0];
    if (row) await db.executeQuery(del);
    return row;
  }

  /**
   * `byId` for a sign-in that just wrote its session: on PostgreSQL it waits for a change of the
   * user being committed (the row's lock), so a new password or a disable that deletes sessions
   * in its transaction either deleted this one or is seen here.
   */
  byIdAfterSignIn(id: number): Promise<UserRow | undefined> {
    const q = this.d.db.selectFrom('users').selectAll().where('id', '=', id);
    return (this.d.dialect === 'postgres' ? q.forShare() : q).executeTakeFirst();
  }

  /** `delete`, with the same guards as `updateKeepingARoot`. */
  async deleteKeepingARoot(id: number, below?: number): Promise<boolean | 'last-root' | 'outranked'> {
    const r = await this.keepingARoot(
      id,
      (db) =>
        db
          .deleteFrom('users')
          .where('id', '=', id)
          .$if(below !== undefined, (q) => q.where('role', '<', below!))
          .where((eb) => anotherRootOrNotOne(eb, id))
          .executeTakeFirst(),
      true,
    );
    if (Number(r.numDeletedRows) > 0) return true;
    return (await this.whyNot(id, below)) ?? false;
  }

  /** Why a guarded write of user `id` matched no row: gone, outranked, or the last root. */
  private async whyNot(id: number, below?: number): Promise<undefined | 'last-root' | 'outranked'> {
    const row = await this.byId(id);
    if (!row) return undefined;
    return below !== undefined && row.role >= below ? 'outranked' : 'last-root';
  }

  /**
   * Runs `write` of user `id` after locking, on PostgreSQL, the enabled roots and the user itself,
   * in id order, in one statement; for a delete (`keysFirst`) the user's API keys before them, in
   * id order. That is the order every writer of these rows locks them in (docs/scaling.md, "Lock
   * order on PostgreSQL"): API keys before users, each table in id order. A delete's cascade
   * locked the keys after the user's row, while a settlement batch, a reservation or a hand-back
   * locks a key before its owner: the two met in a deadlock (SQLSTATE 40P01) that failed one of
   * them. So did a batch that held a member and waited for a root with a higher id while a delete
   * or disable held the roots and waited for the member.
   */
  private keepingARoot<T>(id: number, write: (db: Kysely<DB>) => Promise<T>, keysFirst = false): Promise<T> {
    if (this.d.dialect !== 'postgres') return write(this.d.db);
    return this.d.db.transaction().execute(async (trx) => {
      if (keysFirst)
        await trx
          .selectFrom('api_keys')
          .select('id')
          .where('user_id', '=', id)
          .orderBy('id')
          .forUpdate()
          .execute();
      await trx
        .selectFrom('users')
        .select('id')
        .where((eb) => eb.or([eb.and([eb('role', '>=', 100), eb('status', '=', 1)]), eb('id', '=', id)]))
        .orderBy('id')
        .forUpdate()
        .execute();
      return write(trx);
    });
  }

  async list(offset: number, limit: number, keyword?: string): Promise<{ rows: UserRow[]; total: number }> {
    let q = this.d.db.selectFrom('users');
    // A literal substring, whatever case: `_` and `%` are username characters here, not
    // wildcards (escaped, not dropped), and LIKE ignores ASCII case on SQLite only, so both
    // sides are lower-cased (usernames are ASCII).
    if (keyword) {
      const pattern = `%${keyword.toLowerCase().replace(/[%_\\]/g, '\\$&')}%`;
      q = q.where(sql<boolean>`lower(username) like ${pattern} escape '\\'`);
    }
    const [rows, total] = await Promise.all([
      q.selectAll().orderBy('id').offset(offset).limit(limit).execute(),
      q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(total.n) };
  }

  async count(): Promise<number> {
    const r = await this.d.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }
}

/**
 * Usernames are ASCII (`[A-Za-z0-9_.@-]`, src/access/users.ts): folding only A-Z is what `lower`
 * does to them on both databases, and a typed non-ASCII letter (the Kelvin sign, which JavaScript
 * lower-cases to `k`) matches no one.
 */
const usernameKey = (username: string): string => username.replace(/[A-Z]+/g, (m) => m.toLowerCase());

/**
 * A renamed user is bound by the unique index like any new one (`case_duplicate` 0, migration
 * 0005): renaming one of the names that already differed only in case resolves it, and renaming
 * it to another spelling of a taken name is refused. So is a new email (its `email_key`, and
 * `email_duplicate` 0, migration 0006).
 */
function bound(patch: Updateable<UsersTable>): Updateable<UsersTable> {
  if (patch.username === undefined && patch.email === undefined) return patch;
  const out = { ...patch };
  if (patch.username !== undefined) out.case_duplicate = 0;
  if (patch.email !== undefined) {
    out.email_key = emailKey(patch.email as string);
    out.email_duplicate = 0;
  }
  return out;
}

/** The row is not an enabled root, or another enabled root exists. */
function anotherRootOrNotOne(eb: ExpressionBuilder<DB, 'users'>, id: number) {
  return eb.or([
    eb('users.role', '<', 100),
    eb('users.status', '<>', 1),
    eb.exists(
      eb
        .selectFrom('users as other')
        .select('other.id')
        .where('other.role', '>=', 100)
        .where('other.status', '=', 1)
        .where('other.id', '<>', id),
    ),
  ]);
}
