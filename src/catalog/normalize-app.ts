import { badRequest } from '../gateway/errors.js';
import { checkOneLine, checkProse } from '../gateway/text-characters.js';
import { charLength } from '../store/column-bounds.js';
import { foldSearchText } from '../store/search-fold.js';
import {
  type Category,
  MAX_TAG_LENGTH,
  MAX_TAGS,
  MAX_URL_LENGTH,
  SERVER_OWNED,
  TEXT_LIMITS,
  URL_FIELDS,
} from './app-fields.js';

/** App fields a client may send (types already checked by the route schema). */
export interface AppInput {
  name?: string;
  short_description?: string;
  description?: string;
  category?: Category;
  version?: string;
  author?: string;
  author_url?: string | null;
  thumbnail_url?: string | null;
  download_url?: string | null;
  source_url?: string | null;
  documentation_url?: string | null;
  tags?: string | string[] | null;
  status?: number;
  featured?: boolean;
}

/** The columns a create or update writes, normalized. */
export interface AppValues {
  name?: string;
  short_description?: string;
  description?: string;
  category?: string;
  version?: string;
  author?: string;
  author_url?: string;
  thumbnail_url?: string;
  download_url?: string;
  source_url?: string;
  documentation_url?: string;
  tags?: string;
  status?: number;
  featured?: number;
}

/** Multi-line text; the other text fields are one line (gateway/text-characters.ts). */
const PROSE_FIELDS: ReadonlySet<string> = new Set(['short_description', 'description']);

/**
 * Validates and normalizes the fields present in `input`; absent fields stay absent so a
 * partial update touches only what was sent. Server-owned fields are dropped.
 */
export function normalizeApp(input: AppInput): AppValues {
  const out: AppValues = {};
  for (const field of ['name', 'short_description', 'description', 'version', 'author'] as const) {
    const v = input[field];
    if (v === undefined) continue;
    // Names are matched whole by search ("exact name" ranks first), so their inner runs of
    // whitespace are one space; other short fields are trimmed; the description is kept as is.
    const text = field === 'description' ? v : field === 'name' ? v.trim().replace(/\s+/g, ' ') : v.trim();
    if (charLength(text) > TEXT_LIMITS[field])
      throw badRequest(`${field}: must be at most ${TEXT_LIMITS[field]} characters`, field);
    if (PROSE_FIELDS.has(field)) checkProse(field, text);
    else checkOneLine(field, text);
    out[field] = text;
  }
  if (out.name !== undefined && out.name.length === 0) throw badRequest('name: must not be empty', 'name');
  if (input.category !== undefined) out.category = input.category;
  if (input.status !== undefined) out.status = input.status;
  if (input.featured !== undefined) out.featured = input.featured ? 1 : 0;
  for (const field of URL_FIELDS) {
    const v = input[field];
    if (v !== undefined) out[field] = normalizeUrl(field, v);
  }
  if (input.tags !== undefined) out.tags = normalizeTags(input.tags);
  for (const owned of SERVER_OWNED) delete (out as Record<string, unknown>)[owned];
  return out;
}

/** An absolute http(s) URL without credentials, or '' for "none". */
export function normalizeUrl(field: string, value: string | null): string {
  const v = (value ?? '').trim();
  if (v === '') return '';
  if (charLength(v) > MAX_URL_LENGTH)
    throw badRequest(`${field}: must be at most ${MAX_URL_LENGTH} characters`, field);
  // The URL parser repairs "http:x.com", "http:/x.com", "http:///x.com" and backslashes; the
  // link is stored as written, so what is stored must already be the URL it parses to.
  if (/^https?:/i.test(v) && !/^https?:\/\/[^/]/i.test(v))
    throw badRequest(`${field}: must be an absolute http or https URL (scheme://host/...)`, field);
  if (v.includes('\\')) throw badRequest(`${field}: must not contain backslashes`, field);
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw badRequest(`${field}: must be an absolute http or https URL`, field);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw badRequest(`${field}: must use http or https, not ${url.protocol.slice(0, -1)}`, field);
  if (!url.hostname) throw badRequest(`${field}: must name a host`, field);
  // Credentials in a public catalog link would leak them to every visitor. An empty user-info part
  // (`https://@x.com`, `https://:@x.com`) has none, but a parser drops it: the link stored would
  // not be the URL it parses to.
  const authority = v.slice(v.indexOf('//') + 2).split(/[/?#]/, 1)[0]!;
  if (url.username || url.password || authority.includes('@'))
    throw badRequest(`${field}: must not contain credentials`, field);
  // Whitespace, control and invisible format characters (zero-width spaces, bidi marks).
  if (/[\s\p{Cc}\p{Cf}]/u.test(v))
    throw badRequest(`${field}: must not contain whitespace or invisible characters`, field);
  return v;
}

/**
 * Tags arrive as a comma-separated string (the wire form) or an array; they are trimmed,
 * de-duplicated by the fold of search (first spelling wins: `Straße` and `STRASSE`, or `Café`
 * and `cafe`, are one tag, as search finds either by the other) and stored comma-separated.
 */
export function normalizeTags(value: string | string[] | null): string {
  const parts = value === null ? [] : Array.isArray(value) ? value : value.split(',');
  const seen = new Set<string>();
  const tags: string[] = [];
  for (const raw of parts) {
    if (raw.includes(',')) throw badRequest('tags: a tag must not contain a comma', 'tags');
    const tag = raw.trim().replace(/\s+/g, ' ');
    if (tag === '') continue;
    if (charLength(tag) > MAX_TAG_LENGTH)
      throw badRequest(`tags: each tag must be at most ${MAX_TAG_LENGTH} characters`, 'tags');
    checkOneLine('tags', tag);
    const key = foldSearchText(tag);
    if (seen.has(key)) continue;
    seen.add(key);
    tags.push(tag);
  }
  if (tags.length > MAX_TAGS) throw badRequest(`tags: at most ${MAX_TAGS} tags`, 'tags');
  return tags.join(',');
}
