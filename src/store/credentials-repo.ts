import type { Selectable } from 'kysely';
import type { Database } from './database.js';
import { touchLastUsed } from './last-used.js';
import type { AccessTokensTable } from './schema.js';

export type AccessTokenRow = Selectable<AccessTokensTable>;

/** Sessions and personal access tokens: both stored only as hashes. */
export class CredentialsRepo {
  constructor(private readonly d: Database) {}

  async createSession(hash: string, userId: number, now: number, expires: number): Promise<void> {
    await this.d.db
      .insertInto('sessions')
      .values({ id: hash, user_id: userId, created_time: now, expires_time: expires })
      .execute();
  }

  sessionUser(hash: string, now: number): Promise<{ user_id: number; expires_time: number } | undefined> {
    return this.d.db
      .selectFrom('sessions')
      .select(['user_id', 'expires_time'])
      .where('id', '=', hash)
      .where('expires_time', '>', now)
      .executeTakeFirst();
  }

  async deleteSession(hash: string): Promise<void> {
    await this.d.db.deleteFrom('sessions').where('id', '=', hash).execute();
  }

  async deleteExpiredSessions(now: number): Promise<void> {
    await this.d.db.deleteFrom('sessions').where('expires_time', '<=', now).execute();
  }

  async createToken(row: {
    user_id: number;
    name: string;
    token_hash: string;
    token_prefix: string;
    created_time: number;
    expires_time: number | null;
  }): Promise<AccessTokenRow> {
    return this.d.db.insertInto('access_tokens').values(row).returningAll().executeTakeFirstOrThrow();
  }

  tokenByHash(hash: string): Promise<AccessTokenRow | undefined> {
    return this.d.db
      .selectFrom('access_tokens')
      .selectAll()
      .where('token_hash', '=', hash)
      .executeTakeFirst();
  }

  listTokens(userId: number): Promise<AccessTokenRow[]> {
    return this.d.db
      .selectFrom('access_tokens')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('id')
      .execute();
  }

  /** Records a use of the token (store/last-used.ts). */
  touchToken(id: number, now: number): Promise<void> {
    return touchLastUsed(this.d.db, 'access_tokens', id, now);
  }

  async deleteToken(userId: number, id: number): Promise<boolean> {
    const r = await this.d.db
      .deleteFrom('access_tokens')
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
