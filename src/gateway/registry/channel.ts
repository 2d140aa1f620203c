import type { ChannelRow, ListingColumns, NewChannelRow } from '../../store/channels-repo.js';
import { badRequest, UpstreamError } from '../errors.js';
import { checkOneLine } from '../text-characters.js';
import { redactCredentials } from '../upstream/redact-credentials.js';
import {
  CHANNEL_KINDS,
  type ChannelKind,
  defaultBaseUrl,
  isChannelKind,
  needsVersionInBaseUrl,
} from './channel-kinds.js';
import { checkPricingOverrides, type PricingOverrides } from './model-info.js';

/**
 * Per-channel options. The known ones are checked; anything else is a kind-specific option
 * passed to the adapter as `UpstreamTarget.extra` (`headers` become extra request headers).
 */
export interface ChannelSettings {
  /**
   * The provider this upstream is, as OpenRouter names providers (`DeepInfra`, `DeepInfra/turbo`):
   * a name `provider.order`, `only` and `ignore` select it by beside the channel's name and kind
   * (routing/plan.ts `matchesAny`; a base slug matches its variants), which the models list's
   * `providers` filter matches too, and the `provider_name` of its entry in a model's endpoints
   * list. Trimmed; 1 to 128 characters.
   */
  provider?: string;
  data_collection?: 'allow' | 'deny';
  /** Zero data retention: requests with `provider.zdr: true` go only to channels declaring it. */
  zdr?: boolean;
  quantization?: string;
  /** Requests per minute this upstream accepts from us. */
  rpm?: number;
  headers?: Record<string, string>;
  /**
   * What this channel charges, per model id, over the model's own prices field by field
   * (normalized decimal strings; docs/routing.md, "Prices per upstream").
   */
  pricing?: PricingOverrides;
  [option: string]: unknown;
}

export type ChannelSource = 'api' | 'config' | 'env';

export interface Channel {
  id: number;
  name: string;
  kind: ChannelKind;
  base_url: string;
  keys: string[];
  /** Names as the channel lists them: registry ids or upstream names. */
  models: string[];
  /** Requested name -> name sent upstream. */
  model_mapping: Record<string, string>;
  priority: number;
  weight: number;
  status: number;
  settings: ChannelSettings;
  source: ChannelSource;
  created_time: number;
  updated_time: number;
  /** Moves on by one with every write; `PUT /api/channel` may send the one it read. */
  revision: number;
}

/** Everything but id, times, revision and source: what create/import supply. */
export interface ChannelInput {
  name: string;
  kind: string;
  base_url?: string;
  keys?: string[];
  models?: string[];
  model_mapping?: Record<string, string>;
  priority?: number;
  weight?: number;
  status?: number;
  settings?: Record<string, unknown>;
}

/**
 * The outcome of a channel's last model listing, as `GET /api/channel` answers it (`listing`; null
 * until the channel is first listed): when it ended (Unix seconds), whether it succeeded, how many
 * models it listed, and for a failure the fields a failed channel test answers.
 */
export interface ChannelListing {
  time: number;
  ok: boolean;
  /** Models the upstream listed (null when it could not be read). */
  models: number | null;
  /**
   * Why it failed (null on success): an upstream error kind (`server_error`, `auth`,
   * `bad_response`, ...), or `empty` for an empty list a background listing did not store over
   * the models listed before.
   */
  error_kind: string | null;
  /** The HTTP status the upstream failed with; null when it never answered, or on success. */
  upstream_status: number | null;
  message: string | null;
}

export type PublicChannel = Omit<Channel, 'keys'> & { keys: string[]; listing: ChannelListing | null };

/** The last listing's outcome a channel row holds (ChannelsRepo.setListing), null before any. */
export function listingOfRow(r: ChannelRow): ChannelListing | null {
  if (r.listing_time === null || r.listing_ok === null) return null;
  return {
    time: Number(r.listing_time),
    ok: r.listing_ok === 1,
    models: r.listing_models === null ? null : Number(r.listing_models),
    error_kind: r.listing_error_kind,
    upstream_status: r.listing_upstream_status === null ? null : Number(r.listing_upstream_status),
    message: r.listing_message,
  };
}

/** The columns ChannelsRepo.setListing writes for a listing's outcome. */
export function listingColumns(l: ChannelListing): ListingColumns {
  return {
    listing_time: l.time,
    listing_ok: l.ok ? 1 : 0,
    listing_models: l.models,
    listing_error_kind: l.error_kind,
    listing_upstream_status: l.upstream_status,
    listing_message: l.message,
  };
}

export function parseChannelRow(r: ChannelRow): Channel {
  return {
    id: r.id,
    name: r.name,
    kind: r.kind as ChannelKind,
    base_url: r.base_url,
    keys: JSON.parse(r.keys) as string[],
    models: JSON.parse(r.models) as string[],
    model_mapping: JSON.parse(r.model_mapping) as Record<string, string>,
    priority: r.priority,
    weight: r.weight,
    status: r.status,
    settings: JSON.parse(r.settings) as ChannelSettings,
    source: r.source as ChannelSource,
    created_time: Number(r.created_time),
    updated_time: Number(r.updated_time),
    revision: Number(r.revision),
  };
}

const ELLIPSIS = '…';

/** `sk-abcd...wxyz` -> `sk-a…wxyz`; short keys show only their last two characters. */
export function maskKey(key: string): string {
  if (key.length >= 12) return `${key.slice(0, 4)}${ELLIPSIS}${key.slice(-4)}`;
  return `${ELLIPSIS}${key.slice(-2)}`;
}

export const isMasked = (key: string) => key.includes(ELLIPSIS);

/**
 * What the admin API shows: keys and the values of `settings.headers` masked, since a header is
 * where other credentials go (`x-api-key`, a gateway's own token).
 */
export function toPublicChannel(c: Channel, listing: ChannelListing | null): PublicChannel {
  const headers = c.settings.headers;
  const settings =
    headers && typeof headers === 'object'
      ? {
          ...c.settings,
          headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, maskKey(String(v))])),
        }
      : c.settings;
  return { ...c, keys: c.keys.map(maskKey), settings, listing };
}

/**
 * Settings sent on update: a masked header value stands for the stored value of the same header
 * (the console echoes what it was shown); a masked value matching nothing is a 400.
 */
export function mergeSettings(
  sent: Record<string, unknown>,
  stored: ChannelSettings,
): Record<string, unknown> {
  const headers = sent.headers;
  if (!headers || typeof headers !== 'object' || Array.isArray(headers)) return sent;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string' || !isMasked(value)) {
      out[name] = value;
      continue;
    }
    const was = stored.headers?.[name];
    if (typeof was !== 'string' || maskKey(was) !== value)
      throw badRequest(
        `settings.headers.${name}: masked value matches no stored header`,
        `settings.headers.${name}`,
      );
    out[name] = was;
  }
  return { ...sent, headers: out };
}

/**
 * The host a channel's requests go to (its base_url, else its kind's), to tell whether an update
 * moves its stored credentials to another server.
 */
export function upstreamHost(c: Pick<ChannelInput, 'kind' | 'base_url'>): string {
  const base = c.base_url?.trim() || (isChannelKind(c.kind) ? defaultBaseUrl(c.kind) : '');
  try {
    return new URL(base).host.toLowerCase();
  } catch {
    return base;
  }
}

/**
 * Keys sent on update: a masked value stands for the stored key it masks (the console echoes
 * what it was shown), anything else is a new key. A masked value matching nothing is a 400.
 */
export function mergeKeys(sent: string[], stored: string[]): string[] {
  const out: string[] = [];
  for (const [i, k] of sent.entries()) {
    const key = k.trim();
    if (!isMasked(key)) {
      if (key) out.push(key);
      continue;
    }
    const match = stored.find((s) => maskKey(s) === key && !out.includes(s));
    if (!match) throw badRequest(`keys[${i}]: masked value matches no stored key`, `keys[${i}]`);
    out.push(match);
  }
  return [...new Set(out)];
}

/**
 * Checks what a JSON schema cannot and fills defaults; throws a 400 naming the field.
 * `storedName`: the channel's name as stored (an update), which passes as it is, so a channel
 * named before names were checked can still be changed, or renamed to a clean name.
 */
export function validateChannel(
  input: ChannelInput,
  storedName?: string,
): Omit<NewChannelRow, 'source' | 'created_time' | 'updated_time' | 'revision'> {
  if (!input.name?.trim()) throw badRequest('name: is required', 'name');
  if (input.name.trim() !== storedName) checkName(input.name.trim());
  if (!isChannelKind(input.kind))
    throw badRequest(`kind: must be one of ${CHANNEL_KINDS.join(', ')}`, 'kind');
  const baseUrl = (input.base_url?.trim() || defaultBaseUrl(input.kind)).replace(/\/+$/, '');
  if (!isHttpUrl(baseUrl)) throw badRequest('base_url: must be an absolute http(s) URL', 'base_url');
  // The HTTP client would not send them, and the URL is shown in the console and the logs.
  if (hasCredentials(baseUrl))
    throw badRequest(
      'base_url: must not carry credentials (user:password@); put API keys in keys and other headers in settings.headers',
      'base_url',
    );
  // Request paths are appended to the base URL as text (`{base}/chat/completions`), so a query
  // string or fragment would end up inside the path (`/v1?api_key=X/models`), and a secret in it
  // would be shown wherever the URL is (the console, the logs, error messages).
  if (/[?#]/.test(baseUrl))
    throw badRequest(
      'base_url: must not carry a query string or fragment (request paths are appended to it); put API keys in keys and other credentials in settings.headers',
      'base_url',
    );
  for (const [field, n] of [
    ['priority', input.priority ?? 0],
    ['weight', input.weight ?? 1],
  ] as const)
    if (!Number.isInteger(n)) throw badRequest(`${field}: must be an integer`, field);
  if ((input.weight ?? 1) < 1) throw badRequest('weight: must be at least 1', 'weight');
  const status = input.status ?? 1;
  if (status !== 1 && status !== 2) throw badRequest('status: must be 1 or 2', 'status');
  for (const [i, k] of (input.keys ?? []).entries()) checkKey(i, k);
  const keys = (input.keys ?? []).map((k) => k.trim()).filter(Boolean);
  const models = [...new Set((input.models ?? []).map((m) => m.trim()).filter(Boolean))];
  return {
    name: input.name.trim(),
    kind: input.kind,
    base_url: baseUrl,
    keys: JSON.stringify([...new Set(keys)]),
    models: JSON.stringify(models),
    model_mapping: JSON.stringify(input.model_mapping ?? {}),
    priority: input.priority ?? 0,
    weight: input.weight ?? 1,
    status,
    settings: JSON.stringify(validateSettings(input.settings ?? {})),
  };
}

/**
 * Control characters (C0, DEL, C1: line breaks, tabs, escapes) and the Unicode line and paragraph
 * separators: a channel's name is written into log lines, error messages, the CLI's listing and
 * routing preferences, where a line break would start a forged line and an escape recolour a
 * terminal.
 */
const NAME_BREAKERS = /[\p{Cc}\u2028\u2029]/u;

/**
 * Then the one-line rule of catalog names (text-characters.ts): no bidi controls, which would
 * display a name reordered, and no zero-width or other invisible characters, which make a name
 * look like another's in the console, the logs and `provider.order` preferences.
 */
function checkName(name: string): void {
  const found = NAME_BREAKERS.exec(name);
  if (found)
    throw badRequest(
      `name: must not contain control characters or line breaks (found U+${found[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')})`,
      'name',
    );
  checkOneLine('name', name);
}

function validateSettings(sent: Record<string, unknown>): ChannelSettings {
  const s = checkProvider(sent);
  if (s.data_collection !== undefined && s.data_collection !== 'allow' && s.data_collection !== 'deny')
    throw badRequest('settings.data_collection: must be "allow" or "deny"', 'settings.data_collection');
  if (s.zdr !== undefined && typeof s.zdr !== 'boolean')
    throw badRequest('settings.zdr: must be true or false', 'settings.zdr');
  if (s.quantization !== undefined && typeof s.quantization !== 'string')
    throw badRequest('settings.quantization: must be a string', 'settings.quantization');
  if (s.rpm !== undefined && s.rpm !== null && !(Number.isInteger(s.rpm) && (s.rpm as number) >= 1))
    throw badRequest('settings.rpm: must be an integer >= 1', 'settings.rpm');
  if (
    s.headers !== undefined &&
    (typeof s.headers !== 'object' ||
      s.headers === null ||
      Object.values(s.headers).some((v) => typeof v !== 'string'))
  )
    throw badRequest('settings.headers: must map header names to strings', 'settings.headers');
  if (s.headers !== undefined)
    for (const [name, value] of Object.entries(s.headers as Record<string, string>)) checkHeader(name, value);
  if (s.pricing === undefined) return s as ChannelSettings;
  if (s.pricing === null) {
    // null: no prices of its own, as leaving it out.
    const { pricing: _, ...rest } = s;
    return rest as ChannelSettings;
  }
  const checked = checkPricingOverrides(s.pricing);
  const [first] = checked.problems;
  if (first) throw badRequest(first.message, first.field);
  return { ...s, pricing: checked.value } as ChannelSettings;
}

/**
 * `settings.provider` trimmed, since routing compares it whole: ` DeepInfra` would match no
 * `provider.order` entry. Anything but a name is a 400 rather than a channel no preference selects.
 */
function checkProvider(s: Record<string, unknown>): Record<string, unknown> {
  if (s.provider === undefined) return s;
  const name = typeof s.provider === 'string' ? s.provider.trim() : '';
  if (name === '' || name.length > 128)
    throw badRequest(
      'settings.provider: must be a provider name of 1 to 128 characters (what provider.order, only and ignore select the channel by)',
      'settings.provider',
    );
  return name === s.provider ? s : { ...s, provider: name };
}

/** An HTTP header name (RFC 9110 `token`): what the HTTP client sends, and nothing else. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Not in a header value: control characters but the tab, and what is past Latin-1 (undici's rule). */
const NOT_HEADER_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * Headers the gateway writes itself: the connection and the framing of each request (undici's own,
 * and a second `Content-Length` or `Host` would make the request mean something else to the
 * upstream or a proxy in front of it) and the format it sends and reads. Lower case.
 */
const GATEWAY_HEADERS: Record<string, string> = {
  host: 'the gateway sets it from base_url',
  'content-length': 'the gateway sets it: it frames each request it sends',
  'transfer-encoding': 'the gateway sets it: it frames each request it sends',
  te: 'the gateway sets it: it frames each request it sends',
  trailer: 'the gateway sets it: it frames each request it sends',
  expect: 'the gateway sets it: it frames each request it sends',
  connection: 'the gateway sets it: it manages its connections to the upstream',
  'keep-alive': 'the gateway sets it: it manages its connections to the upstream',
  'proxy-connection': 'the gateway sets it: it manages its connections to the upstream',
  upgrade: 'the gateway sets it: it manages its connections to the upstream',
  'content-type': 'the gateway sets it: it sends JSON in the format of the channel kind',
  accept: 'the gateway sets it: it asks for JSON or an event stream, as the request needs',
  'accept-encoding': 'the gateway sets it: it reads answers as they are sent, uncompressed',
};

/**
 * One `settings.headers` entry, as the HTTP client would send it: a name that is an HTTP token and
 * not one of the gateway's own, and a value on one line. A bad one was stored and then failed every
 * request as a "connection" error (the client's refusal), pointing at the network. The message
 * names the header, never its value (a credential, often).
 */
function checkHeader(name: string, value: string): void {
  const field = `settings.headers.${name}`;
  if (!HEADER_NAME.test(name))
    throw badRequest(
      `${field}: not a valid header name (letters, digits and !#$%&'*+-.^_\`|~ only; no spaces or colons)`,
      field,
    );
  const reserved = GATEWAY_HEADERS[name.toLowerCase()];
  if (reserved) throw badRequest(`${field}: cannot be set per channel: ${reserved}`, field);
  const bad = NOT_HEADER_VALUE.exec(value)?.[0];
  if (bad !== undefined) throw badRequest(`${field}: ${badCharacter(bad)}`, field);
}

/**
 * A key as it is sent (`Bearer <key>`, `x-api-key: <key>`...): printable ASCII without spaces,
 * once trimmed (as it is stored). The message names its place in `keys`, never the key.
 */
function checkKey(i: number, key: unknown): void {
  if (typeof key !== 'string') return;
  const bad = /[^\x21-\x7e]/.exec(key.trim())?.[0];
  if (bad === undefined) return;
  const why =
    bad === ' ' || bad === '\t'
      ? 'must not contain spaces or tabs'
      : bad.charCodeAt(0) > 0x7e && bad.charCodeAt(0) !== 0x7f
        ? `must be printable ASCII (found U+${hex(bad)})`
        : badCharacter(bad);
  throw badRequest(`keys.${i}: ${why}`, `keys.${i}`);
}

function badCharacter(ch: string): string {
  if (ch === '\r' || ch === '\n') return 'must not contain line breaks';
  const code = ch.codePointAt(0)!;
  if (code < 0x20 || code === 0x7f) return `must not contain control characters (found U+${hex(ch)})`;
  return `must be Latin-1 text, as HTTP header values are (found U+${hex(ch)})`;
}

const hex = (ch: string) => ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');

function hasCredentials(s: string): boolean {
  const u = new URL(s);
  return u.username !== '' || u.password !== '';
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * A failed channel test or model refresh, said so that the operator sees which address failed
 * and how: `http://host:8000 answered 404: not found`. A base URL without a version segment, of a
 * kind that needs one (`needsVersionInBaseUrl`: OpenAI-compatible), that answers 404 gets a hint,
 * the most common setup mistake (`chat/completions` and `models` are appended to it as it is). Only the origin and path of
 * the base URL are shown, never a query string; the channel's keys and header values, when given,
 * are redacted from the upstream's message.
 */
export function explainChannelFailure(
  c: Pick<Channel, 'kind' | 'base_url'> & Partial<Pick<Channel, 'keys' | 'settings'>>,
  err: unknown,
): string {
  const said = (err as Error | undefined)?.message || String(err);
  // The upstream's words, without the credentials it may say back (the console masks them).
  const message = c.keys ? redactCredentials(said, { keys: c.keys, settings: c.settings ?? {} }) : said;
  if (!(err instanceof UpstreamError)) return message;
  let where = c.base_url;
  let path = '';
  try {
    const u = new URL(c.base_url);
    path = u.pathname.replace(/\/+$/, '');
    where = `${u.origin}${path}`;
  } catch {}
  const status = err.upstreamStatus;
  let out = status === undefined ? `${where}: ${message}` : `${where} answered ${status}: ${message}`;
  if (status === 404 && needsVersionInBaseUrl(c.kind) && !/\/v\d/.test(path))
    out += ` (${c.kind} channels take a base_url ending in /v1: ${where}/v1)`;
  return out;
}
