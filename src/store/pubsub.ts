import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { REDIS_COMMAND_TIMEOUT_MS, REDIS_PING_EVERY_MS, type RedisClient, watchSilence } from './redis.js';

/** What changed: each instance drops the matching caches. */
/**
 * - `keys`, `users`: a key or a user changed (limits, status, role): every cache of them and all
 *   leased quota credit go (a lowered limit applies from the next reservation).
 * - `key-added`: a new key; cached keys go (a lookup of it may have been cached as unknown),
 *   credit stays.
 * - `profile`: a user changed their own profile or password (`PUT /api/user/self`): the caches of
 *   users and of keys (a key carries its owner, the default model with it) go, credit stays.
 * - `credentials`: a session or access token began or ended: the cache of sessions and tokens.
 * Any signed-in user can cause the last three, so none of them gives credit back: a user who
 * loops on them would otherwise make every busy key of every instance lease again.
 */
export const INVALIDATION_TOPICS = [
  'keys',
  'users',
  'key-added',
  'profile',
  'credentials',
  'registry',
  'apps',
] as const;

export type InvalidationTopic = (typeof INVALIDATION_TOPICS)[number];

/**
 * Which key or user a `keys`/`users` change was about, when the route names one: only their
 * leased credit goes, so an owner editing their own key does not make every busy key of every
 * instance lease again. Without a scope, everything goes.
 */
export interface ChangeScope {
  keyId?: number;
  userId?: number;
}

export type InvalidationHandler = (topic: InvalidationTopic, scope?: ChangeScope) => void;

/**
 * Tells every instance that cached state went stale. `publish` never throws and never waits on
 * the network: handlers on this instance run at once, other instances hear it through Redis
 * when it is reachable. Without Redis, or while it is down, each instance relies on its own
 * cache TTLs (credential caches live at most 1 s, the registry polls every second).
 */
export interface InvalidationBus {
  publish(topic: InvalidationTopic, scope?: ChangeScope): void;
  subscribe(handler: InvalidationHandler): () => void;
  close(): Promise<void>;
}

/** One process: publish reaches this instance's handlers only. */
export class LocalInvalidationBus implements InvalidationBus {
  protected readonly handlers = new Set<InvalidationHandler>();

  publish(topic: InvalidationTopic, scope?: ChangeScope): void {
    this.deliver(topic, scope);
  }

  subscribe(handler: InvalidationHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  protected deliver(topic: InvalidationTopic, scope?: ChangeScope): void {
    for (const h of this.handlers) {
      try {
        h(topic, scope);
      } catch {
        // A failing handler must not stop the others from dropping their caches.
      }
    }
  }

  async close(): Promise<void> {
    this.handlers.clear();
  }
}

/**
 * Redis pub/sub on `<prefix>invalidate`. Subscribing needs its own connection; ioredis
 * re-subscribes after a reconnect, and since messages sent while this instance was cut off are
 * lost, a reconnect invalidates every topic locally (once the subscription is back). A
 * subscriber connection that stays open but delivers nothing (a frozen proxy, a dropped NAT
 * entry) would lose every message, key revocations and lowered limits included, with nothing
 * to say so: it is asked a PING every `pingEveryMs` and replaced when it does not answer
 * (`watchSilence`), which counts as a reconnect.
 */
export class RedisInvalidationBus extends LocalInvalidationBus {
  private readonly origin = randomUUID();
  private readonly channel: string;
  private readonly sub: RedisClient;
  private connectedOnce = false;
  private readonly stopWatch: () => void;
  /** The subscriber alone was found silent (logged) and is not back yet: its return is logged too. */
  private silent = false;

  constructor(
    private readonly client: RedisClient,
    prefix: string,
    private readonly log?: FastifyBaseLogger,
    opts: { pingEveryMs?: number } = {},
  ) {
    super();
    this.channel = `${prefix}invalidate`;
    this.sub = client.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null, lazyConnect: true });
    this.sub.on('error', () => {}); // the main client already reports outages
    this.sub.on('ready', () => {
      if (this.connectedOnce) {
        // ioredis has queued the re-subscription before this event: the PING's answer comes after
        // it, so nothing published from then on is missed once the caches are dropped.
        const dropAll = () => {
          for (const t of INVALIDATION_TOPICS) this.deliver(t);
        };
        this.sub.ping().then(dropAll, dropAll);
      }
      this.connectedOnce = true;
      if (this.silent) this.log?.info('invalidation bus: subscriber connection replaced; caches dropped');
      this.silent = false;
    });
    this.sub.on('message', (channel: string, message: string) => {
      if (channel !== this.channel) return;
      const m = parse(message);
      if (m && m.origin !== this.origin) this.deliver(m.topic, m.scope);
    });
    this.stopWatch = watchSilence(this.sub, {
      everyMs: opts.pingEveryMs ?? REDIS_PING_EVERY_MS,
      deadlineMs: REDIS_COMMAND_TIMEOUT_MS,
      onSilent: (ms) => {
        // When the main client is down too, its own line reports the outage (and its end).
        if (this.client.status !== 'ready') return;
        this.silent = true;
        this.log?.warn(
          { detail: `no answer to PING within ${ms} ms` },
          'invalidation bus: subscriber connection stopped answering; reconnecting (invalidations sent meanwhile are lost: caches are dropped once it is back)',
        );
      },
    });
  }

  /** Connects the subscriber, waiting at most `timeoutMs`; never throws (Redis may be down). */
  async start(timeoutMs = 2000): Promise<void> {
    const subscribed = this.sub
      .connect()
      .catch(() => {})
      .then(() => this.sub.subscribe(this.channel))
      .catch((err: Error) => this.log?.debug({ err: err.message }, 'invalidation bus: subscribe failed'));
    const timeout = new Promise<void>((r) => setTimeout(r, timeoutMs).unref());
    await Promise.race([subscribed, timeout]);
  }

  override publish(topic: InvalidationTopic, scope?: ChangeScope): void {
    this.deliver(topic, scope);
    if (this.client.status !== 'ready') return;
    this.client
      .publish(this.channel, JSON.stringify({ topic, origin: this.origin, ...(scope ? { scope } : {}) }))
      .catch((err: Error) => this.log?.debug({ err: err.message }, 'invalidation bus: publish failed'));
  }

  override async close(): Promise<void> {
    this.stopWatch();
    await super.close();
    if (this.sub.status === 'ready') await this.sub.quit().catch(() => this.sub.disconnect());
    else this.sub.disconnect();
  }
}

function parse(
  message: string,
): { topic: InvalidationTopic; origin: string; scope?: ChangeScope } | undefined {
  try {
    const m = JSON.parse(message) as { topic?: unknown; origin?: unknown; scope?: Record<string, unknown> };
    if (typeof m.origin === 'string' && INVALIDATION_TOPICS.includes(m.topic as InvalidationTopic)) {
      const out: { topic: InvalidationTopic; origin: string; scope?: ChangeScope } = {
        topic: m.topic as InvalidationTopic,
        origin: m.origin,
      };
      // A scope that does not read as one (an older or newer instance) drops everything.
      const keyId = m.scope?.keyId;
      const userId = m.scope?.userId;
      if (Number.isSafeInteger(keyId) && (keyId as number) > 0) out.scope = { keyId: keyId as number };
      else if (Number.isSafeInteger(userId) && (userId as number) > 0)
        out.scope = { userId: userId as number };
      return out;
    }
  } catch {}
  return undefined;
}

/** Redis-backed when a client is configured, else local. */
export async function createInvalidationBus(
  redis: RedisClient | null,
  prefix: string,
  log?: FastifyBaseLogger,
): Promise<InvalidationBus> {
  if (!redis) return new LocalInvalidationBus();
  const bus = new RedisInvalidationBus(redis, prefix, log);
  await bus.start();
  return bus;
}

const CHANGE_ROUTES: Array<[prefix: string, topic: InvalidationTopic]> = [
  ['/api/key', 'keys'],
  ['/api/user', 'users'],
  ['/api/channel', 'registry'],
  ['/api/model', 'registry'],
  ['/api/app', 'apps'],
];
// Writes that change nothing another instance caches (and downloads are the hot path). A
// sign-out is not told either: anyone may send one, cookie or not, and the ended session is
// refused everywhere once the credential caches (at most `auth.credential_cache_ms`, 1 s) forget it.
const NOT_CHANGES = new Set(['/api/user/login', '/api/user/logout', '/api/app/download/:id']);
/** Self-service writes, by method and route: narrower topics than their prefix's. */
const SELF_SERVICE = new Map<string, InvalidationTopic>([
  ['POST /api/user/tokens', 'credentials'],
  ['DELETE /api/user/tokens/:id', 'credentials'],
  ['PUT /api/user/self', 'profile'],
  ['POST /api/key', 'key-added'],
]);

/** The topic a successful management write invalidates, if any (by route template). */
export function changedTopic(
  method: string,
  route: string | undefined,
  status: number,
): InvalidationTopic | undefined {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS' || status >= 400 || !route)
    return undefined;
  if (NOT_CHANGES.has(route)) return undefined;
  if (!route.startsWith('/api/')) return undefined; // the /v1 calls: never a change
  const own = SELF_SERVICE.get(`${method} ${route}`);
  if (own) return own;
  for (const [prefix, topic] of CHANGE_ROUTES)
    if (route.startsWith(prefix) && (route.length === prefix.length || route[prefix.length] === '/'))
      return topic;
  return undefined;
}

/**
 * A response tap (the app's onResponse hook) that publishes every successful write through the management API, so
 * other instances drop their caches within milliseconds instead of at TTL expiry.
 */
export function publishChanges(bus: InvalidationBus) {
  return (
    request: { method: string; body?: unknown; params?: unknown },
    reply: { statusCode: number },
    route: string | undefined,
  ) => {
    const topic = changedTopic(request.method, route, reply.statusCode);
    if (topic) bus.publish(topic, changedScope(topic, request, route));
  };
}

/**
 * The key or user a change of one names: `PUT /api/key` and `PUT /api/user` by their body's
 * `id`, `DELETE /api/key/:id` and `DELETE /api/user/:id` by the path. Other writes (a new user,
 * ...) have none: everything goes.
 */
export function changedScope(
  topic: InvalidationTopic,
  request: { method: string; body?: unknown; params?: unknown },
  route: string | undefined,
): ChangeScope | undefined {
  if (topic !== 'keys' && topic !== 'users') return undefined;
  let id: unknown;
  if (request.method === 'PUT' && (route === '/api/key' || route === '/api/user'))
    id = (request.body as { id?: unknown } | undefined)?.id;
  else if (request.method === 'DELETE' && (route === '/api/key/:id' || route === '/api/user/:id'))
    id = Number((request.params as { id?: unknown } | undefined)?.id);
  if (!Number.isSafeInteger(id) || (id as number) <= 0) return undefined;
  return topic === 'keys' ? { keyId: id as number } : { userId: id as number };
}

/** Caches each topic drops on this instance. */
export function dropCaches(caches: {
  apiKeys: { invalidate(): void };
  users: { invalidate(): void };
  registry: { invalidate(): void };
  /** The quota ledger's leased credit: a changed limit applies from the next reservation. */
  quota?: { dropCredit(scope?: ChangeScope): void };
}): InvalidationHandler {
  return (topic, scope) => {
    if (topic === 'keys') {
      caches.apiKeys.invalidate();
      // An admin's write of a member's key marks the member's keys as the admin's to manage
      // (users.keys_admin_managed), which their signed-in row carries.
      caches.users.invalidate();
      caches.quota?.dropCredit(scope);
    } else if (topic === 'users') {
      // A verified key carries its owner: a disabled user must stop their keys too.
      caches.users.invalidate();
      caches.apiKeys.invalidate();
      caches.quota?.dropCredit(scope);
    } else if (topic === 'key-added') {
      caches.apiKeys.invalidate();
      caches.users.invalidate(); // as for 'keys': an admin's new key for a member marks them
    } else if (topic === 'profile') {
      caches.users.invalidate();
      caches.apiKeys.invalidate();
    } else if (topic === 'credentials') caches.users.invalidate();
    else if (topic === 'registry') caches.registry.invalidate();
    // 'apps': the catalog reads the database on every request; nothing is cached yet.
  };
}
