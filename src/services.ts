import type { FastifyBaseLogger } from 'fastify';
import { ApiKeyService } from './access/api-keys.js';
import { DeferredSettleLedger } from './access/quota/deferred-ledger.js';
import type { QuotaLedger } from './access/quota/quota-ledger.js';
import { createRateLimiter } from './access/rate-limit/create-rate-limiter.js';
import type { RateLimiter } from './access/rate-limit/rate-limiter.js';
import { UserService } from './access/users.js';
import { CatalogService } from './catalog/catalog-service.js';
import { seedCatalog } from './catalog/seed-apps.js';
import type { Config } from './config/schema.js';
import { type ChatServices, createChatServices } from './gateway/completions/chat-wiring.js';
import { createEmbeddingsService, type EmbeddingsService } from './gateway/embeddings/embeddings-service.js';
import { createRegistry, type Registry } from './gateway/registry/index.js';
import { sharedUpstreamClient } from './gateway/upstream/upstream-client.js';
import { RequestLogWriter } from './gateway/usage/request-log-writer.js';
import { ApiKeysRepo } from './store/api-keys-repo.js';
import { AppsRepo } from './store/apps-repo.js';
import { ChannelsRepo } from './store/channels-repo.js';
import { connectErrorDetail, scrubPasswords, urlWithoutPassword } from './store/connect-errors.js';
import { CredentialsRepo } from './store/credentials-repo.js';
import { type Database, openDatabase } from './store/database.js';
import { isDatabaseUnavailable } from './store/db-errors.js';
import { LogsRepo } from './store/logs-repo.js';
import { migrateToLatest } from './store/migrate.js';
import { ModelsRepo } from './store/models-repo.js';
import { createInvalidationBus, dropCaches, type InvalidationBus } from './store/pubsub.js';
import { closeRedis, openRedis, type RedisClient, redisProblem, redisProblemKind } from './store/redis.js';
import { createUsageStore } from './store/usage-store.js';
import { UsersRepo } from './store/users-repo.js';

/** Rows per SQLite transaction when a request-log batch is written (see RequestLogWriter). */
const SQLITE_ROWS_PER_WRITE = 50;

/**
 * Everything a request can reach, built once per process from the configuration. Tests build
 * one per gateway they start; `close()` releases pools in reverse order.
 */
export interface Services {
  readonly config: Config;
  readonly database: Database;
  /** The migrations this start applied, by name, in order; empty when the database was up to date. */
  readonly appliedMigrations: readonly string[];
  readonly users: UserService;
  readonly apiKeys: ApiKeyService;
  readonly repos: { users: UsersRepo; apiKeys: ApiKeysRepo; credentials: CredentialsRepo; logs: LogsRepo };
  /**
   * Key and user quotas: reserve before an upstream call (on the database, leased ahead for busy keys), settle
   * after it (in a finally; queued and written with the request logs).
   */
  readonly quota: QuotaLedger;
  /**
   * Request logs and quota settlements, buffered and written together in batches; flushed by a
   * closer on shutdown. `flush()` writes both now: read `quota_used` after it for exact figures.
   */
  readonly requestLogs: RequestLogWriter;
  /** Channels and models: `resolve`, `targetsFor`, `costOf` (see src/gateway/registry/index.ts). */
  readonly registry: Registry;
  /** The app catalog (src/catalog). */
  readonly catalog: CatalogService;
  /** Shared through Redis when `redis.url` is set, else per process; see src/access/rate-limit. */
  readonly rateLimiter: RateLimiter;
  /** The shared Redis client, or null when `redis.url` is empty. Commands fail fast while it is down. */
  readonly redis: RedisClient | null;
  /** The chat pipeline: planning deps, runner (execution, quota settle, logs), upstream health. */
  readonly chat: ChatServices;
  /** The embeddings pipeline (both endpoints), with the shared SSRF-safe image fetcher. */
  readonly embeddings: EmbeddingsService;
  /** Cache invalidation across instances (Redis pub/sub; local only without Redis). */
  readonly invalidation: InvalidationBus;
  /** Readiness checks beyond the database (Redis, ...), by name. */
  readonly probes: Record<string, () => Promise<void>>;
  /** Called on shutdown after the HTTP server stopped accepting and drained. */
  readonly closers: Array<() => Promise<void>>;
  close(): Promise<void>;
}

/**
 * `removeUndeclaredChannels`: the start deletes the config/env channels the configuration no
 * longer declares. `modelgate serve` sets it; the CLI's one-off commands do not, so one run with
 * a partial environment (a shell without the config file) cannot take upstreams out of service.
 * `discoverAtStart: false` (the CLI) lists no channel's models at start.
 */
export async function createServices(
  config: Config,
  _log?: FastifyBaseLogger,
  opts: { removeUndeclaredChannels?: boolean; discoverAtStart?: boolean } = {},
): Promise<Services> {
  const database = openDatabase(config.database.url, {
    poolSize: config.database.pool_size,
    statementTimeoutMs: config.database.statement_timeout_ms,
    connectTimeoutMs: config.database.connect_timeout_ms,
    sqliteCacheMb: config.database.sqlite_cache_mb,
  });
  let appliedMigrations: string[];
  try {
    appliedMigrations = await migrateToLatest(database);
  } catch (err) {
    await database.close().catch(() => {});
    throw startDatabaseError(err, config.database.url);
  }
  const repos = {
    users: new UsersRepo(database),
    apiKeys: new ApiKeysRepo(database),
    credentials: new CredentialsRepo(database),
    logs: new LogsRepo(database),
  };
  const cacheMs = config.auth.credential_cache_ms;
  const closers: Array<() => Promise<void>> = [];
  const redis = config.redis.url ? await openRedis(config.redis.url, { log: _log }) : null;
  if (redis) closers.push(() => closeRedis(redis));
  const rateLimiter = createRateLimiter(redis, config.redis.key_prefix, _log);
  const invalidation = await createInvalidationBus(redis, config.redis.key_prefix, _log);
  closers.push(() => invalidation.close());
  const apps = new AppsRepo(database);
  if (config.catalog.seed) await seedCatalog(apps);
  const requestLogs = new RequestLogWriter(repos.logs, {
    flushMs: config.log.request_logs_flush_ms,
    batch: config.log.request_logs_batch,
    // SQLite writes block the event loop (~9 µs per row): a 200-row batch in one transaction held
    // every request arriving meanwhile for ~2 ms. 50-row slices block ~0.5 ms at about the same
    // cost per row (25 rows cost ~20% more per row). docs/performance.md, session 6.
    rowsPerWrite: database.dialect === 'sqlite' ? SQLITE_ROWS_PER_WRITE : undefined,
    log: _log,
  });
  closers.push(() => requestLogs.close());
  const registry = createRegistry({
    config,
    repos: { channels: new ChannelsRepo(database), models: new ModelsRepo(database) },
    client: sharedUpstreamClient(),
    log: _log,
    removeUndeclaredChannels: opts.removeUndeclaredChannels,
    discoverAtStart: opts.discoverAtStart,
    // Request logs and settlements waiting out a write backoff go as soon as the database is back.
    onDatabaseBack: () => requestLogs.databaseBack(),
  });
  await registry.start();
  closers.push(() => registry.close());
  const quota = new DeferredSettleLedger(createUsageStore(database), requestLogs);
  // Before the request log writer's last write (closers run in reverse): the credit it gives
  // back, and any refund settled later, go with that write.
  closers.push(() => quota.close());
  const chat = createChatServices(config, registry, quota, requestLogs);
  closers.push(async () => chat.keyProbe.stop());
  const embeddings = createEmbeddingsService({
    config,
    registry,
    quota,
    logs: requestLogs,
    health: chat.health,
  });
  closers.push(() => embeddings.close());
  const services: Services = {
    config,
    database,
    appliedMigrations,
    registry,
    chat,
    embeddings,
    repos,
    users: new UserService(repos.users, repos.credentials, {
      sessionTtlHours: config.auth.session_ttl_hours,
      cacheMs,
    }),
    apiKeys: new ApiKeyService(repos.apiKeys, repos.users, cacheMs),
    quota,
    requestLogs,
    closers,
    catalog: new CatalogService(apps),
    rateLimiter,
    redis,
    // Redis down degrades (limits go per instance) but must not pull every instance out of
    // the load balancer at once: /readyz reports it without failing.
    probes: redis
      ? {
          redis: async () =>
            void (await redis.ping().catch((err) =>
              degraded(
                Object.assign(new Error(redisProblem(redis, err)), {
                  publicMessage: redisProblemKind(redis, err),
                }),
              ),
            )),
        }
      : {},
    invalidation,
    async close() {
      for (const c of closers.reverse()) await c().catch(() => {});
      await database.close();
    },
  };
  invalidation.subscribe(dropCaches({ ...services, quota }));
  return services;
}

/**
 * A start (serve, migrate, any CLI command) whose first step, the migrations, could not reach the
 * database says it was the database, at which URL (without its password), and why; other
 * migration failures keep their own message.
 */
function startDatabaseError(err: unknown, url: string): unknown {
  const code = (err as { code?: unknown })?.code;
  // Unreachable as db-errors.ts reads it (not SQLite's lock or full disk), or the credentials
  // refused (SQLSTATE class 28).
  const refused = typeof code === 'string' && /^28[0-9A-Z]{3}$/.test(code);
  const gone = isDatabaseUnavailable(err) && !String(code).startsWith('SQLITE_');
  if (!refused && !gone) return err;
  const message = err instanceof Error && err.message ? scrubPasswords(err.message) : connectErrorDetail(err);
  const why = typeof code === 'string' ? ` (${code})` : '';
  return new Error(`database: cannot connect to ${urlWithoutPassword(url)}${why}: ${message}`, {
    cause: err,
  });
}

const degraded = (err: Error): never => {
  throw Object.assign(err, { degraded: true });
};
