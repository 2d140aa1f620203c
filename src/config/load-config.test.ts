import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './load-config.js';

function yamlFile(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'mg-cfg-'));
  const f = join(dir, 'c.yaml');
  writeFileSync(f, text);
  return f;
}

/** The problems loadConfig lists for these settings ([] when it loads them); any other error is thrown. */
function problemsOf(env: Record<string, string | undefined>, overrides?: unknown): string[] {
  try {
    loadConfig(env, overrides);
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems;
  }
}

describe('loadConfig', () => {
  it('has working defaults with an empty environment', () => {
    const c = loadConfig({});
    expect(c.server.port).toBe(3000);
    expect(c.database.url).toBe('./data/modelgate.db');
    expect(c.redis.url).toBe('');
    expect(c.channels).toEqual([]);
  });

  it('layers file < environment', () => {
    const f = yamlFile('server:\n  port: 4000\n  host: 0.0.0.0\ngateway:\n  default_model: a/b\n');
    const c = loadConfig({
      MODELGATE_CONFIG: f,
      MODELGATE_PORT: '5000',
      MODELGATE_GATEWAY_MAX_ATTEMPTS: '7',
    });
    expect(c.server.port).toBe(5000);
    expect(c.server.host).toBe('0.0.0.0');
    expect(c.gateway.default_model).toBe('a/b');
    expect(c.gateway.max_attempts).toBe(7);
  });

  it('refreshes model listings hourly by default; the environment sets another interval or 0', () => {
    expect(loadConfig({}).gateway.discovery_interval_ms).toBe(3_600_000);
    const every = (v: string) => loadConfig({ MODELGATE_GATEWAY_DISCOVERY_INTERVAL_MS: v }).gateway;
    expect(every('600000').discovery_interval_ms).toBe(600_000);
    expect(every('0').discovery_interval_ms).toBe(0);
    for (const bad of ['-1', '1.5', '604800001'])
      expect(() => every(bad), bad).toThrow(/gateway\.discovery_interval_ms/);
  });

  it('lists every problem at once and hides secrets', () => {
    const f = yamlFile('server:\n  port: 99999\n  bogus: 1\nauth:\n  root_password: 12\n');
    try {
      loadConfig({ MODELGATE_CONFIG: f, MODELGATE_LOG_LEVEL: 'loud', MODELGATE_NOPE: 'x' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems.join('\n');
      expect(problems).toContain('server.port');
      expect(problems).toContain('bogus');
      expect(problems).toContain('log.level');
      expect(problems).toContain('MODELGATE_NOPE');
      expect((err as ConfigError).problems.length).toBeGreaterThanOrEqual(4);
    }
  });

  it('never echoes a secret value', () => {
    try {
      loadConfig({}, { database: { url: 12345678 }, auth: { root_password: ['hunter2-secret'] } });
      expect.unreachable();
    } catch (err) {
      expect((err as Error).message).not.toContain('hunter2-secret');
      expect((err as Error).message).toContain('auth.root_password');
    }
  });

  it('turns provider keys in the environment into upstreams', () => {
    const c = loadConfig({ OPENAI_API_KEY: 'sk-a,sk-b', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(c.channels).toHaveLength(1);
    expect(c.channels[0]).toMatchObject({
      name: 'env-openai',
      kind: 'openai-compatible',
      base_url: 'http://127.0.0.1:9/v1',
      keys: ['sk-a', 'sk-b'],
    });
  });

  it('refuses two channels of one name, naming both positions (the last one used to win)', () => {
    const f = yamlFile(
      [
        'channels:',
        '  - { name: local, kind: openai-compatible }',
        '  - { name: other, kind: openai-compatible }',
        '  - { name: remote, kind: anthropic }',
        '  - { name: " local ", kind: openai-compatible, base_url: "http://127.0.0.1:9/v1" }',
        '  - { name: remote, kind: anthropic }',
        '  - { name: Local, kind: openai-compatible }',
      ].join('\n'),
    );
    // Names compare as stored: trimmed, case-sensitive ("Local" is another channel).
    expect(problemsOf({ MODELGATE_CONFIG: f })).toEqual([
      'channels.3.name: "local" is already used by channels.0',
      'channels.4.name: "remote" is already used by channels.2',
    ]);
  });

  it('refuses a config channel that takes the name of an environment shortcut', () => {
    const channels = [
      { name: 'mine', kind: 'openai-compatible' },
      { name: 'env-openai', kind: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1' },
    ];
    expect(problemsOf({ OPENAI_API_KEY: 'sk-a', ANTHROPIC_API_KEY: 'sk-b' }, { channels })).toEqual([
      'channels.1.name: "env-openai" is already used by the upstream that OPENAI_API_KEY declares',
    ]);
    // Without the variable, the file's entry is the only one of that name.
    expect(loadConfig({}, { channels }).channels.map((c) => c.name)).toEqual(['mine', 'env-openai']);
  });

  it('reports a channels setting that is not a list even when a shortcut declares an upstream', () => {
    expect(() => loadConfig({ OPENAI_API_KEY: 'sk-a' }, { channels: { name: 'x' } })).toThrow(ConfigError);
  });

  it('names the declaration a channel check refuses (file position, or the environment upstream)', () => {
    const channels = [
      { name: 'ok', kind: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1' },
      { name: 'slow', kind: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1', settings: { rpm: 0 } },
    ];
    const env = { OPENAI_API_KEY: 'sk-a', OPENAI_BASE_URL: 'ftp://127.0.0.1/v1' };
    expect(problemsOf(env, { channels })).toEqual([
      'channels.1.settings.rpm: must be an integer >= 1',
      'upstream env-openai (environment): base_url: must be an absolute http(s) URL',
    ]);
  });

  it('refuses declared headers, keys and base URLs the wire cannot carry, naming their place', () => {
    const at = 'http://127.0.0.1:9/v1';
    const channels = [
      {
        name: 'a',
        kind: 'openai-compatible',
        base_url: at,
        settings: { headers: { 'X-A': 'v\r\nX-Injected: 1' } },
      },
      { name: 'b', kind: 'openai-compatible', base_url: at, settings: { headers: { 'X A:': 'v' } } },
      { name: 'c', kind: 'openai-compatible', base_url: at, settings: { headers: { Host: 'elsewhere' } } },
      { name: 'd', kind: 'openai-compatible', base_url: at, keys: ['k\r\nX-Inj: 1'] },
      { name: 'e', kind: 'openai-compatible', base_url: `${at}?api_key=SECRETQ` },
    ];
    const env = { OPENAI_API_KEY: 'sk-a', OPENAI_BASE_URL: 'https://api.example.com/v1#x' };
    const problems = problemsOf(env, { channels });
    expect(problems).toEqual([
      'channels.0.settings.headers.X-A: must not contain line breaks',
      "channels.1.settings.headers.X A:: not a valid header name (letters, digits and !#$%&'*+-.^_`|~ only; no spaces or colons)",
      'channels.2.settings.headers.Host: cannot be set per channel: the gateway sets it from base_url',
      'channels.3.keys.0: must not contain line breaks',
      'channels.4.base_url: must not carry a query string or fragment (request paths are appended to it); put API keys in keys and other credentials in settings.headers',
      'upstream env-openai (environment): base_url: must not carry a query string or fragment (request paths are appended to it); put API keys in keys and other credentials in settings.headers',
    ]);
    expect(problems.join('\n')).not.toContain('SECRETQ');
  });

  it('refuses a declared channel name with a line break, another control character, a bidi control or an invisible character, naming its place', () => {
    const channels = [
      { name: 'local\nvllm', kind: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1' },
      { name: 'a\u001Bb', kind: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1' },
      { name: 'abc\u202Etxt', kind: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1' },
      { name: 'open\u200Bai', kind: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1' },
    ];
    expect(problemsOf({}, { channels })).toEqual([
      'channels.0.name: must not contain control characters or line breaks (found U+000A)',
      'channels.1.name: must not contain control characters or line breaks (found U+001B)',
      'channels.2.name: must not contain control, invisible or bidi override characters (found U+202E)',
      'channels.3.name: must not contain control, invisible or bidi override characters (found U+200B)',
    ]);
  });

  it("refuses a channel's settings.provider that is not a provider name, naming its place", () => {
    const channels = [
      {
        name: 'named',
        kind: 'openai-compatible',
        base_url: 'http://127.0.0.1:9/v1',
        settings: { provider: 7 },
      },
    ];
    expect(() => loadConfig({}, { channels })).toThrow(
      /channels\.0\.settings\.provider: must be a provider name/,
    );
  });

  it('reads a section left empty in the file (every entry commented out) as absent', () => {
    const file = yamlFile('server:\nchannels:\n#  - name: later\n#    kind: openai-compatible\nmodels:\n');
    const c = loadConfig({ MODELGATE_CONFIG: file, OPENAI_API_KEY: 'sk-a' });
    expect(c.channels.map((ch) => ch.name)).toEqual(['env-openai']);
    expect(c.models).toEqual([]);
    expect(c.server).toEqual(loadConfig({}).server);
  });

  it('sets the PostgreSQL statement and connection timeouts (30 s and 10 s by default) from the environment', () => {
    expect(loadConfig({}).database).toMatchObject({
      statement_timeout_ms: 30_000,
      connect_timeout_ms: 10_000,
    });
    const c = loadConfig({
      MODELGATE_DATABASE_STATEMENT_TIMEOUT_MS: '5000',
      MODELGATE_DATABASE_CONNECT_TIMEOUT_MS: '0',
    });
    expect(c.database).toMatchObject({ statement_timeout_ms: 5000, connect_timeout_ms: 0 });
    expect(() => loadConfig({ MODELGATE_DATABASE_STATEMENT_TIMEOUT_MS: '-1' })).toThrow(
      /database\.statement_timeout_ms/,
    );
  });

  it('refuses a model price above 9007199254 USD per unit (docs/quotas.md)', () => {
    const models = [{ id: 'a/b', pricing: { prompt: '0.000001', completion: 1e300 } }];
    expect(() => loadConfig({}, { models })).toThrow(
      /models\.0\.pricing\.completion: must be a number from 0 to 9007199254 \(USD per unit\)/,
    );
    expect(
      loadConfig({}, { models: [{ id: 'a/b', pricing: { request: '9007199254' } }] }).models,
    ).toHaveLength(1);
  });

  it('refuses a model whose modalities are not known ones, naming the model and each bad value, as the admin API does', () => {
    const f = yamlFile(
      [
        'models:',
        '  - id: acme/fine',
        '    input_modalities: [text, image]',
        '    output_modalities: [embeddings]',
        '  - id: acme/vision',
        '    input_modalities: [text, picture, Image]',
        '    output_modalities: [text, embedding]',
        '  - id: acme/typo',
        '    output_modalities: ["speach"]',
      ].join('\n'),
    );
    const input = 'use text, image, file, audio or video';
    const output = 'use text, image, embeddings, audio, video, rerank, speech or transcription';
    expect(problemsOf({ MODELGATE_CONFIG: f })).toEqual([
      `models.1.input_modalities (model "acme/vision"): "picture" is not a known modality; ${input}`,
      `models.1.input_modalities (model "acme/vision"): "Image" is not a known modality; ${input}`,
      `models.1.output_modalities (model "acme/vision"): "embedding" is not a known modality; ${output}`,
      `models.2.output_modalities (model "acme/typo"): "speach" is not a known modality; ${output}`,
    ]);
    // A list that is not of strings is reported once, by the schema.
    expect(() => loadConfig({}, { models: [{ id: 'a/b', input_modalities: [{ text: true }] }] })).toThrow(
      /^invalid configuration:\n {2}- models\.0\.input_modalities\.0: [^\n]*$/,
    );
    const good = loadConfig({}, { models: [{ id: 'a/b', output_modalities: ['rerank'] }] });
    expect(good.models[0]!.output_modalities).toEqual(['rerank']);
  });

  it('refuses a model with an empty modality list, as the admin API answers [] with a 400 (docs/models.md)', () => {
    const f = yamlFile(
      [
        'models:',
        '  - id: acme/none-in',
        '    input_modalities: []',
        '  - id: acme/none-out',
        '    input_modalities: [text]',
        '    output_modalities: []',
      ].join('\n'),
    );
    expect(problemsOf({ MODELGATE_CONFIG: f })).toEqual([
      'models.0.input_modalities (model "acme/none-in"): must name at least one modality (text, image, file, audio or video); leave it out, or null over the API, for the default list',
      'models.1.output_modalities (model "acme/none-out"): must name at least one modality (text, image, embeddings, audio, video, rerank, speech or transcription); leave it out, or null over the API, for the default list',
    ]);
    // The start stops: loadConfig throws the whole list in its message.
    expect(() => loadConfig({ MODELGATE_CONFIG: f })).toThrow(
      /models\.0\.input_modalities \(model "acme\/none-in"\): must name at least one modality/,
    );
    // Left out, the list is the lower layers' (text in and out): that loads.
    expect(loadConfig({}, { models: [{ id: 'acme/unset' }] }).models).toHaveLength(1);
  });

  it("checks a channel's settings.pricing as model prices are checked, naming each bad field", () => {
    const f = yamlFile(
      [
        'channels:',
        '  - name: ok',
        '    kind: openai-compatible',
        '    settings:',
        '      pricing:',
        '        acme/m: { prompt: "0.0000001", completion: 2e-7 }',
        '        not/listed/yet: { request: 0 }',
        '  - name: bad',
        '    kind: openai-compatible',
        '    settings:',
        '      pricing:',
        '        acme/m: { prompt: -1, completion: 1e300, request: "0x10", Image: "1" }',
        '        acme/n: "0.1"',
        '  - name: worse',
        '    kind: openai-compatible',
        '    settings: { pricing: [1] }',
      ].join('\n'),
    );
    expect(problemsOf({ MODELGATE_CONFIG: f })).toEqual([
      'channels.1.settings.pricing["acme/m"].prompt: must be a non-negative number or numeric string',
      'channels.1.settings.pricing["acme/m"].completion: must be a number from 0 to 9007199254 (USD per unit)',
      'channels.1.settings.pricing["acme/m"].request: must be a non-negative number or numeric string',
      'channels.1.settings.pricing["acme/m"].Image: is not a price key (lowercase letters, digits and _, as in prompt or input_cache_read)',
      'channels.1.settings.pricing["acme/n"]: must be an object of prices (USD per token, request or image)',
      'channels.2.settings.pricing: must map model ids to prices ({"<model id>": {"prompt": "0.000001", ...}})',
    ]);
    // Ids the registry does not know (yet) are allowed: a channel's models may be discovered later.
    const good = loadConfig(
      {},
      {
        channels: [
          { name: 'ok', kind: 'openai-compatible', settings: { pricing: { 'x/y': { prompt: 1 } } } },
        ],
      },
    );
    expect(good.channels[0]!.settings).toEqual({ pricing: { 'x/y': { prompt: 1 } } });
  });

  it('reports an unreadable file', () => {
    expect(() => loadConfig({ MODELGATE_CONFIG: '/nonexistent/x.yaml' })).toThrow(/nonexistent/);
  });

  it('refuses numbers that are not written as numbers instead of truncating or guessing them', () => {
    expect(problemsOf({ MODELGATE_PORT: '3000.9' })).toEqual([
      'server.port (from MODELGATE_PORT): must be an integer',
    ]);
    expect(problemsOf({ MODELGATE_GATEWAY_MAX_ATTEMPTS: 'true' })).toEqual([
      'gateway.max_attempts (from MODELGATE_GATEWAY_MAX_ATTEMPTS): must be an integer',
    ]);
    expect(problemsOf({ MODELGATE_SERVER_SHUTDOWN_GRACE_MS: '0x10' })).toEqual([
      'server.shutdown_grace_ms (from MODELGATE_SERVER_SHUTDOWN_GRACE_MS): must be an integer',
    ]);
    expect(problemsOf({ MODELGATE_GATEWAY_CLIENT_STALL_MS: ' ' })).toEqual([
      'gateway.client_stall_ms (from MODELGATE_GATEWAY_CLIENT_STALL_MS): must be an integer',
    ]);
    expect(problemsOf({}, { server: { port: 3000.5 } })).toEqual(['server.port: must be an integer']);
    expect(problemsOf({}, { channels: [{ name: 'a', kind: 'openai-compatible', weight: 1.5 }] })).toEqual([
      'channels.0.weight: must be an integer',
    ]);
    // Numbers written as numbers still read, with spaces around and a sign.
    expect(loadConfig({ MODELGATE_PORT: ' 3001 ', MODELGATE_GATEWAY_MAX_ATTEMPTS: '+4' }).server.port).toBe(
      3001,
    );
  });

  it('the most specific name of a setting wins, whatever the order of the environment', () => {
    const orders = [
      { PORT: '1001', MODELGATE_PORT: '1002', MODELGATE_SERVER_PORT: '1003' },
      { MODELGATE_SERVER_PORT: '1003', MODELGATE_PORT: '1002', PORT: '1001' },
      { MODELGATE_PORT: '1002', MODELGATE_SERVER_PORT: '1003', PORT: '1001' },
    ];
    for (const env of orders) expect(loadConfig(env).server.port).toBe(1003);
    expect(loadConfig({ MODELGATE_PORT: '1002', PORT: '1001' }).server.port).toBe(1002);
    expect(loadConfig({ PORT: '1001', MODELGATE_PORT: '1002' }).server.port).toBe(1002);
  });

  it("ignores the names clients keep the gateway's address and key in", () => {
    const c = loadConfig({ MODELGATE_API_KEY: 'sk-mg-abc', MODELGATE_BASE_URL: 'http://localhost:3000/v1' });
    expect(c.server.port).toBe(3000);
  });

  it('server.trust_proxy: a boolean, or the addresses of the proxies to believe', () => {
    expect(loadConfig({}).server.trust_proxy).toBe(false);
    expect(loadConfig({ MODELGATE_SERVER_TRUST_PROXY: 'true' }).server.trust_proxy).toBe(true);
    expect(loadConfig({ MODELGATE_SERVER_TRUST_PROXY: '0' }).server.trust_proxy).toBe(false);
    expect(loadConfig({ MODELGATE_SERVER_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).server.trust_proxy).toBe(
      '10.0.0.0/8, 127.0.0.1',
    );
    expect(loadConfig({}, { server: { trust_proxy: 'uniquelocal' } }).server.trust_proxy).toBe('uniquelocal');
  });

  it('refuses a server.trust_proxy Fastify cannot read, at load, naming the setting and the entry', () => {
    const fix =
      "; use true, false, or the proxies' addresses or CIDR ranges, comma-separated (or loopback, linklocal, uniquelocal)";
    expect(problemsOf({ MODELGATE_SERVER_TRUST_PROXY: 'notanip' })).toEqual([
      `server.trust_proxy (from MODELGATE_SERVER_TRUST_PROXY): invalid IP address: notanip${fix}`,
    ]);
    expect(problemsOf({ MODELGATE_SERVER_TRUST_PROXY: '127.0.0.1, 10.0.0.0/33' })).toEqual([
      `server.trust_proxy (from MODELGATE_SERVER_TRUST_PROXY): invalid range on address: 10.0.0.0/33${fix}`,
    ]);
    expect(problemsOf({}, { server: { trust_proxy: 'loopback, proxy.internal' } })).toEqual([
      `server.trust_proxy: invalid IP address: proxy.internal${fix}`,
    ]);
    expect(problemsOf({}, { server: { trust_proxy: '10.0.0.1,' } })).toEqual([
      `server.trust_proxy: an empty entry in the list${fix}`,
    ]);
    // A hop count (Express's `trust proxy: 2`) would read as the address 0.0.0.2.
    const hops = 'a hop count is not offered (Fastify trusts no proxy for a number)';
    expect(problemsOf({}, { server: { trust_proxy: 2 } })).toEqual([`server.trust_proxy: ${hops}${fix}`]);
    expect(problemsOf({ MODELGATE_SERVER_TRUST_PROXY: '2' })).toEqual([
      `server.trust_proxy (from MODELGATE_SERVER_TRUST_PROXY): ${hops}${fix}`,
    ]);
    for (const ok of [
      '::1',
      '10.0.0.1/255.0.0.0',
      'loopback, linklocal, uniquelocal',
      'fd00::/8, 192.168.0.0/16',
    ])
      expect(problemsOf({ MODELGATE_SERVER_TRUST_PROXY: ok }), ok).toEqual([]);
  });

  it('refuses a database.url of a scheme other than postgres, naming the scheme and never the value', () => {
    const fix = 'use a postgres:// or postgresql:// URL, or a SQLite file path';
    expect(problemsOf({ DATABASE_URL: 'mysql://u:pw1234@h/x' })).toEqual([
      `database.url (from DATABASE_URL): mysql:// is not a database the gateway opens; ${fix}`,
    ]);
    for (const [url, scheme] of [
      ['postgress://u:pw1234@h/db', 'postgress'],
      ['pg://u:pw1234@h/db', 'pg'],
      ['file:///var/lib/pw1234.db', 'file'],
      ['HTTP://pw1234', 'http'],
    ]) {
      const problems = problemsOf({ MODELGATE_DATABASE_URL: url! });
      expect(problems, url).toEqual([
        `database.url (from MODELGATE_DATABASE_URL): ${scheme}:// is not a database the gateway opens; ${fix}`,
      ]);
    }
    expect(problemsOf({}, { database: { url: 'mariadb://u:pw1234@h/x' } })).toEqual([
      `database.url: mariadb:// is not a database the gateway opens; ${fix}`,
    ]);
    for (const ok of [
      './data/x.db',
      '/abs/x.db',
      'x.db',
      ':memory:',
      'sqlite:./x.db',
      'sqlite:///abs/x.db',
      'postgres://u:pw@h/db',
      'postgresql://h/db',
      'POSTGRES://h/db',
    ])
      expect(loadConfig({ DATABASE_URL: ok }).database.url, ok).toBe(ok);
  });

  it('refuses a redis.url of a scheme other than redis or rediss, never echoing the value', () => {
    const fix = 'use a redis:// or rediss:// (TLS) URL, or a unix socket path';
    expect(problemsOf({ REDIS_URL: 'http://x:1' })).toEqual([
      `redis.url (from REDIS_URL): http:// is not a Redis URL; ${fix}`,
    ]);
    expect(problemsOf({}, { redis: { url: 'tcp://:pw1234@redis:6379' } })).toEqual([
      `redis.url: tcp:// is not a Redis URL; ${fix}`,
    ]);
    expect(problemsOf({ REDIS_URL: 'redis://:pw1234@redis:port/0' })).toEqual([
      `redis.url (from REDIS_URL): not a valid URL; ${fix}`,
    ]);
    for (const ok of ['', 'redis://redis:6379/0', 'rediss://:pw@cache.example:6380', '/var/run/redis.sock'])
      expect(loadConfig({}, { redis: { url: ok } }).redis.url, ok).toBe(ok);
    // ioredis turns TLS on for a lowercase rediss:// only.
    expect(loadConfig({ REDIS_URL: 'REDISS://cache.example:6380' }).redis.url).toBe(
      'rediss://cache.example:6380',
    );
  });

  it('says which values a setting of fixed values takes, once', () => {
    const levels = 'must be one of fatal, error, warn, info, debug, trace, silent';
    expect(problemsOf({ MODELGATE_LOG_LEVEL: 'verbose' })).toEqual([
      `log.level (from MODELGATE_LOG_LEVEL): ${levels}`,
    ]);
    expect(problemsOf({}, { log: { level: 'verbose' } })).toEqual([`log.level: ${levels}`]);
    expect(problemsOf({ MODELGATE_AUTH_COOKIE_SECURE: 'maybe' })).toEqual([
      'auth.cookie_secure (from MODELGATE_AUTH_COOKIE_SECURE): must be one of auto, true, false',
    ]);
    const models = (v: unknown) => ({ models: [{ id: 'a/b', max_completion_tokens: v }] });
    expect(problemsOf({}, models('x'))).toEqual([
      'models.0.max_completion_tokens: must be an integer >= 1 or null',
    ]);
    // A value of one branch's kind is told what that branch wants.
    expect(problemsOf({}, models(-1))).toEqual(['models.0.max_completion_tokens: must be >= 1']);
    expect(problemsOf({}, { server: { trust_proxy: '' } })).toEqual([
      'server.trust_proxy: must not be empty',
    ]);
  });

  it('lists every problem of a configuration with many, each setting once and in words', () => {
    // The schema library stops at 8 errors by default: the five refusals of log.level's
    // branches filled it, so the union's own line never came and later settings went unnamed.
    const problems = problemsOf({
      DATABASE_URL: '/tmp/x.db',
      MODELGATE_AUTH_COOKIE_SECURE: 'maybe',
      MODELGATE_LOG_LEVEL: 'loud',
      MODELGATE_CATALOG_SEED: 'maybe',
      MODELGATE_GATEWAY_DISCOVER_MODELS: 'perhaps',
      MODELGATE_METRICS_ENABLED: 'yes',
      MODELGATE_SERVER_SERVE_CONSOLE: 'sure',
      MODELGATE_SERVER_PORT: '70000',
      MODELGATE_GATEWAY_MAX_ATTEMPTS: '0',
      MODELGATE_AUTH_SESSION_TTL_HOURS: '0',
      MODELGATE_LOG_REQUEST_LOGS_BATCH: '0',
      MODELGATE_DATABASE_POOL_SIZE: '0',
      MODELGATE_GATEWAY_CIRCUIT_FAILURES: '0',
    });
    expect(problems).toEqual([
      'server.port (from MODELGATE_SERVER_PORT): must be <= 65535',
      'server.serve_console (from MODELGATE_SERVER_SERVE_CONSOLE): must be boolean',
      'database.pool_size (from MODELGATE_DATABASE_POOL_SIZE): must be >= 1',
      'auth.session_ttl_hours (from MODELGATE_AUTH_SESSION_TTL_HOURS): must be >= 1',
      'auth.cookie_secure (from MODELGATE_AUTH_COOKIE_SECURE): must be one of auto, true, false',
      'log.level (from MODELGATE_LOG_LEVEL): must be one of fatal, error, warn, info, debug, trace, silent',
      'log.request_logs_batch (from MODELGATE_LOG_REQUEST_LOGS_BATCH): must be >= 1',
      'catalog.seed (from MODELGATE_CATALOG_SEED): must be boolean',
      'metrics.enabled (from MODELGATE_METRICS_ENABLED): must be boolean',
      'gateway.max_attempts (from MODELGATE_GATEWAY_MAX_ATTEMPTS): must be >= 1',
      'gateway.circuit_failures (from MODELGATE_GATEWAY_CIRCUIT_FAILURES): must be >= 1',
      'gateway.discover_models (from MODELGATE_GATEWAY_DISCOVER_MODELS): must be boolean',
    ]);
    // Forty bad declarations are forty lines, not the first few.
    const models = Array.from({ length: 40 }, (_, i) => ({ id: `m/${i}`, context_length: 0 }));
    const many = problemsOf({}, { models });
    expect(many).toHaveLength(40);
    expect(many[39]).toBe('models.39.context_length: must be >= 1');
    // Each item's union is told about its own value, not another item's.
    const limits = [
      { id: 'a/b', max_completion_tokens: 'x' },
      { id: 'c/d', max_completion_tokens: -1 },
    ];
    expect(problemsOf({}, { models: limits })).toEqual([
      'models.0.max_completion_tokens: must be an integer >= 1 or null',
      'models.1.max_completion_tokens: must be >= 1',
    ]);
  });

  it('reports an unknown setting once, by name', () => {
    expect(problemsOf({}, { server: { bogus_key: 1 } })).toEqual(['server: unknown setting(s) bogus_key']);
    expect(problemsOf({}, { channels: [{ name: 'a', kind: 'openai-compatible', bogus: 1 }] })).toEqual([
      'channels.0: unknown setting(s) bogus',
    ]);
  });

  it('names the environment variable a refused value came from, the one that won', () => {
    expect(problemsOf({ PORT: '99999' })).toEqual(['server.port (from PORT): must be <= 65535']);
    expect(problemsOf({ PORT: '1', MODELGATE_SERVER_PORT: '70000' })).toEqual([
      'server.port (from MODELGATE_SERVER_PORT): must be <= 65535',
    ]);
    expect(problemsOf({ MODELGATE_METRICS_ENABLED: 'yes' })).toEqual([
      'metrics.enabled (from MODELGATE_METRICS_ENABLED): must be boolean',
    ]);
    expect(problemsOf({ MODELGATE_ROOT_PASSWORD: 'x' }, { auth: { root_password: 1 } })).toEqual([]);
    // The file's value is named by its place only.
    expect(problemsOf({}, { server: { port: 99999 } })).toEqual(['server.port: must be <= 65535']);
  });
});

describe('loadConfig converts the environment only', () => {
  const model = (v: unknown) => `models:\n  - id: a/b\n    max_completion_tokens: ${v}\n`;

  it('refuses a file value of the wrong type instead of converting it (0 used to become null, unlimited)', () => {
    expect(problemsOf({ MODELGATE_CONFIG: yamlFile(model(0)) })).toEqual([
      'models.0.max_completion_tokens: must be >= 1',
    ]);
    expect(problemsOf({ MODELGATE_CONFIG: yamlFile(model(1.5)) })).toEqual([
      'models.0.max_completion_tokens: must be an integer >= 1 or null',
    ]);
    expect(problemsOf({}, { models: [{ id: 'a/b', max_completion_tokens: 0 }] })).toEqual([
      'models.0.max_completion_tokens: must be >= 1',
    ]);
    expect(loadConfig({ MODELGATE_CONFIG: yamlFile(model('null')) }).models[0]!.max_completion_tokens).toBe(
      null,
    );
    expect(loadConfig({ MODELGATE_CONFIG: yamlFile(model(8192)) }).models[0]!.max_completion_tokens).toBe(
      8192,
    );
  });

  it('refuses text where the file means a number or a boolean, and a number where it means text', () => {
    const f = yamlFile(
      [
        'server:',
        '  port: "3000"',
        '  serve_console: "true"',
        'metrics:',
        '  enabled: 1',
        'gateway:',
        '  default_model: 12',
        'channels:',
        '  - name: a',
        '    kind: openai-compatible',
        '    keys: [0123]',
        '    priority: "5"',
        '',
      ].join('\n'),
    );
    expect(problemsOf({ MODELGATE_CONFIG: f })).toEqual([
      'server.port: must be an integer, written without quotes',
      'channels.0.priority: must be an integer, written without quotes',
      'server.serve_console: must be boolean',
      'metrics.enabled: must be boolean',
      'gateway.default_model: must be string',
      'channels.0.keys.0: must be string',
    ]);
    // A secret is named, its value not echoed.
    const secret = yamlFile('auth:\n  root_password: 12345678\n');
    expect(problemsOf({ MODELGATE_CONFIG: secret })).toEqual([
      'auth.root_password: must be string (value hidden)',
    ]);
  });

  it('still reads the environment, which is text, as each setting’s type', () => {
    const c = loadConfig({
      MODELGATE_PORT: '3001',
      MODELGATE_SERVER_SERVE_CONSOLE: 'false',
      MODELGATE_METRICS_ENABLED: '0',
      MODELGATE_AUTH_COOKIE_SECURE: 'true',
      MODELGATE_GATEWAY_DEFAULT_MODEL: '12',
      MODELGATE_GATEWAY_IMAGE_ALLOW_HOSTS: 'a.example, b.example',
    });
    expect(c.server.port).toBe(3001);
    expect(c.server.serve_console).toBe(false);
    expect(c.metrics.enabled).toBe(false);
    expect(c.auth.cookie_secure).toBe(true);
    expect(c.gateway.default_model).toBe('12');
    expect(c.gateway.image_allow_hosts).toEqual(['a.example', 'b.example']);
    // The environment over a file value the file alone would have been refused for.
    const f = yamlFile('server:\n  port: "3000"\n');
    expect(loadConfig({ MODELGATE_CONFIG: f, PORT: '3002' }).server.port).toBe(3002);
  });

  it('leaves the overrides it was given as they were', () => {
    const overrides = { server: { port: 0 }, channels: [{ name: 'a', kind: 'openai-compatible' }] };
    const before = structuredClone(overrides);
    const c = loadConfig({ MODELGATE_SERVER_HOST: '0.0.0.0', OPENAI_API_KEY: 'sk-x' }, overrides);
    expect(c.server.host).toBe('0.0.0.0');
    expect(c.channels).toHaveLength(2);
    expect(overrides).toEqual(before);
  });

  it('names an unknown section at the top level in words, not as (root)', () => {
    const f = yamlFile('server:\n  port: 3000\nfoo: 1\nloggin:\n  level: info\n');
    const sections =
      'server, database, redis, auth, log, catalog, limits, metrics, gateway, channels, models';
    expect(problemsOf({ MODELGATE_CONFIG: f })).toEqual([
      `top level: unknown setting(s) foo, loggin (the sections are ${sections})`,
    ]);
  });
});
