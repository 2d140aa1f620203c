import { badRequest, conflict, forbidden, GatewayError, notFound, unauthorized } from '../gateway/errors.js';
import { checkOneLine } from '../gateway/text-characters.js';
import type { ApiKeyRow, ApiKeysRepo, OwnerMark } from '../store/api-keys-repo.js';
import { isForeignKeyViolation } from '../store/db-errors.js';
import { lastUseIsStale } from '../store/last-used.js';
import type { UserRow, UsersRepo } from '../store/users-repo.js';
import {
  checkOwnerChange,
  type HeldInput,
  Hold,
  heldColumns,
  holdAfterAdmin,
  touchesHeld,
} from './key-hold.js';
import { notExpired, toMicros } from './limit-values.js';
import { KeyStatus, Role, Status } from './roles.js';
import { hashSecret, newApiKey, nowSeconds } from './secrets.js';
import { TtlCache } from './ttl-cache.js';
import { normalizeCredentialName } from './user-fields.js';
import { ifUserGone, SIGNED_OUT } from './user-sessions.js';

export interface KeyInput extends HeldInput {
  name?: string;
  user_id?: number;
}

/** What the request path needs about a verified key. */
export interface KeyPrincipal {
  key: ApiKeyRow;
  user: UserRow;
  allowedModels: string[] | null;
}

export interface PublicKey {
  id: number;
  user_id: number;
  name: string;
  key_prefix: string;
  status: number;
  expires_time: number | null;
  quota_limit: number | null;
  quota_used: number;
  allowed_models: string[] | null;
  rpm_limit: number | null;
  tpm_limit: number | null;
  created_time: number;
  updated_time: number;
  /** When the key last authenticated a request (Unix seconds, to the minute), or null: never. */
  last_used_time: number | null;
  /** An admin holds its limits: its owner may tighten them, not loosen them (key-hold.ts). */
  admin_managed: boolean;
  /** An admin disabled it: its owner cannot enable it again. */
  admin_disabled: boolean;
  /**
   * Its owner's quota is used up: every call is refused with a 402 naming the user, whatever
   * `status` says (the key's own status stays 1; docs/quotas.md).
   */
  user_quota_exhausted: boolean;
}

/** The owner's quota columns, which `user_quota_exhausted` is read from. */
export type OwnerSpend = Pick<UserRow, 'quota_limit_micros' | 'quota_used_micros'>;

/** A used-up quota, as a key's status 4 reads it: nothing is left to reserve (docs/quotas.md). */
export function quotaUsedUp(q: OwnerSpend): boolean {
  return q.quota_limit_micros !== null && q.quota_used_micros >= q.quota_limit_micros;
}

/** Status as clients see it: expiry and exhaustion are derived, so they can never go stale. */
export function effectiveStatus(k: ApiKeyRow, now = nowSeconds()): number {
  if (k.status !== KeyStatus.enabled) return k.status;
  if (k.expires_time !== null && k.expires_time <= now) return KeyStatus.expired;
  if (quotaUsedUp(k)) return KeyStatus.exhausted;
  return KeyStatus.enabled;
}

/** `owner`: the key's user (undefined when gone, or not read: then the user's quota is not shown used up). */
export const toPublicKey = (k: ApiKeyRow, owner?: OwnerSpend): PublicKey => ({
  id: k.id,
  user_id: k.user_id,
  name: k.name,
  key_prefix: `${k.key_prefix}…`,
  status: effectiveStatus(k),
  expires_time: k.expires_time,
  quota_limit: k.quota_limit_micros === null ? null : k.quota_limit_micros / 1e6,
  quota_used: k.quota_used_micros / 1e6,
  allowed_models: k.allowed_models ? (JSON.parse(k.allowed_models) as string[]) : null,
  rpm_limit: k.rpm_limit,
  tpm_limit: k.tpm_limit,
  created_time: k.created_time,
  updated_time: k.updated_time,
  last_used_time: k.last_used_time,
  admin_managed: k.admin_hold > Hold.none,
  admin_disabled: k.admin_hold === Hold.disabled,
  user_quota_exhausted: owner !== undefined && quotaUsedUp(owner),
});

/** Throws 401 unless the key and its owner are enabled and the key has not expired. */
function usable(p: KeyPrincipal): KeyPrincipal {
  if (p.user.status !== Status.enabled) throw unauthorized('the owner of this API key is disabled');
  if (p.key.status !== KeyStatus.enabled) throw unauthorized('API key is disabled');
  if (p.key.expires_time !== null && p.key.expires_time <= nowSeconds())
    throw unauthorized('API key has expired');
  return p;
}

export class ApiKeyService {
  private readonly cache: TtlCache<string, KeyPrincipal>;
  /** One database lookup per secret at a time; the requests that need it meanwhile share it. */
  private readonly lookups = new Map<string, Promise<KeyPrincipal>>();
  /** Bumped by every change: a lookup that started before one must not cache what it read. */
  private generation = 0;
  /** Background lookups wait until then after one failed on a database error. */
  private refreshPausedUntil = 0;

  constructor(
    private readonly keys: ApiKeysRepo,
    private readonly users: UsersRepo,
    private readonly cacheMs: number,
  ) {
    this.cache = new TtlCache(cacheMs);
  }

  /**
   * Resolves `Authorization: Bearer sk-...`. Cached for at most `credential_cache_ms` (<= 1 s),
   * so a disable/delete/expiry on any instance is honoured within a second everywhere.
   */
  async verify(secret: string): Promise<KeyPrincipal> {
    // Keyed by the secret itself: a hit skips the sha256 (it lives in this process only, like
    // the request that carried it), and only verified keys are cached.
    const p = this.cache.get(secret) ?? (await this.lookup(secret));
    return usable(p);
  }

  /**
   * `verify` without a promise when the key was verified in the last `credential_cache_ms`
   * (the request path's common case); undefined when the database must be asked. A busy key is
   * looked up again in the background once half its time in the cache has passed, so its
   * requests do not all find it expired at once and wait on the database (before, every request
   * arriving during the two lookups' round trip made its own two queries).
   */
  verifyCached(secret: string): KeyPrincipal | undefined {
    const e = this.cache.entry(secret);
    if (!e) return undefined;
    const now = Date.now();
    if (e.until - now < this.cacheMs / 2 && now >= this.refreshPausedUntil && !this.lookups.has(secret))
      this.lookup(secret).catch((err: unknown) => {
        // Gone: the next request verifies (and is refused) without the cache. A database error
        // leaves the entry to expire as it would have, and background lookups pause for a while
        // (a failing database is not asked again by every request of the second half).
        if (err instanceof GatewayError && err.status === 401) this.cache.delete(secret);
        else this.refreshPausedUntil = Date.now() + this.cacheMs / 4;
      });
    return usable(e.value);
  }

  private lookup(secret: string): Promise<KeyPrincipal> {
    const running = this.lookups.get(secret);
    if (running) return running;
    const generation = this.generation;
    const done = () => {
      if (this.lookups.get(secret) === pending) this.lookups.delete(secret);
    };
    const pending: Promise<KeyPrincipal> = this.read(secret).then(
      (p) => {
        done();
        if (generation === this.generation) this.cache.set(secret, p);
        return p;
      },
      (err: unknown) => {
        done();
        throw err;
      },
    );
    this.lookups.set(secret, pending);
    return pending;
  }

  private async read(secret: string): Promise<KeyPrincipal> {
    const key = await this.keys.byHash(hashSecret(secret));
    if (!key) throw unauthorized('invalid API key');
    const user = await this.users.byId(key.user_id);
    if (!user) throw unauthorized('invalid API key');
    // A lookup is a use (a request carried the key within the last second): recorded in the
    // background, to the minute. A failure to record it costs nothing but the figure.
    const now = nowSeconds();
    if (lastUseIsStale(key.last_used_time, now)) void this.keys.touch(key.id, now).catch(() => {});
    return {
      key,
      user,
      allowedModels: key.allowed_models ? (JSON.parse(key.allowed_models) as string[]) : null,
    };
  }

  /** `rows` as clients read them, each with its owner's quota (one query for the owners). */
  async publicKeys(rows: ApiKeyRow[]): Promise<PublicKey[]> {
    const owners = new Map(
      (await this.users.spendOf([...new Set(rows.map((k) => k.user_id))])).map((u) => [u.id, u]),
    );
    return rows.map((k) => toPublicKey(k, owners.get(k.user_id)));
  }

  /** `publicKeys` of one key. */
  async publicKey(row: ApiKeyRow): Promise<PublicKey> {
    return (await this.publicKeys([row]))[0]!;
  }

  /** Drops every cached verification and any lookup in flight (it may have read the old row). */
  private forget(): void {
    this.generation++;
    this.lookups.clear();
    this.cache.clear();
  }

  async create(actor: UserRow, input: KeyInput): Promise<{ row: ApiKeyRow; secret: string }> {
    const ownerId = input.user_id ?? actor.id;
    if (ownerId !== actor.id) {
      if (actor.role < Role.admin) throw forbidden('cannot create keys for another user');
      const owner = await this.users.byId(ownerId);
      if (!owner) throw notFound(`user ${ownerId} not found`);
      checkManages(actor, owner.role);
    } else if (input.admin_managed === true)
      throw forbidden("admin_managed: set by an admin, on another user's key", 'admin_managed');
    // A user whose keys an admin manages gets new ones from an admin: a key of their own would
    // carry none of the limits the admin set (docs/architecture.md); a root answers to no one.
    // Read afresh: the signed-in user's row may be a second old, and the mark just set.
    else if (actor.role < Role.root && (await this.users.byId(actor.id))?.keys_admin_managed === 1)
      throw forbidden('an admin manages your API keys; ask one for a new key');
    const now = nowSeconds();
    notExpired(input.expires_time, now);
    const { secret, hash, prefix } = newApiKey();
    // A key made for someone else is held as made, whatever it carries: its owner did not choose it.
    const hold = ownerId === actor.id ? Hold.none : holdAfterAdmin(Hold.limits, input);
    // The owner is marked with the key, in its transaction: a failure between the two left a
    // held key whose owner could still make keys of their own.
    const insert = this.keys.insert(
      {
        user_id: ownerId,
        name: normalizeCredentialName(input.name ?? 'default'),
        key_hash: hash,
        key_prefix: prefix,
        status: clientStatus(input.status ?? KeyStatus.enabled),
        expires_time: input.expires_time ?? null,
        quota_limit_micros: toMicros(input.quota_limit),
        allowed_models: input.allowed_models ? JSON.stringify(validModels(input.allowed_models)) : null,
        rpm_limit: input.rpm_limit ?? null,
        tpm_limit: input.tpm_limit ?? null,
        created_time: now,
        updated_time: now,
        last_used_time: null,
        admin_hold: hold,
      },
      hold > Hold.none ? 'mark' : undefined,
    );
    // The owner deleted since they were read (the key's foreign key refused the row): another
    // user is a 404, as if the delete had come first; the actor themselves is signed out.
    const row = await insert.catch(
      ownerId === actor.id
        ? ifUserGone(SIGNED_OUT)
        : (err: unknown): never => {
            throw isForeignKeyViolation(err) ? notFound(`user ${ownerId} not found`) : err;
          },
    );
    return { row, secret };
  }

  /** A key the actor may see and manage: their own, or any for admins. */
  async owned(actor: UserRow, id: number): Promise<ApiKeyRow> {
    const key = await this.keys.byId(id);
    if (!key || (key.user_id !== actor.id && actor.role < Role.admin))
      throw notFound(`API key ${id} not found`);
    return key;
  }

  /**
   * Keys the actor may see: their own, or any user's for admins (`userId` narrows to one user).
   * `ids` narrows to those keys; ids the actor may not see, or that do not exist, are left out.
   */
  list(actor: UserRow, userId: number | undefined, offset: number, limit: number, ids?: number[]) {
    if (actor.role < Role.admin && userId !== undefined && userId !== actor.id)
      throw forbidden("only admins can list other users' keys");
    const filter = { userId: actor.role >= Role.admin ? userId : actor.id, ids };
    return this.keys.list(filter, offset, limit);
  }

  /**
   * A key the actor may change: `owned`, and when it is another user's, one whose role is below
   * the actor's (root manages everyone), the rule user management applies to the user itself.
   */
  private async managed(actor: UserRow, id: number): Promise<ApiKeyRow> {
    const key = await this.owned(actor, id);
    if (key.user_id !== actor.id && actor.role < Role.root) {
      const owner = await this.users.byId(key.user_id);
      if (owner) checkManages(actor, owner.role);
    }
    return key;
  }

  /**
   * Changes the fields sent. Another user's key is held by the change (key-hold.ts); the owner of
   * a held key may tighten, not loosen. Written only over the row it was computed from: a change
   * racing another instance's (an admin lowering the quota while the owner raises it to the old
   * one) is computed again from the new row, or, after 3 tries, a 409.
   */
  async update(actor: UserRow, id: number, input: KeyInput): Promise<ApiKeyRow> {
    for (let attempt = 1; ; attempt++) {
      const key = await this.managed(actor, id);
      if (input.user_id !== undefined) throw badRequest('user_id: a key cannot change owner', 'user_id');
      const set = this.patch(actor, key, input);
      const mark = ownerMarkAfter(actor, key, input, set);
      const row = await this.keys.updateIf(id, set, heldColumns(key), mark && { id: key.user_id, mark });
      if (row) {
        this.forget();
        return row;
      }
      if (attempt >= 3) throw conflict(`API key ${id} is being changed by someone else; try again`);
    }
  }

  /** The columns a change of `key` by `actor` writes (key-hold.ts decides the hold). */
  private patch(actor: UserRow, key: ApiKeyRow, input: KeyInput): Record<string, unknown> {
    const quota = input.quota_limit === undefined ? undefined : toMicros(input.quota_limit);
    const models =
      input.allowed_models === undefined
        ? undefined
        : input.allowed_models && validModels(input.allowed_models, storedModels(key));
    const own = key.user_id === actor.id;
    // An owner below root is held to what an admin set; a root owner answers to no one.
    if (own && actor.role < Role.root) checkOwnerChange(key, input, quota, models);
    else if (own && input.admin_managed !== undefined && input.admin_managed !== key.admin_hold > Hold.none)
      throw forbidden("admin_managed: set by an admin, on another user's key", 'admin_managed');
    const set: Record<string, unknown> = { updated_time: nowSeconds() };
    if (!own) set.admin_hold = holdAfterAdmin(key.admin_hold, input);
    // A name stored before names were checked stays until it is changed: a form sends it back.
    if (input.name !== undefined && input.name.trim() !== key.name)
      set.name = normalizeCredentialName(input.name);
    if (input.status !== undefined) set.status = clientStatus(input.status);
    if (input.expires_time !== undefined) set.expires_time = input.expires_time;
    if (quota !== undefined) set.quota_limit_micros = quota;
    if (models !== undefined) set.allowed_models = models ? JSON.stringify(models) : null;
    if (input.rpm_limit !== undefined) set.rpm_limit = input.rpm_limit;
    if (input.tpm_limit !== undefined) set.tpm_limit = input.tpm_limit;
    return set;
  }

  /** A delete that finds the key gone (another delete took it since it was read) is a 404. */
  async delete(actor: UserRow, id: number): Promise<void> {
    await this.managed(actor, id);
    const deleted = await this.keys.delete(id);
    this.forget();
    if (!deleted) throw notFound(`API key ${id} not found`);
  }

  /** Drop cached verifications (another instance changed a key). */
  invalidate(): void {
    this.forget();
  }
}

/**
 * What an admin's write to another user's key does to the owner's mark (docs/architecture.md,
 * "New keys of a user whose keys an admin manages"), written with the key: holding it (a held
 * field or `admin_managed: true`; not a rename) marks the owner, handing back a held key
 * (`admin_managed: false`) lifts the mark once none of the owner's keys is held.
 */
function ownerMarkAfter(
  actor: UserRow,
  key: ApiKeyRow,
  input: KeyInput,
  set: Record<string, unknown>,
): OwnerMark | undefined {
  if (key.user_id === actor.id) return undefined;
  const hold = set.admin_hold as number;
  if (hold > Hold.none && (input.admin_managed === true || touchesHeld(input))) return 'mark';
  if (hold === Hold.none && key.admin_hold > Hold.none) return 'release';
  return undefined;
}

/** Another user's keys are managed only by a higher role (root manages everyone). */
function checkManages(actor: UserRow, ownerRole: number): void {
  if (ownerRole >= actor.role && actor.role < Role.root)
    throw forbidden('cannot manage the keys of a user whose role is not below yours');
}

function clientStatus(s: number): number {
  if (s !== KeyStatus.enabled && s !== KeyStatus.disabled)
    throw badRequest('status: must be 1 (enabled) or 2 (disabled)', 'status');
  return s;
}

/**
 * An allow-list names at least one model: an empty list (or one of blanks) would lock the key out
 * of every model, while the console and most gateways read "no list" as every model. Neither
 * meaning is guessed: null is every model, and an empty list is refused.
 *
 * A `*` before an entry's end is refused too: only a final `*` is a wildcard (allow-list.ts), so
 * `openai/*-mini` would admit only a model of that very id, where its writer meant a glob.
 * An entry is one line of visible text, as a model id is (text-characters.ts).
 * Entries the key holds already (`kept`, stored before these rules) pass, and keep their meaning:
 * a key saved again with them, or with some of them removed, still saves.
 */
function validModels(models: string[], kept: readonly string[] = []): string[] {
  if (models.length > 1000) throw badRequest('allowed_models: at most 1000 entries', 'allowed_models');
  const names = models.map((m) => m.trim());
  const blank = names.indexOf('');
  if (blank >= 0) throw badRequest(`allowed_models.${blank}: must not be blank`, `allowed_models.${blank}`);
  if (names.length === 0)
    throw badRequest('allowed_models: must name a model; null allows every model', 'allowed_models');
  // A model id is one line of visible text (as `default_model`): an entry with a bidi control or
  // a line break names no model and reads as another in the console.
  names.forEach((n, i) => {
    if (!kept.includes(n)) checkOneLine(`allowed_models.${i}`, n);
  });
  const inner = names.find((n) => innerStar(n) >= 0 && !kept.includes(n));
  if (inner !== undefined) {
    const prefix = inner.slice(0, innerStar(inner));
    const glob = prefix
      ? `write ${JSON.stringify(`${prefix}*`)} for every model whose id starts with ${JSON.stringify(prefix)}`
      : 'write "*" for every model';
    throw badRequest(
      `allowed_models: ${JSON.stringify(inner)} has a * before its end, and only a final * is a wildcard: ${glob}, or name the models one by one`,
      'allowed_models',
    );
  }
  return [...new Set(names)];
}

/** Where the first `*` of an entry stands when it is not the entry's last character, else -1. */
function innerStar(entry: string): number {
  const i = entry.indexOf('*');
  return i < entry.length - 1 ? i : -1;
}

/** The allow-list a key holds now (empty for every model). */
function storedModels(key: ApiKeyRow): string[] {
  return key.allowed_models ? (JSON.parse(key.allowed_models) as string[]) : [];
}
