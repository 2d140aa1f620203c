import { forbidden } from '../gateway/errors.js';
import type { ApiKeyRow } from '../store/api-keys-repo.js';
import { KeyStatus } from './roles.js';

/**
 * Keys an admin manages (docs/architecture.md, "Keys an admin manages"). An admin who creates a
 * key for another user, or changes the limits, allow-list, expiry or status of one, holds what
 * they set: the owner may still rename, disable and delete the key, and tighten its limits, but
 * not loosen them, nor enable a key an admin disabled. Before, bob's `PUT /api/key` with
 * `quota_limit`, `rpm_limit` and `allowed_models` null and `status` 1 undid everything an admin
 * had set on his key, with a 200.
 *
 * `api_keys.admin_hold` (migration 0007): `Hold.none`, `Hold.limits`, or `Hold.disabled` (held,
 * and disabled by an admin).
 */
export const Hold = { none: 0, limits: 1, disabled: 2 } as const;

/** What a key write may carry that the hold is about. */
export interface HeldInput {
  status?: number;
  expires_time?: number | null;
  quota_limit?: number | null;
  allowed_models?: string[] | null;
  rpm_limit?: number | null;
  tpm_limit?: number | null;
  /** Admins, on another user's key: false hands the key back to its owner, true holds it as it is. */
  admin_managed?: boolean;
}

const HELD = ['status', 'expires_time', 'quota_limit', 'allowed_models', 'rpm_limit', 'tpm_limit'] as const;

/** Whether a write sets something a hold is about. */
export const touchesHeld = (input: HeldInput) => HELD.some((f) => input[f] !== undefined);

/**
 * The hold after an admin's write to another user's key: `current` for a change, `Hold.limits`
 * for a key the admin creates for them (held whatever it carries: its owner did not choose it).
 */
export function holdAfterAdmin(current: number, input: HeldInput): number {
  if (input.admin_managed === false) return Hold.none;
  let hold = current;
  if (input.admin_managed === true || touchesHeld(input)) hold = Math.max(hold, Hold.limits);
  if (input.status === KeyStatus.disabled) return Hold.disabled;
  if (input.status === KeyStatus.enabled && hold === Hold.disabled) return Hold.limits;
  return hold;
}

/**
 * Refuses, with a 403 naming the field, an owner's change to their held key that loosens what an
 * admin set. `quotaMicros` and `models` are the sent quota and allow-list as they would be
 * stored (undefined: not sent). Values sent as they are, and tighter ones, pass.
 */
export function checkOwnerChange(
  key: ApiKeyRow,
  input: HeldInput,
  quotaMicros: number | null | undefined,
  models: string[] | null | undefined,
): void {
  if (input.admin_managed !== undefined && input.admin_managed !== key.admin_hold > Hold.none)
    throw forbidden("admin_managed: set by an admin, on another user's key", 'admin_managed');
  if (key.admin_hold === Hold.none) return;
  if (
    input.status === KeyStatus.enabled &&
    key.status !== KeyStatus.enabled &&
    key.admin_hold === Hold.disabled
  )
    throw forbidden('status: an admin disabled this key; only an admin can enable it again', 'status');
  const limit = (field: string) =>
    forbidden(
      `${field}: an admin manages this key's limits; you may lower it, not raise or remove it`,
      field,
    );
  if (quotaMicros !== undefined && looser(key.quota_limit_micros, quotaMicros)) throw limit('quota_limit');
  if (input.rpm_limit !== undefined && looser(key.rpm_limit, input.rpm_limit)) throw limit('rpm_limit');
  if (input.tpm_limit !== undefined && looser(key.tpm_limit, input.tpm_limit)) throw limit('tpm_limit');
  if (input.expires_time !== undefined && looser(key.expires_time, input.expires_time))
    throw forbidden(
      "expires_time: an admin manages this key's limits; you may make it expire sooner, not later or never",
      'expires_time',
    );
  if (models !== undefined && !narrows(key.allowed_models, models))
    throw forbidden(
      "allowed_models: an admin manages this key's limits; you may remove models from the list, not add any or clear it",
      'allowed_models',
    );
}

/** null is no limit: anything is looser than a limit but the same or a lower one. */
const looser = (was: number | null, now: number | null) => was !== null && (now === null || now > was);

/**
 * Whether the allow-list `now` admits no model that `was` (stored JSON, null: every model) does
 * not: each entry is one of `was`'s, or a wildcard whose prefix extends one of `was`'s wildcards
 * (wildcards match ids, registry/allow-list.ts). A plain entry under a wildcard is refused: a
 * name can reach a model by its alias or upstream name whose id the wildcard does not match.
 */
export function narrows(was: string | null, now: string[] | null): boolean {
  if (was === null) return true;
  if (now === null) return false;
  const old = JSON.parse(was) as string[];
  return now.every(
    (e) =>
      old.includes(e) ||
      (e.endsWith('*') && old.some((w) => w.endsWith('*') && e.startsWith(w.slice(0, -1)))),
  );
}

/** The columns a key write was computed from: it is written only over that row (`updateIf`). */
export function heldColumns(key: ApiKeyRow) {
  return {
    admin_hold: key.admin_hold,
    status: key.status,
    expires_time: key.expires_time,
    quota_limit_micros: key.quota_limit_micros,
    allowed_models: key.allowed_models,
    rpm_limit: key.rpm_limit,
    tpm_limit: key.tpm_limit,
  };
}
