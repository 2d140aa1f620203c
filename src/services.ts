import type { FastifyBaseLogger } from 'fastify';
import { ApiKeyService } from './access/api-keys.js';
import { UserService } from './access/users.js';
import type { Config } from './config/schema.js';
import { ApiKeysRepo } from './store/api-keys-repo.js';
import { CredentialsRepo } from './store/credentials-repo.js';
import { type Database, openDatabase } from './store/database.js';
import { migrateToLatest } from './store/migrate.js';
import { UsersRepo } from './store/users-repo.js';

/**
 * Everything a request can reach, built once per process from the configuration. Tests build
 * one per gateway they start; `close()` releases pools in reverse order.
 */
export interface Services {
  readonly config: Config;
  readonly database: Database;
  readonly users: UserService;
  readonly apiKeys: ApiKeyService;
  readonly repos: { users: UsersRepo; apiKeys: ApiKeysRepo; credentials: CredentialsRepo };
  /** Readiness checks beyond the database (Redis, ...), by name. */
  readonly probes: Record<string, () => Promise<void>>;
  /** Called on shutdown after the HTTP server stopped accepting and drained. */
  readonly closers: Array<() => Promise<void>>;
  close(): Promise<void>;
}

export async function createServices(config: Config, _log?: FastifyBaseLogger): Promise<Services> {
  const database = openDatabase(config.database.url, { poolSize: config.database.pool_size });
  await migrateToLatest(database);
  const repos = {
    users: new UsersRepo(database),
    apiKeys: new ApiKeysRepo(database),
    credentials: new CredentialsRepo(database),
  };
  const cacheMs = config.auth.credential_cache_ms;
  const closers: Array<() => Promise<void>> = [];
  return {
    config,
    database,
    repos,
    users: new UserService(repos.users, repos.credentials, {
      sessionTtlHours: config.auth.session_ttl_hours,
      cacheMs,
    }),
    apiKeys: new ApiKeyService(repos.apiKeys, repos.users, cacheMs),
    closers,
    probes: {},
    async close() {
      for (const c of closers.reverse()) await c().catch(() => {});
      await database.close();
    },
  };
}
