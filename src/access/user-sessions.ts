import { forbidden, type GatewayError, notFound, unauthorized } from '../gateway/errors.js';
import type { CredentialsRepo } from '../store/credentials-repo.js';
import { isForeignKeyViolation } from '../store/db-errors.js';
import { lastUseIsStale } from '../store/last-used.js';
import type { UserRow, UsersRepo } from '../store/users-repo.js';
import { notExpired } from './limit-values.js';
import { hashPassword, needsRehash, verifyPassword } from './password.js';
import { Status } from './roles.js';
import { hashSecret, newAccessToken, newSessionId, nowSeconds } from './secrets.js';
import { TtlCache } from './ttl-cache.js';
import { normalizeCredentialName } from './user-fields.js';

/**
 * Signing in and the credentials that follow: sessions and personal access tokens, with the
 * cache of who they belong to. UserService (users.ts) adds the management of the users.
 */
export class UserSessions {
  /**
   * hash of a session id or access token -> its user, and when the credential ends (Unix
   * seconds, null: never), checked at every hit: an entry made in the second before the end
   * would otherwise sign its user in for up to `cacheMs` past it (API keys alike, api-keys.ts).
   */
  protected readonly credCache: TtlCache<string, Signed>;

  /** When this instance last deleted ended sessions (Unix seconds). */
  private sweptAt = 0;

  constructor(
    protected readonly users: UsersRepo,
    protected readonly creds: CredentialsRepo,
    private readonly opts: { sessionTtlHours: number; cacheMs: number },
  ) {
    this.credCache = new TtlCache(opts.cacheMs);
  }

  async login(
    username: string,
    password: string,
  ): Promise<{ user: UserRow; session: string; maxAge: number }> {
    const user = await this.users.byUsername(username);
    // Verify even for unknown users so timing does not reveal which usernames exist.
    const ok = await verifyPassword(password, user?.password_hash ?? DUMMY_HASH);
    if (!user || !ok) throw unauthorized(WRONG_CREDENTIALS);
    // The right password of a disabled user: known, and not allowed (decisions.md), so a 403.
    if (user.status !== Status.enabled) throw forbidden('user is disabled');
    // Hashes made before the cost was raised are upgraded while the password is at hand, over
    // the hash just checked only: a password changed since stays changed.
    let checked = user.password_hash;
    if (needsRehash(checked)) {
      const upgraded = await hashPassword(password);
      if (await this.users.replacePasswordHash(user.id, checked, upgraded)) checked = upgraded;
    }
    const { secret, hash } = newSessionId();
    const now = nowSeconds();
    const maxAge = this.opts.sessionTtlHours * 3600;
    // A delete of the user since the read leaves nothing to sign in to: a 401, as for an unknown
    // user (the session's foreign key refuses the row on both databases).
    await this.creds.createSession(hash, user.id, now, now + maxAge).catch(ifUserGone(WRONG_CREDENTIALS));
    // A disable or a new password that landed since the user was read (the password check alone
    // takes ~90 ms) deleted their sessions before this one was written. The read after the write
    // catches it: a change that this read does not see yet deletes sessions after it (applyPatch
    // writes the user, then its sessions, in one transaction, and this read waits for one whose
    // user write it follows: byIdAfterSignIn), this one included. Another hash is checked again:
    // it may be another sign-in's upgrade of the same password.
    const refused = await this.refusedSince(await this.users.byIdAfterSignIn(user.id), password, checked);
    if (refused) {
      await this.creds.deleteSession(hash);
      throw refused;
    }
    // Ended sessions are refused by their expiry; their rows go at most once an hour, with a
    // sign-in (every instance sweeps; the delete is idempotent).
    if (now - this.sweptAt >= 3600) {
      this.sweptAt = now;
      await this.creds.deleteExpiredSessions(now);
    }
    return { user, session: secret, maxAge };
  }

  /** Why a sign-in that checked `password` against hash `checked` is refused as the user is now. */
  private async refusedSince(
    now: UserRow | undefined,
    password: string,
    checked: string,
  ): Promise<GatewayError | undefined> {
    if (!now) return unauthorized(WRONG_CREDENTIALS);
    if (now.status !== Status.enabled) return forbidden('user is disabled');
    if (now.password_hash !== checked && !(await verifyPassword(password, now.password_hash)))
      return unauthorized(WRONG_CREDENTIALS);
    return undefined;
  }

  async logout(session: string): Promise<void> {
    const hash = hashSecret(session);
    this.credCache.delete(`s:${hash}`);
    await this.creds.deleteSession(hash);
  }

  /** Drop cached sessions and tokens (another instance changed a user or a credential). */
  invalidate(): void {
    this.credCache.clear();
  }

  /** The enabled user behind a session cookie, or undefined. */
  async bySession(session: string): Promise<UserRow | undefined> {
    const hash = hashSecret(session);
    return this.cached(`s:${hash}`, async () => {
      const s = await this.creds.sessionUser(hash, nowSeconds());
      const user = s && (await this.users.byId(s.user_id));
      return user && { user, expires: s.expires_time };
    });
  }

  /**
   * The user behind a personal access token, or undefined. A disabled one too (the caller refuses
   * it, and says why: the token works again when the user is enabled again).
   */
  async byAccessToken(token: string): Promise<UserRow | undefined> {
    const hash = hashSecret(token);
    return this.cachedAnyStatus(`t:${hash}`, async () => {
      const t = await this.creds.tokenByHash(hash);
      const now = nowSeconds();
      if (!t || (t.expires_time !== null && t.expires_time <= now)) return undefined;
      // A use, recorded to the minute in the background (as API keys' last_used_time).
      if (lastUseIsStale(t.last_used_time, now)) void this.creds.touchToken(t.id, now).catch(() => {});
      const user = await this.users.byId(t.user_id);
      return user && { user, expires: t.expires_time };
    });
  }

  private async cached(key: string, load: () => Promise<Signed | undefined>): Promise<UserRow | undefined> {
    const user = await this.cachedAnyStatus(key, load);
    return user && user.status === Status.enabled ? user : undefined;
  }

  private async cachedAnyStatus(
    key: string,
    load: () => Promise<Signed | undefined>,
  ): Promise<UserRow | undefined> {
    let signed = this.credCache.get(key);
    if (!signed) {
      signed = await load();
      if (signed) this.credCache.set(key, signed);
    }
    if (signed && signed.expires !== null && signed.expires <= nowSeconds()) {
      this.credCache.delete(key);
      return undefined;
    }
    return signed?.user;
  }

  async createToken(user: UserRow, name: string, expiresTime: number | null) {
    notExpired(expiresTime);
    const tokenName = normalizeCredentialName(name);
    const { secret, hash, prefix } = newAccessToken();
    // The user deleted since their session or token was read: signed out, as their next request is.
    const row = await this.creds
      .createToken({
        user_id: user.id,
        name: tokenName,
        token_hash: hash,
        token_prefix: prefix,
        created_time: nowSeconds(),
        expires_time: expiresTime,
      })
      .catch(ifUserGone(SIGNED_OUT));
    return { row, secret };
  }

  listTokens(user: UserRow) {
    return this.creds.listTokens(user.id);
  }

  async deleteToken(user: UserRow, id: number): Promise<void> {
    if (!(await this.creds.deleteToken(user.id, id))) throw notFound(`token ${id} not found`);
    this.credCache.clear();
  }
}

/** A credential's user, and when the credential ends (Unix seconds, null: never). */
interface Signed {
  user: UserRow;
  expires: number | null;
}

/** What a wrong password, an unknown user and a user deleted during the sign-in are told. */
const WRONG_CREDENTIALS = 'invalid username or password';

/**
 * What a request without a session or token that signs someone in is told (http/auth.ts): a
 * deleted user's session and tokens are deleted with them.
 */
export const SIGNED_OUT = 'sign in or send an access token';

/**
 * A `.catch` for a write of a row that belongs to a user: the user's deletion since they were
 * read (the foreign key refused the row) becomes a 401 with `message`; any other error stays.
 */
export const ifUserGone =
  (message: string) =>
  (err: unknown): never => {
    throw isForeignKeyViolation(err) ? unauthorized(message) : err;
  };

// A valid hash of a random password: login of an unknown user costs the same as a wrong password
// (same parameters as new hashes, see password.ts).
const DUMMY_HASH = 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
