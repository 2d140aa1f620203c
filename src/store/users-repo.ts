import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Database } from './database.js';
import type { UsersTable } from './schema.js';

export type UserRow = Selectable<UsersTable>;

export class UsersRepo {
  constructor(private readonly d: Database) {}

  byId(id: number): Promise<UserRow | undefined> {
    return this.d.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  byUsername(username: string): Promise<UserRow | undefined> {
    return this.d.db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
  }

  async insert(row: Insertable<UsersTable>): Promise<UserRow> {
    const r = await this.d.db.insertInto('users').values(row).returningAll().executeTakeFirstOrThrow();
    return r;
  }

  async update(id: number, patch: Updateable<UsersTable>): Promise<UserRow | undefined> {
    return this.d.db.updateTable('users').set(patch).where('id', '=', id).returningAll().executeTakeFirst();
  }

  async delete(id: number): Promise<boolean> {
    const r = await this.d.db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async list(offset: number, limit: number, keyword?: string): Promise<{ rows: UserRow[]; total: number }> {
    let q = this.d.db.selectFrom('users');
    if (keyword) q = q.where('username', 'like', `%${keyword.replace(/[%_\\]/g, '')}%`);
    const [rows, total] = await Promise.all([
      q.selectAll().orderBy('id').offset(offset).limit(limit).execute(),
      q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(total.n) };
  }

  async countRoots(): Promise<number> {
    const r = await this.d.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('role', '>=', 100)
      .where('status', '=', 1)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async count(): Promise<number> {
    const r = await this.d.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }
}
