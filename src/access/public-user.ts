import type { UserRow } from '../store/users-repo.js';

/** A user as the API answers it: never the password hash. */
export interface PublicUser {
  id: number;
  username: string;
  display_name: string;
  email: string;
  role: number;
  status: number;
  default_model: string;
  quota_limit: number | null;
  quota_used: number;
  /** An admin manages the user's API keys: new ones come from an admin (api-keys.ts). */
  keys_admin_managed: boolean;
  created_time: number;
  updated_time: number;
}

export const toPublicUser = (u: UserRow): PublicUser => ({
  id: u.id,
  username: u.username,
  display_name: u.display_name,
  email: u.email,
  role: u.role,
  status: u.status,
  default_model: u.default_model,
  quota_limit: u.quota_limit_micros === null ? null : u.quota_limit_micros / 1e6,
  quota_used: u.quota_used_micros / 1e6,
  keys_admin_managed: u.keys_admin_managed === 1,
  created_time: u.created_time,
  updated_time: u.updated_time,
});
