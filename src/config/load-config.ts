import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Settings } from 'typebox/system';
import { Value } from 'typebox/value';
import { parse as parseYaml } from 'yaml';
import { validateChannel } from '../gateway/registry/channel.js';
import { unknownModalities } from '../gateway/registry/modalities.js';
import { checkPricingOverrides, priceBoundProblems } from '../gateway/registry/model-info.js';
import { databaseUrlProblem, redisUrlProblem } from '../store/connection-urls.js';
import { checkCorsOrigins } from './cors-origins.js';
import { type ChannelDeclaration, type Config, ConfigSchema, SECRET_PATHS } from './schema.js';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Friendly names for the settings people set most. */
const ALIASES: Record<string, string> = {
  MODELGATE_HOST: 'server.host',
  MODELGATE_PORT: 'server.port',
  PORT: 'server.port',
  DATABASE_URL: 'database.url',
  REDIS_URL: 'redis.url',
  MODELGATE_ROOT_PASSWORD: 'auth.root_password',
  MODELGATE_DEFAULT_MODEL: 'gateway.default_model',
  MODELGATE_LOG_LEVEL: 'log.level',
};

/** Environment shortcuts that declare an upstream: `<PREFIX>_API_KEY` (+ `<PREFIX>_BASE_URL`). */
const PROVIDER_SHORTCUTS: Array<{ prefix: string; kind: string; name: string }> = [
  { prefix: 'OPENAI', kind: 'openai-compatible', name: 'openai' },
  { prefix: 'ANTHROPIC', kind: 'anthropic', name: 'anthropic' },
  { prefix: 'GEMINI', kind: 'gemini', name: 'gemini' },
  { prefix: 'VOYAGE', kind: 'voyage', name: 'voyage' },
  { prefix: 'JINA', kind: 'jina', name: 'jina' },
  { prefix: 'COHERE', kind: 'cohere', name: 'cohere' },
];

/**
 * Not settings: the file's name, and the names clients of the gateway keep its address and key
 * in (docs/responses-ingress.md has Codex read `MODELGATE_API_KEY`), so a shell that exports
 * them can still start the gateway.
 */
const IGNORED_ENV = new Set(['MODELGATE_CONFIG', 'MODELGATE_API_KEY', 'MODELGATE_BASE_URL']);

/**
 * What Kubernetes sets in every pod for a Service named `modelgate` (service links):
 * `MODELGATE_SERVICE_HOST`, `MODELGATE_SERVICE_PORT[_<name>]`, `MODELGATE_PORT_<n>_TCP[_...]`, and
 * `MODELGATE_PORT=tcp://10.0.0.1:80`. None is a setting; read as settings they stopped every pod.
 */
const SERVICE_LINK = /^MODELGATE_(SERVICE_(HOST|PORT)(_.*)?|PORT_\d+_(TCP|UDP|SCTP)(_.*)?)$/;
const isServiceLink = (name: string, value: string) =>
  SERVICE_LINK.test(name) || (name === 'MODELGATE_PORT' && /^(tcp|udp|sctp):\/\//.test(value));

/**
 * Several names for one setting: the more specific one wins whatever the environment's order
 * (`MODELGATE_SERVER_PORT` over `MODELGATE_PORT` over `PORT`).
 */
function envRank(name: string): number {
  if (!name.startsWith('MODELGATE_')) return 0;
  return ALIASES[name] ? 1 : 2;
}

/**
 * Defaults < YAML file (MODELGATE_CONFIG) < environment. Collects every problem before
 * failing so an operator fixes the whole file in one go; values of secret settings are
 * never echoed.
 */
export function loadConfig(env: Env = process.env, overrides: unknown = undefined): Config {
  const problems: string[] = [];
  let raw: Record<string, any> = {};
  const file = env.MODELGATE_CONFIG;
  if (file) {
    try {
      const parsed = parseYaml(readFileSync(file, 'utf8'));
      if (parsed != null && (typeof parsed !== 'object' || Array.isArray(parsed))) {
        problems.push(`${file}: top level must be a mapping`);
      } else raw = parsed ?? {};
      // A section left empty (`channels:` with every entry commented out) is null in YAML: it
      // means nothing is set there, as an absent section, not a value to refuse.
      for (const key of Object.keys(raw)) if (raw[key] === null) delete raw[key];
    } catch (err) {
      problems.push(`${file}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  // Copied, as what follows sets, deletes and fills in defaults in place: the caller's object
  // stays as it was given.
  if (overrides) raw = deepMerge(raw, copyPlain(overrides) as Record<string, any>);
  // Which environment variable set which setting, to name it beside the setting in a problem.
  const sources = new Map<string, string>();
  const shortcuts = applyEnv(raw, env, problems, sources);
  const named = (path: string): string => {
    for (const [at, name] of sources)
      if (path === at || path.startsWith(`${at}.`)) return `${path} (from ${name})`;
    return path;
  };
  const fileChannels = Array.isArray(raw.channels) ? raw.channels.length : 0;
  // A `channels:` that is not a list stays as it is, for the schema to report.
  if (shortcuts.length > 0 && (raw.channels == null || Array.isArray(raw.channels)))
    raw.channels = [...(raw.channels ?? []), ...shortcuts];
  // The file's values (YAML's own types) and the overrides are taken as they are: a whole-config
  // conversion read `max_completion_tokens: 0` as null (unlimited) and 1.5 as 1. Only what the
  // environment set, which is text, is read as its setting's type.
  numberProblems(ConfigSchema, raw, '', problems, named, sources);
  convertEnv(raw, sources);
  // Before the conversion too, which reads a number as the address "2" (0.0.0.2).
  const trustProxy = trustProxyProblem(raw.server?.trust_proxy);
  if (trustProxy) {
    problems.push(`${named('server.trust_proxy')}: ${trustProxy}`);
    delete raw.server.trust_proxy;
  }
  const withDefaults = Value.Default(ConfigSchema, raw) as Config;
  problems.push(...schemaProblems(withDefaults, named));
  const database = withDefaults.database?.url;
  const databaseProblem = typeof database === 'string' ? databaseUrlProblem(database) : undefined;
  if (databaseProblem) problems.push(`${named('database.url')}: ${databaseProblem}`);
  const redis = withDefaults.redis?.url;
  const redisProblem = typeof redis === 'string' ? redisUrlProblem(redis) : undefined;
  if (redisProblem) problems.push(`${named('redis.url')}: ${redisProblem}`);
  // ioredis turns TLS on for a lowercase `rediss://` only (its parser takes any case).
  else if (typeof redis === 'string')
    withDefaults.redis.url = redis.replace(/^rediss?:\/\//i, (s) => s.toLowerCase());
  const corsOrigins = withDefaults.server?.cors_origins;
  if (Array.isArray(corsOrigins)) {
    const cors = checkCorsOrigins(corsOrigins);
    for (const p of cors.problems) problems.push(`${named('server.cors_origins')}: ${p}`);
    withDefaults.server.cors_origins = cors.origins;
  }
  if (Array.isArray(withDefaults.channels))
    problems.push(...channelNameProblems(withDefaults.channels.slice(0, fileChannels), shortcuts));
  for (const [i, m] of (Array.isArray(withDefaults.models) ? withDefaults.models : []).entries()) {
    problems.push(...priceBoundProblems(m?.pricing ?? {}, `models.${i}.pricing`));
    // As the admin API checks them (src/gateway/registry/modalities.ts), naming the model.
    for (const bad of unknownModalities(m ?? {}))
      problems.push(`models.${i}.${bad.field} (model ${JSON.stringify(m?.id)}): ${bad.message}`);
  }
  for (const [i, c] of (Array.isArray(withDefaults.channels) ? withDefaults.channels : []).entries()) {
    const pricing = (c?.settings as Record<string, unknown> | undefined)?.pricing;
    if (pricing != null)
      problems.push(
        ...checkPricingOverrides(pricing, `channels.${i}.settings.pricing`).problems.map((p) => p.message),
      );
  }
  // The checks the admin API makes of a channel (base_url, weight, settings...), here so a bad
  // declaration names its place in the file instead of failing the start with the bare message.
  for (const [i, c] of (Array.isArray(withDefaults.channels) ? withDefaults.channels : []).entries()) {
    const at = i < fileChannels ? `channels.${i}` : `upstream ${c?.name} (environment)`;
    if (problems.some((p) => p.startsWith(`${at}.`) || p.startsWith(`${at}:`))) continue;
    try {
      validateChannel(c);
    } catch (err) {
      problems.push(`${at}${i < fileChannels ? '.' : ': '}${(err as Error).message}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return withDefaults;
}

/**
 * Sets what the environment says in `raw`, and in `sources` the variable that set each setting
 * (the one that wins); returns the upstreams its shortcuts declare.
 */
function applyEnv(
  raw: Record<string, any>,
  env: Env,
  problems: string[],
  sources: Map<string, string>,
): ChannelDeclaration[] {
  const sections = Object.keys(ConfigSchema.properties);
  const entries = Object.entries(env).sort(([a], [b]) => envRank(a) - envRank(b));
  for (const [name, value] of entries) {
    if (value === undefined || value === '' || IGNORED_ENV.has(name) || isServiceLink(name, value)) continue;
    let path = ALIASES[name];
    if (!path && name.startsWith('MODELGATE_')) {
      const rest = name.slice('MODELGATE_'.length).toLowerCase();
      const section = sections.find((s) => rest.startsWith(`${s}_`));
      const key = section ? rest.slice(section.length + 1) : '';
      const props = section ? (ConfigSchema.properties as any)[section]?.properties : undefined;
      if (!props || !(key in props)) {
        problems.push(`${name}: unknown environment setting`);
        continue;
      }
      path = `${section}.${key}`;
    }
    if (!path) continue;
    const [section, key] = path.split('.') as [string, string];
    sources.set(path, name);
    raw[section] ??= {};
    const isArray = (ConfigSchema.properties as any)[section]?.properties?.[key]?.type === 'array';
    raw[section][key] = isArray
      ? value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : path === 'server.trust_proxy'
        ? trustProxyFromEnv(value)
        : value;
  }
  const shortcuts: ChannelDeclaration[] = [];
  for (const p of PROVIDER_SHORTCUTS) {
    const key = env[`${p.prefix}_API_KEY`];
    if (!key) continue;
    shortcuts.push({
      name: `env-${p.name}`,
      kind: p.kind,
      base_url: env[`${p.prefix}_BASE_URL`] || undefined,
      keys: key
        .split(',')
        .map((k) => k.trim())
        .filter(Boolean),
      models: (env[`${p.prefix}_MODELS`] ?? '')
        .split(',')
        .map((m) => m.trim())
        .filter(Boolean),
      model_mapping: {},
      priority: 0,
      weight: 1,
      status: 1,
      settings: {},
    });
  }
  return shortcuts;
}

/**
 * A channel is declared by its name (the import upserts by name, and a start deletes the
 * declared channels whose name is gone), so two declarations of one name would both be
 * written in turn, the last one winning at every start. Names compare as the import stores
 * them: trimmed, case-sensitive. Non-string names are the schema's problem.
 */
function channelNameProblems(file: unknown[], shortcuts: ChannelDeclaration[]): string[] {
  const problems: string[] = [];
  const first = new Map<string, number>();
  for (const [i, c] of file.entries()) {
    const name = (c as { name?: unknown } | null)?.name;
    if (typeof name !== 'string' || !name.trim()) continue;
    const key = name.trim();
    const earlier = first.get(key);
    if (earlier === undefined) first.set(key, i);
    else problems.push(`channels.${i}.name: ${JSON.stringify(key)} is already used by channels.${earlier}`);
  }
  for (const s of shortcuts) {
    const at = first.get(s.name);
    const prefix = PROVIDER_SHORTCUTS.find((p) => `env-${p.name}` === s.name)?.prefix;
    if (at !== undefined)
      problems.push(
        `channels.${at}.name: ${JSON.stringify(s.name)} is already used by the upstream that ${prefix}_API_KEY declares`,
      );
  }
  return problems;
}

/** `true`/`false` (and `1`/`0`, as every boolean setting), or the trusted proxies' addresses. */
function trustProxyFromEnv(value: string): boolean | string {
  const v = value.trim().toLowerCase();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  return value.trim();
}

const TRUST_PROXY_FORMS =
  "; use true, false, or the proxies' addresses or CIDR ranges, comma-separated (or loopback, linklocal, uniquelocal)";

/** The parser Fastify reads a `trustProxy` string with, from Fastify's own dependencies. */
let proxyAddr: { compile(trusted: string[]): unknown } | undefined;

/**
 * Why Fastify would refuse `server.trust_proxy` when the server is built (after the migrations
 * and the root user), or would read it as other than meant; undefined when it reads it, and for
 * what is not a string or a number (the schema's to report).
 */
function trustProxyProblem(value: unknown): string | undefined {
  const hops = `a hop count is not offered (Fastify trusts no proxy for a number)${TRUST_PROXY_FORMS}`;
  if (typeof value === 'number') return hops;
  if (typeof value !== 'string' || value === '') return undefined;
  // As Fastify splits it (src/http/app.ts passes the string on).
  const entries = value.split(',').map((e) => e.trim());
  if (entries.includes('')) return `an empty entry in the list${TRUST_PROXY_FORMS}`;
  // proxy-addr takes "2" for the address 0.0.0.2.
  if (entries.some((e) => /^\d+$/.test(e))) return hops;
  proxyAddr ??= createRequire(createRequire(import.meta.url).resolve('fastify'))('@fastify/proxy-addr');
  try {
    proxyAddr!.compile(entries);
    return undefined;
  } catch (err) {
    return `${(err as Error).message}${TRUST_PROXY_FORMS}`;
  }
}

/**
 * The schema's problems, one line each: an unknown key once, by the line that names every
 * unknown key of its object (not also as "schema is false"), and a value no branch of a union
 * takes as what the union takes (`must be one of fatal, error, ...`), not every branch's refusal.
 */
function schemaProblems(config: Config, named: (path: string) => string): string[] {
  const errors = everySchemaError(config);
  const problems: string[] = [];
  const told = new Set<string>();
  for (const error of errors) {
    if (error.keyword === 'boolean' && error.schemaPath.endsWith('/additionalProperties')) continue;
    // A union's branches' refusals (and the union's own line) are one problem: the union's,
    // told where its first refusal stood, whether or not the library wrote the union's line.
    const union = unionOf(error);
    const e = union
      ? (errors.find((u) => u.keyword === 'anyOf' && u.schemaPath === union && within(error, u)) ?? {
          ...error,
          keyword: 'anyOf',
          schemaPath: union,
          message: 'must match a schema in anyOf',
        })
      : error;
    if (e.keyword === 'anyOf') {
      const key = `${e.schemaPath} ${e.instancePath}`;
      if (told.has(key)) continue;
      told.add(key);
    }
    const path = e.instancePath.replace(/^\//, '').replaceAll('/', '.');
    const extra = (e.params as { additionalProperties?: string[] })?.additionalProperties;
    const what = extra
      ? `unknown setting(s) ${extra.join(', ')}${path ? '' : ` (the sections are ${Object.keys(ConfigSchema.properties).join(', ')})`}`
      : e.keyword === 'anyOf'
        ? unionMessage(e, errors)
        : said(e);
    // A type says nothing of the value; any other refusal of a secret might (its length...).
    const secret = e.keyword === 'type' ? `${what} (value hidden)` : 'invalid value (hidden)';
    problems.push(`${path ? named(path) : 'top level'}: ${SECRET_PATHS.has(path) ? secret : what}`);
  }
  return problems;
}

type SchemaError = {
  keyword: string;
  schemaPath: string;
  instancePath: string;
  message: string;
  params: unknown;
};

/**
 * Every error of the config, not the schema library's first 8 (its `maxErrors`, a process-wide
 * setting, raised for this call only): five refusals of log.level's branches used to fill it, so
 * the union's line never came and the settings after it were not named. A config's errors are
 * bounded by its size.
 */
function everySchemaError(config: Config): SchemaError[] {
  const limit = Settings.Get().maxErrors;
  Settings.Set({ maxErrors: Number.MAX_SAFE_INTEGER });
  try {
    return [...Value.Errors(ConfigSchema, config)];
  } finally {
    Settings.Set({ maxErrors: limit });
  }
}

/** Whether an error is about the value of another, or one inside it (another item has its own). */
function within(e: SchemaError, outer: SchemaError): boolean {
  return e.instancePath === outer.instancePath || e.instancePath.startsWith(`${outer.instancePath}/`);
}

/** The schema path of the outermost union an error was made under (by one of its branches). */
function unionOf(e: SchemaError): string | undefined {
  const at = e.schemaPath.indexOf('/anyOf/');
  return at < 0 ? undefined : e.schemaPath.slice(0, at);
}

function said(e: SchemaError): string {
  const limit = (e.params as { limit?: unknown })?.limit;
  return e.keyword === 'minLength' && limit === 1 ? 'must not be empty' : e.message;
}

/**
 * A value of a branch's kind that the branch refuses (0 for "an integer >= 1 or null") is told
 * what that branch wants; any other value what the union takes.
 */
function unionMessage(union: SchemaError, errors: SchemaError[]): string {
  const branch = errors.find(
    (e) =>
      e.schemaPath.startsWith(`${union.schemaPath}/anyOf/`) &&
      within(e, union) &&
      e.keyword !== 'type' &&
      e.keyword !== 'const',
  );
  if (branch) return said(branch);
  let schema: any = ConfigSchema;
  for (const key of union.schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean)) schema = schema?.[key];
  const words: string[] = [];
  let literal = true;
  for (const b of (schema?.anyOf ?? []) as any[]) {
    if ('const' in b) words.push(String(b.const));
    else if (b.type === 'boolean') words.push('true', 'false');
    else if (b.type === 'null') words.push('null');
    else {
      literal = false;
      if (b.type === 'integer') words.push(`an integer${b.minimum === undefined ? '' : ` >= ${b.minimum}`}`);
      else if (b.type === 'number') words.push('a number');
      else if (b.type === 'string') words.push('a string');
      else return union.message;
    }
  }
  if (words.length === 0) return union.message;
  return literal
    ? `must be one of ${words.join(', ')}`
    : `must be ${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;
}

const INTEGER_TEXT = /^\s*[+-]?\d+\s*$/;
const NUMBER_TEXT = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;

/**
 * Integer and number settings as written: a string must read as one in decimal (no "0x10",
 * "true" or " "), an integer setting must be a whole number. A value refused here is dropped so
 * the schema's own check does not report it twice. Unions (a number or null, ...) are left to
 * the schema.
 */
function numberProblems(
  schema: any,
  obj: Record<string, any>,
  path: string,
  problems: string[],
  named: (path: string) => string,
  sources: Map<string, string>,
): void {
  for (const [k, sub] of Object.entries<any>(schema.properties ?? {})) {
    const value = obj[k];
    if (value === undefined || value === null) continue;
    const at = path ? `${path}.${k}` : k;
    if (sub.type === 'integer' || sub.type === 'number') {
      const integer = sub.type === 'integer';
      const text = integer ? INTEGER_TEXT : NUMBER_TEXT;
      const what = integer ? 'an integer' : 'a number';
      // Text is read as a number from the environment only; in the file it is a quoted value.
      const fromEnv = sources.has(at);
      const bad =
        typeof value === 'string'
          ? !fromEnv || !text.test(value)
          : integer && typeof value === 'number' && !Number.isInteger(value);
      if (bad) {
        const quoted = typeof value === 'string' && !fromEnv && text.test(value);
        problems.push(`${named(at)}: must be ${what}${quoted ? ', written without quotes' : ''}`);
        delete obj[k];
      }
    } else if (sub.type === 'object' && value && typeof value === 'object' && !Array.isArray(value)) {
      numberProblems(sub, value, at, problems, named, sources);
    } else if (sub.type === 'array' && sub.items?.type === 'object' && Array.isArray(value)) {
      for (const [i, item] of value.entries())
        if (item && typeof item === 'object' && !Array.isArray(item))
          numberProblems(sub.items, item, `${at}.${i}`, problems, named, sources);
    }
  }
}

/**
 * The settings the environment set (`sources`), read as their type: environment variables are
 * text. Their numbers were checked as written (numberProblems); a boolean reads `true`, `false`,
 * `1` or `0`; what does not convert is left for the schema to report.
 */
function convertEnv(raw: Record<string, any>, sources: Map<string, string>): void {
  for (const path of sources.keys()) {
    const [section, key] = path.split('.') as [string, string];
    const value = raw[section]?.[key];
    if (typeof value !== 'string') continue;
    const schema = (ConfigSchema.properties as any)[section]?.properties?.[key];
    raw[section][key] =
      schema.type === 'integer' || schema.type === 'number' ? Number(value) : Value.Convert(schema, value);
  }
}

/** A copy of plain objects and arrays, all the way down; anything else is the same value. */
function copyPlain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyPlain);
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copyPlain(v)]));
  return value;
}

function deepMerge(a: Record<string, any>, b: Record<string, any>): Record<string, any> {
  const out: Record<string, any> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && out[k] && typeof out[k] === 'object'
        ? deepMerge(out[k], v)
        : v;
  }
  return out;
}
