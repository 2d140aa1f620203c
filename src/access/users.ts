import { badRequest, conflict, forbidden, notFound } from '../gateway/errors.js';
import type { CredentialsRepo } from '../store/credentials-repo.js';
import { isUniqueViolation } from '../store/db-errors.js';
import type { EndSessions, UserRow, UsersRepo } from '../store/users-repo.js';
import { toMicros } from './limit-values.js';
import { hashPassword, verifyPassword } from './password.js';
import { outranks, Role, rankToStayBelow, Status } from './roles.js';
import { hashSecret, nowSeconds, randomToken } from './secrets.js';
import { type DuplicatesWarning, UniqueFields, type UniqueWrite } from './unique-fields.js';
import {
  normalizeDefaultModel,
  normalizeDisplayName,
  normalizeEmail,
  validatePassword,
  validateUsername,
} from './user-fields.js';
import { UserSessions } from './user-sessions.js';

export interface UserPatch {
  username?: string;
  password?: string;
  display_name?: string;
  email?: string;
  role?: number;
  status?: number;
  default_model?: string;
  quota_limit?: number | null;
  keys_admin_managed?: boolean;
}

const VALID_ROLES = new Set<number>([Role.user, Role.admin, Role.root]);

/** Users and roles; signing in, sessions and tokens come from UserSessions (user-sessions.ts). */
export class UserService extends UserSessions {
  /** Usernames and emails: no other user's (unique-fields.ts). */
  private readonly unique: UniqueFields;

  constructor(users: UsersRepo, creds: CredentialsRepo, opts: { sessionTtlHours: number; cacheMs: number }) {
    super(users, creds, opts);
    this.unique = new UniqueFields(users);
  }

  /** First start with an empty database: create `root`. Returns the password when generated. */
  async bootstrapRoot(password: string): Promise<{ created: boolean; generatedPassword?: string }> {
    if ((await this.users.count()) > 0) return { created: false };
    const pw = password || randomToken(20);
    const now = nowSeconds();
    try {
      await this.users.insert({
        username: 'root',
        password_hash: await hashPassword(pw),
        display_name: 'Root',
        email: '',
        role: Role.root,
        status: Status.enabled,
        default_model: '',
        quota_limit_micros: null,
        created_time: now,
        updated_time: now,
      });
    } catch (err) {
      // Another instance bootstrapped at the same moment. Anything else (the database) stops the
      // start: a gateway with no user at all could not be managed.
      if (isUniqueViolation(err)) return { created: false };
      throw err;
    }
    return password ? { created: true } : { created: true, generatedPassword: pw };
  }

  /**
   * What a start (and `modelgate migrate`) warns about: users made before usernames, or emails,
   * were unique ignoring case that share one (unique-fields.ts). Empty when there are none.
   */
  duplicatesWarnings(): Promise<DuplicatesWarning[]> {
    return this.unique.duplicatesWarnings();
  }

  get(id: number): Promise<UserRow | undefined> {
    return this.users.byId(id);
  }

  list(offset: number, limit: number, keyword?: string) {
    return this.users.list(offset, limit, keyword);
  }

  async create(actor: UserRow, input: UserPatch & { username: string; password: string }): Promise<UserRow> {
    const role = input.role ?? Role.user;
    this.checkRoleChange(actor, role);
    validateUsername(input.username);
    validatePassword(input.password);
    const email = input.email === undefined ? '' : normalizeEmail(input.email);
    const unique: UniqueWrite = { username: input.username, email };
    await this.unique.refuseTaken(unique, undefined, true);
    const now = nowSeconds();
    try {
      return await this.users.insert({
        username: input.username,
        password_hash: await hashPassword(input.password),
        display_name:
          input.display_name === undefined ? input.username : normalizeDisplayName(input.display_name),
        email,
        role,
        status: input.status ?? Status.enabled,
        default_model: input.default_model === undefined ? '' : normalizeDefaultModel(input.default_model),
        quota_limit_micros: toMicros(input.quota_limit),
        keys_admin_managed: input.keys_admin_managed ? 1 : 0,
        created_time: now,
        updated_time: now,
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw await this.unique.conflict(unique, undefined, true);
      throw err;
    }
  }

  /**
   * Admin update of a user. `session` is the caller's own session (kept when the caller changes
   * their own password; every other session of the target ends with a new password).
   */
  async update(actor: UserRow, id: number, patch: UserPatch, session?: string): Promise<UserRow> {
    const target = await this.users.byId(id);
    if (!target) throw notFound(`user ${id} not found`);
    if (target.id !== actor.id && !outranks(actor, target)) throw forbidden(NOT_BELOW_YOURS.change);
    // Below root, your own record through the admin route follows the self-service rules: your
    // role, status and quota are set by someone above you, and a new password needs the current
    // one (PUT /api/user/self), so a stolen admin session can neither lift its owner's limits
    // nor take the account.
    if (target.id === actor.id && actor.role < Role.root) {
      const changed = {
        role: patch.role !== undefined && patch.role !== target.role,
        status: patch.status !== undefined && patch.status !== target.status,
        quota_limit:
          patch.quota_limit !== undefined && toMicros(patch.quota_limit) !== target.quota_limit_micros,
        keys_admin_managed:
          patch.keys_admin_managed !== undefined &&
          patch.keys_admin_managed !== (target.keys_admin_managed === 1),
      };
      for (const [field, yes] of Object.entries(changed))
        if (yes) throw forbidden(`${field}: your own is changed by a user above you`, field);
      if (patch.password !== undefined)
        throw forbidden('password: change your own with PUT /api/user/self and current_password', 'password');
    }
    // A role sent back as it is (a form's) is no change; any other is checked against the actor.
    if (patch.role !== undefined) this.checkRoleChange(actor, patch.role, patch.role !== target.role);
    // Whether the target is a root, and below an admin actor's rank, is decided again by the
    // write itself (usersRepo), so a concurrent change between this read and the write can
    // neither leave no enabled root nor let an admin overwrite a user just promoted to admin.
    const losesRoot =
      (patch.role !== undefined && patch.role < Role.root) ||
      (patch.status !== undefined && patch.status !== Status.enabled);
    return this.applyPatch(target, patch, {
      losesRoot,
      below: target.id !== actor.id ? rankToStayBelow(actor) : undefined,
      keepSession: target.id === actor.id ? session : undefined,
      admin: true,
    });
  }

  /**
   * A user's own settings. The role and status are not self-service. A new password ends the
   * user's other sessions (`session`, the one making the change, stays).
   */
  async updateSelf(
    user: UserRow,
    patch: UserPatch & { current_password?: string },
    session?: string,
  ): Promise<UserRow> {
    if (patch.password !== undefined) {
      if (!patch.current_password)
        throw badRequest('current_password: required to change the password', 'current_password');
      if (!(await verifyPassword(patch.current_password, user.password_hash)))
        throw badRequest('current_password: does not match', 'current_password');
    }
    const { role: _r, status: _s, quota_limit: _q, username: _u, keys_admin_managed: _k, ...own } = patch;
    return this.applyPatch(user, own, { keepSession: session });
  }

  /**
   * Writes `patch` to `target`. `losesRoot`: the write may leave no enabled root (guarded by
   * the write); `below`: the write holds only while the target's role is below it (an admin's);
   * `keepSession`: the session that stays when the password changes; `admin`: an admin's write,
   * whose 409 for a taken email names the user holding it (a user's own is not told whose).
   */
  private async applyPatch(
    target: UserRow,
    patch: UserPatch,
    opts: { losesRoot?: boolean; below?: number; keepSession?: string; admin?: boolean },
  ): Promise<UserRow> {
    const { losesRoot = false, below, keepSession, admin = false } = opts;
    const set: Record<string, unknown> = { updated_time: nowSeconds() };
    // Only what changes is checked and written: an unchanged email of a user made before emails
    // were unique (migration 0006) is theirs to keep, and a form sends every field back.
    const unique: UniqueWrite = {};
    if (patch.username !== undefined && patch.username !== target.username) {
      validateUsername(patch.username);
      unique.username = set.username = patch.username;
    }
    // An address stored before emails were checked stays until it is changed: sent back as it is,
    // it is no change.
    if (patch.email !== undefined && patch.email !== target.email) {
      const email = normalizeEmail(patch.email);
      if (email !== target.email) unique.email = set.email = email;
    }
    await this.unique.refuseTaken(unique, target.id, admin);
    if (patch.password !== undefined) {
      validatePassword(patch.password);
      set.password_hash = await hashPassword(patch.password);
    }
    // A display name stored before names were checked stays until it is changed, as an email.
    if (patch.display_name !== undefined && patch.display_name !== target.display_name)
      set.display_name = normalizeDisplayName(patch.display_name);
    // So does a default model, whose check came later still.
    if (patch.default_model !== undefined && patch.default_model !== target.default_model)
      set.default_model = normalizeDefaultModel(patch.default_model);
    for (const k of ['role', 'status'] as const) if (patch[k] !== undefined) set[k] = patch[k];
    if (patch.quota_limit !== undefined) set.quota_limit_micros = toMicros(patch.quota_limit);
    if (patch.keys_admin_managed !== undefined) set.keys_admin_managed = patch.keys_admin_managed ? 1 : 0;
    // A new password ends every session made with the old one: a stolen cookie stops working
    // when its victim (or an admin) changes the password. Disabling a user ends all of them: a
    // session would otherwise work again when the user is enabled again, which an admin who
    // disabled a suspect account does not expect. Personal access tokens and API keys are
    // credentials of their own, listed and revoked on their own; they are refused while the user
    // is disabled and resume (docs/configuration.md). In the user write's transaction, after the
    // row: a failure between the two left the new password set and a stolen session signed in,
    // and a sign-in under way either sees the change or has its session deleted (login).
    const disables = patch.status !== undefined && patch.status !== Status.enabled;
    const endSessions: EndSessions | undefined = disables
      ? {}
      : set.password_hash !== undefined
        ? { except: keepSession ? hashSecret(keepSession) : undefined }
        : undefined;
    let updated: UserRow | undefined | 'last-root' | 'outranked';
    try {
      updated = losesRoot
        ? await this.users.updateKeepingARoot(target.id, set, below, endSessions)
        : await this.users.update(target.id, set, below, endSessions);
    } catch (err) {
      if (isUniqueViolation(err)) throw await this.unique.conflict(unique, target.id, admin);
      throw err;
    }
    if (updated === 'last-root') throw conflict('cannot demote or disable the last root');
    if (updated === 'outranked') throw forbidden(NOT_BELOW_YOURS.change);
    if (!updated) throw notFound(`user ${target.id} not found`);
    // Sessions and tokens resolve through the user's status, so a disabled user is locked out
    // as soon as the cache forgets them: now on this instance, within its TTL elsewhere.
    this.credCache.clear();
    return updated;
  }

  async delete(actor: UserRow, id: number): Promise<void> {
    const target = await this.users.byId(id);
    if (!target) throw notFound(`user ${id} not found`);
    if (target.id === actor.id) throw forbidden('you cannot delete your own account');
    if (!outranks(actor, target)) throw forbidden(NOT_BELOW_YOURS.delete);
    const deleted = await this.users.deleteKeepingARoot(id, rankToStayBelow(actor));
    if (deleted === 'last-root') throw conflict('cannot delete the last root');
    if (deleted === 'outranked') throw forbidden(NOT_BELOW_YOURS.delete);
    if (!deleted) throw notFound(`user ${id} not found`);
    this.credCache.clear();
  }

  /**
   * A role an actor gives (`grants`: not the one the user has). Below root, only roles below
   * your own: an admin could not change or delete a peer admin they made.
   */
  private checkRoleChange(actor: UserRow, role: number, grants = true): void {
    if (!VALID_ROLES.has(role)) throw badRequest('role: must be 1 (user), 10 (admin) or 100 (root)', 'role');
    if (!grants || actor.role >= Role.root) return;
    if (role >= Role.root) throw forbidden('only root can create or promote a root');
    if (role >= actor.role) throw forbidden('only root can create or promote an admin');
  }
}

const NOT_BELOW_YOURS = {
  change: 'cannot change a user whose role is not below yours',
  delete: 'cannot delete a user whose role is not below yours',
};
