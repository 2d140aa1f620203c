/** Catalog vocabulary shared by validation, storage and routes (decisions.md "App catalog"). */
export const CATEGORIES = ['development', 'productivity', 'tools', 'entertainment', 'general'] as const;
export type Category = (typeof CATEGORIES)[number];

export const AppStatus = { published: 1, hidden: 2 } as const;

export const URL_FIELDS = [
  'author_url',
  'thumbnail_url',
  'download_url',
  'source_url',
  'documentation_url',
] as const;
export type UrlField = (typeof URL_FIELDS)[number];

/** Maximum lengths of the free-text fields; the PostgreSQL columns enforce the same limits. */
export const TEXT_LIMITS = {
  name: 128,
  short_description: 512,
  description: 20_000,
  version: 64,
  author: 128,
} as const;

export const MAX_URL_LENGTH = 2048;
export const MAX_TAGS = 20;
export const MAX_TAG_LENGTH = 64;

/** Fields the server owns: accepted in a body for round-tripping a record, then ignored. */
export const SERVER_OWNED = [
  'download_count',
  'created_time',
  'updated_time',
  'created_by',
  'updated_by',
] as const;
