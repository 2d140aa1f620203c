import type { Insertable } from 'kysely';
import { hashPassword } from '../../src/access/password.js';
import { openDatabase } from '../../src/store/database.js';
import { isUniqueViolation } from '../../src/store/db-errors.js';
import type { UsersTable } from '../../src/store/schema.js';
import type { TestGateway } from './gateway.js';
import { migrateBefore } from './migrations.js';

/** A `users` row as the store writes it: an active user (role 1) without email, `more` on top. */
export const userRow = (username: string, more: Partial<Insertable<UsersTable>> = {}) => ({
  username,
  password_hash: 'x',
  display_name: '',
  email: '',
  role: 1,
  status: 1,
  default_model: '',
  quota_limit_micros: null,
  created_time: 1,
  updated_time: 1,
  ...more,
});

/** How a write straight to the store ended: 'written', 'unique violation', or the other error. */
export const writeOutcome = (p: Promise<unknown>) =>
  p.then(
    () => 'written',
    (err) => (isUniqueViolation(err) ? 'unique violation' : err),
  );

/**
 * Makes the database at `url` one a release before migration `first` left: migrated that far,
 * with `users` ([username, role, password, email]) inserted as plain rows (no column a later
 * migration added), each signing in with its password. Returns their ids by name.
 */
export async function legacyUsersDatabase(
  url: string,
  first: string,
  users: ReadonlyArray<readonly [username: string, role: number, password: string, email?: string]>,
): Promise<Record<string, number>> {
  const d = openDatabase(url);
  const ids: Record<string, number> = {};
  try {
    await migrateBefore(d, first);
    for (const [username, role, password, email = ''] of users) {
      const row = await d.db
        .insertInto('users')
        .values(
          userRow(username, {
            password_hash: await hashPassword(password),
            display_name: username,
            email,
            role,
          }),
        )
        .returning('id')
        .executeTakeFirstOrThrow();
      ids[username] = row.id;
    }
  } finally {
    await d.close();
  }
  return ids;
}

/**
 * The three writes of user `fields`: a create by `admin`, an admin's update of user `id`, and
 * that user's own update (session `own`), for checks that each of them refuses the same.
 */
export const userFieldWrites = (
  gw: TestGateway,
  admin: string,
  id: number,
  own: string,
  fields: Record<string, unknown>,
) =>
  Promise.all([
    gw.call('POST', '/api/user', {
      cookie: admin,
      body: { username: 'nobody', password: 'password-1', ...fields },
    }),
    gw.call('PUT', '/api/user', { cookie: admin, body: { id, ...fields } }),
    gw.call('PUT', '/api/user/self', { cookie: own, body: fields }),
  ]);
