export const CATEGORIES = ['development', 'productivity', 'tools', 'entertainment', 'general'] as const;
export type Category = (typeof CATEGORIES)[number];

export interface App {
  id: number;
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
  featured: boolean;
  download_count: number;
  created_time: number;
  updated_time: number;
  created_by?: number;
  updated_by?: number;
}

export const ROLE = { user: 1, admin: 10, root: 100 } as const;

export interface User {
  id: number;
  username: string;
  display_name?: string;
  role: number;
  status: number;
  default_model?: string | null;
  /** Spending limit in USD; null: unlimited. */
  quota_limit?: number | null;
  /** Spend so far in USD. */
  quota_used?: number;
  created_time?: number;
  /** An admin manages the user's API keys: the user's own POST /api/key is refused (403). */
  keys_admin_managed?: boolean;
}

export interface ApiKey {
  id: number;
  name: string;
  key_prefix: string;
  status: number;
  /** Unix seconds; older builds of the server called it expires_at. */
  expires_time?: number | null;
  expires_at?: number | null;
  quota_limit: number | null;
  quota_used: number;
  allowed_models: string[] | null;
  rpm_limit: number | null;
  tpm_limit: number | null;
  created_time: number;
  /** When it last authenticated a request (to the minute); null: never. */
  last_used_time?: number | null;
  user_id?: number;
  /** An admin holds its limits: its owner may not loosen them (the console shows them read-only). */
  admin_managed?: boolean;
  /** An admin disabled it: only an admin enables it again. */
  admin_disabled?: boolean;
  /** Its owner's quota is used up: every call gets a 402 naming the user, whatever `status` says. */
  user_quota_exhausted?: boolean;
}

export const CHANNEL_KINDS = [
  'openai-compatible',
  'anthropic',
  'gemini',
  'voyage',
  'jina',
  'cohere',
] as const;

export interface Channel {
  id: number;
  name: string;
  kind: string;
  base_url: string;
  keys: string[] | string;
  models: string[];
  /** The model ids it serves now: declared, listed by its GET /models, or its provider's own. */
  served_models?: string[];
  model_mapping: Record<string, string> | null;
  priority: number;
  weight: number;
  status: number;
  /** provider, data_collection, zdr, quantization, rpm, headers, pricing (per model id) and kind-specific options. */
  settings?: Record<string, unknown> & { pricing?: Record<string, Record<string, unknown>> | null };
  /** Who owns it: the console and the admin API, or a declaration that a restart applies again. */
  source: 'api' | 'config' | 'env';
  /** Moves on with every change; a PUT sending it is refused (409) once someone else changed it. */
  revision?: number;
  /** The outcome of its last model listing (on any instance); null when it was never listed. */
  listing?: ChannelListing | null;
}

/**
 * How a channel's last model listing ended: `GET /api/channel`'s `listing`, and the data of a
 * failed `POST /api/channel/:id/models/refresh`.
 */
export interface ChannelListing {
  /** Unix seconds, when it ended. */
  time: number;
  ok: boolean;
  /** How many models it listed; null when it could not be read. */
  models: number | null;
  /** null on success; a test's error kinds, or `empty`: an empty list not stored over the models listed before. */
  error_kind: string | null;
  /** The HTTP status the upstream failed with; null when it never answered, or on success. */
  upstream_status: number | null;
  message: string | null;
}

/** `POST /api/channel/:id/test`: its data, whether the upstream worked or not. */
export interface ChannelTestResult {
  success: boolean;
  latency_ms?: number;
  /** The model id tried, and the name sent for it (after the channel's model_mapping). */
  model?: string;
  upstream_model?: string;
  endpoint?: 'chat' | 'embeddings';
  /** The HTTP status the upstream failed with; null when it never answered (refused, timed out). */
  upstream_status?: number | null;
  /** auth, not_found, connection, timeout...; null on success. */
  error_kind?: string | null;
  message?: string;
}

export interface ModelPricing {
  prompt?: string;
  completion?: string;
  request?: string;
  image?: string;
  /** Per cached prompt token; without it, a cached token costs the prompt price. */
  input_cache_read?: string;
  /** Per prompt token written to the cache; without it, the prompt price. */
  input_cache_write?: string;
}

export interface ModelEntry {
  id: string;
  name: string;
  upstream_model?: string | null;
  /** Other names the model answers to (dated snapshots, `-latest`). */
  aliases?: string[];
  context_length: number | null;
  max_completion_tokens: number | null;
  pricing: ModelPricing | null;
  input_modalities: string[] | null;
  output_modalities: string[] | null;
  supported_parameters: string[] | null;
  /** The layer that won: `admin` once an admin entry exists. */
  source?: 'default' | 'config' | 'admin' | 'discovered';
  /** Whether an admin entry exists (DELETE removes it). */
  overridden?: boolean;
  /**
   * What describes the model below its admin entry, so what DELETE leaves: the built-in list
   * (`default`), the config file, an upstream that serves it (`discovered`), or nothing (null).
   */
  base_source?: 'default' | 'config' | 'discovered' | null;
}

export interface LogRecord {
  id: number;
  created_time: number;
  user_id: number;
  key_id: number | null;
  /** The user's login name; null once the user is deleted. */
  username?: string | null;
  /** The user's display name, possibly empty. */
  user_display_name?: string | null;
  /** The key's name; null when the request had no key or the key is deleted. */
  key_name?: string | null;
  model: string;
  endpoint?: string;
  provider: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  cost: number | string | null;
  latency_ms: number | null;
  ttft_ms: number | null;
  status: number | string;
  error_kind: string | null;
}

export interface StatBucket {
  bucket: string | number;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost: number | string;
}
