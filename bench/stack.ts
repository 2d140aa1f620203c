import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Target } from './load.js';
import { benchServer, cleanEnv, gatewayEntry, type Proc, pinSelf, startNode } from './procs.js';

/**
 * Core layout (the machine has 2): the process under test, gateway or baseline, gets core 0 to
 * itself; the fake upstream and the load generator (this process, pinned by `startStack`)
 * share core 1. Both proxies live on core 0 but are driven one at a time, so each has the core
 * while it is measured.
 * With PostgreSQL + Redis, the database servers are not pinned: pinned to core 1 they starve
 * the load generator (the gateway then measures ~30% below its capacity), on core 0 they would
 * take the gateway's. They float, taking CPU from both; their CPU per request is reported on its
 * own (`DB_SERVERS`).
 */
export const PROXY_CPUS = '0';
export const LOAD_CPUS = '1';
/** Command names of the database servers the PostgreSQL + Redis runs use. */
export const DB_SERVERS = ['postgres', 'redis-server'] as const;

export interface StackOptions {
  pg?: boolean;
  /** Extra node flags for the gateway (e.g. --cpu-prof), after `npm start`'s own: they override them. */
  gatewayFlags?: string[];
  /** Extra node flags for the baseline proxy. */
  baselineFlags?: string[];
  /** A command that runs the gateway's or the baseline's node (valgrind, for `instructions.ts`). */
  gatewayWrap?: string[];
  baselineWrap?: string[];
  /** How long a proxy may take to print its address (default 60 s for the gateway, 30 s for the baseline). */
  startTimeoutMs?: number;
  withBaseline?: boolean;
  /** Run the compiled output of `buildAll()` instead of tsx. */
  built?: boolean;
  /** Extra environment for the gateway (e.g. MODELGATE_METRICS_ENABLED=false). */
  gatewayEnv?: Record<string, string>;
  /** The bench key's quota in USD; null = unlimited (default 1,000,000, as production keys have one). */
  keyQuota?: number | null;
}

export interface Stack {
  upstream: Proc;
  gateway: Proc;
  baseline?: Proc;
  apiKey: string;
  gatewayKind: string;
  database: string;
  /** The load generator's view of a proxy: its URL, and the API key for the gateway. */
  target(which: 'gateway' | 'baseline'): Target;
  setSlow(ms: number): Promise<void>;
  close(): Promise<void>;
}

const PASSWORD = `bench-${randomBytes(6).toString('hex')}`;

export async function startStack(o: StackOptions = {}): Promise<Stack> {
  const built = o.built === true;
  pinSelf(LOAD_CPUS);
  const upstream = await startNode({
    name: 'fake-upstream',
    args: benchServer('bench/fake-upstream.ts', built),
    env: cleanEnv({ PORT: '0' }),
    cpus: LOAD_CPUS,
    ready: /listening on (http:\S+)/,
  });
  const cleanups: Array<() => Promise<void> | void> = [() => upstream.stop()];
  try {
    const db = o.pg ? await createPgDatabase() : createSqliteFile();
    cleanups.push(db.drop);
    const entry = gatewayEntry(built, o.gatewayFlags);
    const env: Record<string, string> = {
      DATABASE_URL: db.url,
      MODELGATE_PORT: '0',
      MODELGATE_ROOT_PASSWORD: PASSWORD,
      MODELGATE_LOG_LEVEL: 'warn',
      OPENAI_API_KEY: 'x',
      OPENAI_BASE_URL: `${upstream.url}/v1`,
      OPENAI_MODELS: 'bench/model',
    };
    if (o.pg) {
      env.REDIS_URL = 'redis://127.0.0.1:6379/1';
      env.MODELGATE_REDIS_KEY_PREFIX = `mgbench:${Date.now()}:`;
    }
    Object.assign(env, o.gatewayEnv);
    const gateway = await startNode({
      name: 'gateway',
      args: entry.args,
      env: cleanEnv(env),
      cpus: PROXY_CPUS,
      ready: /listening on (http:\S+)/,
      timeoutMs: o.startTimeoutMs ?? 60_000,
      wrap: o.gatewayWrap,
    });
    cleanups.unshift(() => gateway.stop());
    const baseline =
      o.withBaseline === false
        ? undefined
        : await startNode({
            name: 'baseline',
            args: [...(o.baselineFlags ?? []), ...benchServer('bench/baseline-proxy.ts', built)],
            env: cleanEnv({ PORT: '0', UPSTREAM_URL: `${upstream.url}/v1` }),
            cpus: PROXY_CPUS,
            ready: /listening on (http:\S+)/,
            timeoutMs: o.startTimeoutMs ?? 30_000,
            wrap: o.baselineWrap,
          });
    if (baseline) cleanups.unshift(() => baseline.stop());
    const apiKey = await createApiKey(gateway.url, o.keyQuota === undefined ? 1_000_000 : o.keyQuota);
    return {
      upstream,
      gateway,
      baseline,
      apiKey,
      gatewayKind: entry.kind,
      database: o.pg ? 'postgres+redis' : 'sqlite',
      target: (which) => {
        const p = which === 'gateway' ? gateway : baseline;
        if (!p) throw new Error('the stack was started without a baseline');
        const headers: Record<string, string> =
          which === 'gateway' ? { authorization: `Bearer ${apiKey}` } : {};
        return { name: which, url: p.url, headers };
      },
      setSlow: async (ms) => {
        const r = await fetch(`${upstream.url}/__mode`, {
          method: 'POST',
          body: JSON.stringify({ slow_ms: ms }),
        });
        await r.arrayBuffer();
      },
      close: () => runAll(cleanups),
    };
  } catch (err) {
    await runAll(cleanups);
    throw err;
  }
}

async function runAll(fns: Array<() => Promise<void> | void>): Promise<void> {
  for (const fn of fns) {
    try {
      await fn();
    } catch (err) {
      process.stderr.write(`cleanup: ${(err as Error).message}\n`);
    }
  }
}

/** Signs in as root and creates one API key through the HTTP API, as an operator would. */
async function createApiKey(base: string, quota: number | null): Promise<string> {
  const login = await fetch(`${base}/api/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'root', password: PASSWORD }),
  });
  if (!login.ok) throw new Error(`login failed: ${login.status} ${await login.text()}`);
  await login.arrayBuffer();
  const cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const res = await fetch(`${base}/api/key`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ name: 'bench', quota_limit: quota }),
  });
  const json = (await res.json()) as { data?: { key?: string } };
  if (!res.ok || !json.data?.key)
    throw new Error(`key creation failed: ${res.status} ${JSON.stringify(json)}`);
  return json.data.key;
}

/**
 * A fresh SQLite database in a temp dir, removed after the run; with BENCH_KEEP_DB=<dir> a copy
 * is kept there first (its request_logs carry each request's time inside the gateway,
 * `latency_ms`, to set against what the client measured).
 */
function createSqliteFile(): { url: string; drop: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-bench-'));
  const keep = process.env.BENCH_KEEP_DB;
  return {
    url: join(dir, 'bench.db'),
    drop: () => {
      if (keep) cpSync(dir, join(keep, `db-${Date.now()}`), { recursive: true });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function createPgDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const { default: pg } = await import('pg');
  const admin = 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `mgbench_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  return {
    url: `postgres://postgres@127.0.0.1:5432/${name}`,
    drop: async () => {
      const d = new pg.Client({ connectionString: admin });
      await d.connect();
      await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await d.end();
    },
  };
}
