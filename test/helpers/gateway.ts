import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { loadConfig } from '../../src/config/load-config.js';
import type { Config } from '../../src/config/schema.js';
import { type RunningGateway, startGateway } from '../../src/main.js';
import { createTestDatabase, TEST_REDIS_URL } from './databases.js';

export const ROOT_PASSWORD = 'root-password-for-tests';

export interface TestGateway extends RunningGateway {
  databaseUrl: string;
  /** fetch against the gateway with JSON in and out. */
  call(
    method: string,
    path: string,
    opts?: CallOptions,
  ): Promise<{ status: number; body: any; headers: Headers }>;
  /** A session cookie for `username`. */
  login(username?: string, password?: string): Promise<string>;
  close(): Promise<void>;
}

export interface CallOptions {
  body?: unknown;
  rawBody?: string;
  token?: string;
  cookie?: string;
  headers?: Record<string, string>;
}

/**
 * Starts a real gateway on a loopback port with fresh storage (SQLite, or PostgreSQL under
 * `npm run test:pg`). Pass `databaseUrl` to start a second instance on the same database,
 * `env` for environment variables read by the configuration (`OPENAI_API_KEY`, ...), `log` for a
 * logger of the test's own.
 */
export async function startTestGateway(
  overrides: Record<string, any> = {},
  opts: { databaseUrl?: string; redis?: boolean; env?: Record<string, string>; log?: FastifyBaseLogger } = {},
): Promise<TestGateway> {
  const db = opts.databaseUrl ? { url: opts.databaseUrl, drop: async () => {} } : await createTestDatabase();
  const config: Config = loadConfig(
    opts.env ?? {},
    deepMerge(
      {
        server: { host: '127.0.0.1', port: 0, serve_console: false },
        database: { url: db.url, pool_size: 5 },
        // One Redis serves every test file at once, and key and user ids restart at 1 in each
        // test database: keyed by the database, a file's rate-limit buckets (a key's tokens per
        // minute) are not charged by another's requests. A second instance on the same database
        // (`databaseUrl`) shares them, as instances do; a test sets its own `key_prefix` to share
        // across databases.
        redis: {
          url: opts.redis === false ? '' : TEST_REDIS_URL,
          key_prefix: `mg:${createHash('sha256').update(db.url).digest('hex').slice(0, 12)}:`,
        },
        // Test files sign in often, from one address, sharing one Redis: the limit is tested apart
        // (user-session.test.ts). Likewise /api writes: root is user 1 in every test database, so
        // all files running at once on one Redis would share one allowance (api-write-limit.test.ts).
        auth: { root_password: ROOT_PASSWORD, login_rate_per_minute: 0, api_write_rate_per_minute: 0 },
        log: { level: process.env.TEST_LOG_LEVEL ?? 'silent' },
        catalog: { seed: false },
      },
      overrides,
    ),
  );
  const gw = await startGateway(config, opts.log);
  const call: TestGateway['call'] = async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (o.body !== undefined || o.rawBody !== undefined) headers['content-type'] ??= 'application/json';
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    if (o.cookie) headers.cookie = o.cookie;
    const res = await fetch(gw.url + path, {
      method,
      headers,
      body: o.rawBody ?? (o.body !== undefined ? JSON.stringify(o.body) : undefined),
    });
    const text = await res.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {}
    return { status: res.status, body, headers: res.headers };
  };
  return {
    ...gw,
    databaseUrl: db.url,
    call,
    async login(username = 'root', password = ROOT_PASSWORD) {
      const res = await fetch(`${gw.url}/api/user/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username, password }),
      });
      if (res.status !== 200) throw new Error(`login ${username} failed: ${res.status} ${await res.text()}`);
      const cookie = res.headers.get('set-cookie') ?? '';
      return cookie.split(';')[0]!;
    },
    async close() {
      await gw.stop();
      await db.drop();
    },
  };
}

function deepMerge(a: Record<string, any>, b: Record<string, any>): Record<string, any> {
  const out: Record<string, any> = { ...a };
  for (const [k, v] of Object.entries(b))
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && out[k] && typeof out[k] === 'object'
        ? deepMerge(out[k], v)
        : v;
  return out;
}
