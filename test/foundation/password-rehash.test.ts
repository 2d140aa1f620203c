import { randomBytes, scryptSync } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { needsRehash, verifyPassword } from '../../src/access/password.js';
import { Role } from '../../src/access/roles.js';
import { UserService } from '../../src/access/users.js';
import { CredentialsRepo } from '../../src/store/credentials-repo.js';
import { type Database, openDatabase } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { type UserRow, UsersRepo } from '../../src/store/users-repo.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';

/**
 * A sign-in upgrades a hash made with weaker parameters while the password is at hand. Between
 * reading the user and that write lies the ~90 ms of checking the password; a password change in
 * that gap must stay: the upgrade is written only over the hash that was checked. Each race here
 * is made deterministic by running the other write inside the sign-in's read of the user, after
 * the row was read (on SQLite, or on PostgreSQL with TEST_DATABASE_URL).
 */

/** A hash of `password` as an older release made it: scrypt at N = 1024, below today's cost. */
function weakHash(password: string): string {
  const salt = randomBytes(16);
  const hash = scryptSync(password, salt, 32, { N: 1024, r: 8, p: 1 });
  return `scrypt$1024$8$1$${salt.toString('base64')}$${hash.toString('base64')}`;
}

let t: TestDatabase;
let db: Database;
let users: RacingUsers;
let service: UserService;
let root: UserRow;
let fay: UserRow;

/** Runs `meanwhile` once, right after the next sign-in read its user. */
class RacingUsers extends UsersRepo {
  meanwhile: (() => Promise<unknown>) | undefined;
  override async byUsername(username: string): Promise<UserRow | undefined> {
    const row = await super.byUsername(username);
    const run = this.meanwhile;
    this.meanwhile = undefined;
    await run?.();
    return row;
  }
}

beforeEach(async () => {
  t = await createTestDatabase();
  db = openDatabase(t.url);
  await migrateToLatest(db);
  users = new RacingUsers(db);
  service = new UserService(users, new CredentialsRepo(db), { sessionTtlHours: 1, cacheMs: 0 });
  await service.bootstrapRoot('root-password-x');
  root = (await users.byUsername('root'))!;
  fay = await service.create(root, { username: 'fay', password: 'old-pass-1', role: Role.user });
});
afterEach(async () => {
  await db?.close();
  await t?.drop();
});

const storedHash = async () => (await users.byId(fay.id))!.password_hash;
const sessionsOfFay = async () =>
  (await db.db.selectFrom('sessions').select('id').where('user_id', '=', fay.id).execute()).length;

describe("a sign-in's password hash upgrade", () => {
  it('upgrades a weak hash when nothing raced it', async () => {
    await users.update(fay.id, { password_hash: weakHash('old-pass-1') });
    await service.login('fay', 'old-pass-1');
    const hash = await storedHash();
    expect(needsRehash(hash)).toBe(false);
    expect(await verifyPassword('old-pass-1', hash)).toBe(true);
  });

  it('does not put back the old password when the password was changed meanwhile', async () => {
    await users.update(fay.id, { password_hash: weakHash('old-pass-1') });
    users.meanwhile = () => service.update(root, fay.id, { password: 'new-pass-1' });
    // The old password was right when it was checked, and is not by the time the session would
    // be written: no session outlives the change.
    await expect(service.login('fay', 'old-pass-1')).rejects.toMatchObject({ status: 401 });
    expect(await sessionsOfFay()).toBe(0);
    const hash = await storedHash();
    expect(await verifyPassword('new-pass-1', hash)).toBe(true);
    expect(await verifyPassword('old-pass-1', hash)).toBe(false);
    await expect(service.login('fay', 'old-pass-1')).rejects.toMatchObject({ status: 401 });
    await service.login('fay', 'new-pass-1');
  });

  it('two sign-ins upgrading the same hash at once both succeed', async () => {
    await users.update(fay.id, { password_hash: weakHash('old-pass-1') });
    let inner: Awaited<ReturnType<UserService['login']>> | undefined;
    users.meanwhile = async () => {
      inner = await service.login('fay', 'old-pass-1');
    };
    const outer = await service.login('fay', 'old-pass-1');
    expect(inner?.user.id).toBe(fay.id);
    expect(outer.user.id).toBe(fay.id);
    // The first upgrade stands; the second found another hash than the one it checked.
    const hash = await storedHash();
    expect(needsRehash(hash)).toBe(false);
    expect(await verifyPassword('old-pass-1', hash)).toBe(true);
    expect(await sessionsOfFay()).toBe(2);
  });

  it('a sign-in racing a password change gets no session, with no upgrade due either', async () => {
    users.meanwhile = () => service.update(root, fay.id, { password: 'new-pass-1' });
    await expect(service.login('fay', 'old-pass-1')).rejects.toMatchObject({ status: 401 });
    expect(await sessionsOfFay()).toBe(0);
    expect(await verifyPassword('new-pass-1', await storedHash())).toBe(true);
  });
});
