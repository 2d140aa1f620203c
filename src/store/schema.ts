import type { Generated } from 'kysely';

/**
 * Table shapes. Money is stored as integer micro-USD (`*_micros`) so quota arithmetic is exact
 * and atomic in one UPDATE on both databases; times are Unix seconds unless named `_ms`.
 */
export interface UsersTable {
  id: Generated<number>;
  username: string;
  password_hash: string;
  display_name: string;
  email: string;
  role: number;
  status: number;
  default_model: string;
  quota_limit_micros: number | null;
  quota_used_micros: Generated<number>;
  created_time: number;
  updated_time: number;
  /** 1: an admin manages the user's API keys, so new ones come from an admin (migration 0011). */
  keys_admin_managed: Generated<number>;
  /**
   * 0, or the user's own id for a user whose username already differed only in case from an
   * older user's when migration 0005 ran: the unique index on `(lower(username), case_duplicate)`
   * binds every other user (src/store/migrations/0005-username-case.ts). A rename sets it to 0.
   */
  case_duplicate: Generated<number>;
  /**
   * The email as uniqueness compares it (email-key.ts), NULL for none; written by the repository
   * with every email (migration 0006).
   */
  email_key: Generated<string | null>;
  /**
   * 0, or the user's own id for a user whose email an older user already held (ignoring case)
   * when migration 0006 ran: the unique index on `(email_key, email_duplicate)` binds every other
   * user. A new email sets it to 0.
   */
  email_duplicate: Generated<number>;
}

export interface SessionsTable {
  id: string; // sha256 of the cookie value
  user_id: number;
  created_time: number;
  expires_time: number;
}

export interface AccessTokensTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  token_hash: string;
  token_prefix: string;
  created_time: number;
  expires_time: number | null;
  last_used_time: number | null;
}

export interface ApiKeysTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  key_hash: string;
  key_prefix: string;
  status: number;
  expires_time: number | null;
  quota_limit_micros: number | null;
  quota_used_micros: Generated<number>;
  allowed_models: string | null; // JSON array
  rpm_limit: number | null;
  tpm_limit: number | null;
  created_time: number;
  updated_time: number;
  last_used_time: number | null;
  /**
   * 0: the owner's own key; 1: an admin holds its limits (its owner may tighten, not loosen
   * them); 2: held, and disabled by an admin (src/access/key-hold.ts, migration 0007).
   */
  admin_hold: Generated<number>;
}

export interface AppsTable {
  id: Generated<number>;
  name: string;
  short_description: string;
  description: string;
  category: string;
  version: string;
  author: string;
  author_url: string;
  thumbnail_url: string;
  download_url: string;
  source_url: string;
  documentation_url: string;
  tags: string;
  status: number;
  featured: number; // 0/1 on both databases
  download_count: Generated<number>;
  created_time: number;
  updated_time: number;
  created_by: number;
  updated_by: number;
  /** The search fold of each searched field (search-fold.ts), written with it by AppsRepo. */
  search_name: Generated<string>;
  search_short_description: Generated<string>;
  search_description: Generated<string>;
  search_tags: Generated<string>;
  search_author: Generated<string>;
}

export interface ChannelsTable {
  id: Generated<number>;
  name: string;
  kind: string;
  base_url: string;
  keys: string; // JSON array of secrets
  models: string; // JSON array
  model_mapping: string; // JSON object
  priority: number;
  weight: number;
  status: number;
  settings: string; // JSON object
  source: string; // 'api' | 'config' | 'env'
  created_time: number;
  updated_time: number;
  /** Moves on by one with every write of the row (compare-and-swap updates). */
  revision: Generated<number>;
  /**
   * The outcome of the channel's last model listing (migration 0010), all NULL until it is first
   * listed: when it ended (Unix seconds), 1 listed / 0 failed, how many models it listed, and for
   * a failure its error kind, the upstream's HTTP status (NULL when it never answered) and the
   * message. Written by ChannelsRepo.setListing only.
   */
  listing_time: Generated<number | null>;
  listing_ok: Generated<number | null>;
  listing_models: Generated<number | null>;
  listing_error_kind: Generated<string | null>;
  listing_upstream_status: Generated<number | null>;
  listing_message: Generated<string | null>;
}

export interface ModelsTable {
  id: string;
  data: string; // JSON of the registry entry
  updated_time: number;
}

export interface RequestLogsTable {
  id: Generated<number>;
  created_time: number;
  request_id: string;
  user_id: number | null;
  key_id: number | null;
  endpoint: string;
  model: string;
  provider: string;
  channel_id: number | null;
  prompt_tokens: number;
  completion_tokens: number;
  cost_micros: number;
  latency_ms: number;
  ttft_ms: number | null;
  status: number;
  error_kind: string | null;
  stream: number;
  attempts: string | null; // JSON trail
}

export interface RequestLogWritersTable {
  id: string;
  last_seq: number;
  updated_time: number;
}

export interface QuotaHoldsTable {
  id: string;
  created_time: number;
}

export interface KvTable {
  key: string;
  value: string;
}

export interface DB {
  users: UsersTable;
  sessions: SessionsTable;
  access_tokens: AccessTokensTable;
  api_keys: ApiKeysTable;
  apps: AppsTable;
  channels: ChannelsTable;
  models: ModelsTable;
  request_logs: RequestLogsTable;
  request_log_writers: RequestLogWritersTable;
  quota_holds: QuotaHoldsTable;
  kv: KvTable;
}
