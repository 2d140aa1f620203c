import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { LimitScope } from '../access/limits/request-limits.js';
import { KeyTree } from '../gateway/key-tree.js';
import type { RequestLogEntry } from '../gateway/usage/request-log-entry.js';
import type { Services } from '../services.js';
import { type RouteLimitScope, routeLimitRefusal } from './address-limit.js';
import { registerEventLoopDelay } from './event-loop-metrics.js';
import { HotCounter, HotHistogram, type HotMetric } from './hot-metrics.js';
import type { ResponseTaps } from './response-taps.js';

export interface GatewayMetrics {
  readonly registry: Registry;
  /** A request refused by a rate limit. */
  rateLimited(scope: LimitScope | RouteLimitScope): void;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const TTFT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

// Process metrics (CPU, memory, event loop, GC) are per process, not per app: collected once
// and merged into each app's registry at scrape time.
let processRegistry: Registry | undefined;

/**
 * Prometheus metrics at `GET /metrics` (hidden from the OpenAPI document). The hot path costs
 * one onResponse hook and a few counter increments; upstream figures come from the request log
 * records the chat and embeddings pipelines already write, and gauges (circuits, pools) are
 * read at scrape time. Labels are bounded: route templates, known models, channel names,
 * status classes. `metrics.token` set: the route needs `Authorization: Bearer <token>`.
 */
export function registerMetrics(
  app: FastifyInstance,
  services: Services,
  taps: ResponseTaps,
): GatewayMetrics {
  const register = new Registry();
  const noop: GatewayMetrics = { registry: register, rateLimited: () => {} };
  if (!services.config.metrics.enabled) return noop;
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
    registerEventLoopDelay(processRegistry);
  }

  // The request path's own series: recorded without prom-client's per-call label hashing.
  const httpRequests = new HotCounter(
    'modelgate_http_requests_total',
    'HTTP requests by method, route template and status code',
    ['method', 'route', 'status'],
  );
  const httpDuration = new HotHistogram(
    'modelgate_http_request_duration_seconds',
    'HTTP request duration (to the last byte, streams included) by route and status class',
    ['method', 'route', 'status_class'],
    LATENCY_BUCKETS,
  );
  const upstreamDuration = new HotHistogram(
    'modelgate_upstream_request_duration_seconds',
    'Chat and embeddings requests, end to end, by endpoint, model and upstream',
    ['endpoint', 'model', 'provider', 'status_class'],
    LATENCY_BUCKETS,
  );
  const ttft = new HotHistogram(
    'modelgate_time_to_first_token_seconds',
    'Streamed chat: time to the first content chunk, by model and upstream',
    ['model', 'provider'],
    TTFT_BUCKETS,
  );
  const upstreamErrors = new HotCounter(
    'modelgate_upstream_errors_total',
    'Failed upstream attempts (retries and fallbacks included) by upstream and error kind',
    ['provider', 'kind'],
  );
  const tokens = new HotCounter(
    'modelgate_tokens_total',
    'Tokens billed, by model and type (prompt, completion)',
    ['model', 'type'],
  );
  const cost = new HotCounter('modelgate_cost_usd_total', 'Cost billed to keys, in USD, by model', ['model']);
  const rejections = new HotCounter(
    'modelgate_rate_limit_rejections_total',
    'Requests refused with 429 by a rate limit, by scope',
    ['scope'],
  );
  const hot: HotMetric[] = [
    httpRequests,
    httpDuration,
    upstreamDuration,
    ttft,
    upstreamErrors,
    tokens,
    cost,
    rejections,
  ];
  registerGauges(register, services);

  // Client-chosen model names must not mint series: unknown models are counted as "other".
  const modelLabel = (m: string) => (m && services.registry.resolve(m) ? m : 'other');
  // Series are made when first counted: a request that billed no tokens leaves no zero series.
  interface CallSeries {
    model: string;
    duration: { observe(v: number): void };
    ttft?: { observe(v: number): void };
    prompt?: { inc(by?: number): void };
    completion?: { inc(by?: number): void };
    cost?: { inc(by?: number): void };
  }
  const byCall = new KeyTree<CallSeries>();
  services.requestLogs.observe((e: RequestLogEntry) => {
    // The upstream that served or last failed: none when no upstream was tried (an unknown
    // model, a refused key, no upstream available). Those requests are in the HTTP series only.
    const provider = e.provider;
    if (provider) {
      const sc = statusClass(e.status);
      let b = byCall.get(e.model, provider, sc, e.endpoint);
      if (!b) {
        const model = modelLabel(e.model);
        b = {
          model,
          duration: upstreamDuration.labels({ endpoint: e.endpoint, model, provider, status_class: sc }),
        };
        // Unknown client-chosen names share the "other" series but must not grow this map either.
        if (model !== 'other' || byCall.size < 10_000) byCall.set(b, e.model, provider, sc, e.endpoint);
      }
      b.duration.observe((e.latency_ms ?? 0) / 1000);
      if (e.ttft_ms !== undefined && e.ttft_ms !== null) {
        b.ttft ??= ttft.labels({ model: b.model, provider });
        b.ttft.observe(e.ttft_ms / 1000);
      }
      if (e.prompt_tokens) {
        b.prompt ??= tokens.labels({ model: b.model, type: 'prompt' });
        b.prompt.inc(e.prompt_tokens);
      }
      if (e.completion_tokens) {
        b.completion ??= tokens.labels({ model: b.model, type: 'completion' });
        b.completion.inc(e.completion_tokens);
      }
      if (e.cost_micros) {
        b.cost ??= cost.labels({ model: b.model });
        b.cost.inc(e.cost_micros / 1e6);
      }
    }
    for (const a of e.attempts ?? []) {
      const at = a as { ok?: boolean; provider?: string; error_kind?: string };
      if (at && at.ok === false)
        upstreamErrors
          .labels({ provider: at.provider || provider || 'none', kind: at.error_kind || 'unknown' })
          .inc();
    }
  });

  // Bounded by route templates x status codes.
  const byResponse = new KeyTree<{ count: { inc(): void }; duration: { observe(v: number): void } }>();
  taps.add((request: FastifyRequest, reply: FastifyReply, template: string | undefined) => {
    const route = template ?? 'unmatched';
    const status = reply.statusCode;
    let b = byResponse.get(route, request.method, status);
    if (!b) {
      b = {
        count: httpRequests.labels({ method: request.method, route, status }),
        duration: httpDuration.labels({ method: request.method, route, status_class: statusClass(status) }),
      };
      byResponse.set(b, route, request.method, status);
    }
    b.count.inc();
    b.duration.observe(reply.elapsedTime / 1000);
  });

  // The limits a route checks itself (sign-in, /api writes, catalog search) throw their 429: each
  // is counted as it is answered, under the scope it was thrown with.
  app.addHook('onError', (_request, _reply, error, done) => {
    const scope = routeLimitRefusal(error);
    if (scope) rejections.labels({ scope }).inc();
    done();
  });

  const token = services.config.metrics.token;
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (token && !bearerMatches(request.headers.authorization, token))
      return reply.code(401).header('www-authenticate', 'Bearer').send('unauthorized\n');
    const merged = Registry.merge([processRegistry!, register]);
    reply.header('content-type', merged.contentType);
    return (await merged.metrics()) + hot.map((m) => m.render()).join('');
  });

  return { registry: register, rateLimited: (scope) => rejections.labels({ scope }).inc() };
}

/** Values read when scraped: circuit states, database pool, Redis link, quota leases, log backlog. */
function registerGauges(register: Registry, services: Services): void {
  const registers = [register];
  new Gauge({
    name: 'modelgate_circuit_state',
    help: 'Circuit breaker state per upstream target (channel:model): 1 for the current state',
    labelNames: ['target', 'state'] as const,
    registers,
    collect() {
      this.reset();
      for (const s of services.chat.health.snapshot()) this.set({ target: s.target, state: s.state }, 1);
    },
  });
  new Gauge({
    name: 'modelgate_db_pool_connections',
    help: 'Database pool connections by state (PostgreSQL): total, idle, waiting requests',
    labelNames: ['state'] as const,
    registers,
    collect() {
      const p = services.database.poolStats?.();
      if (!p) return;
      this.set({ state: 'total' }, p.total);
      this.set({ state: 'idle' }, p.idle);
      this.set({ state: 'waiting' }, p.waiting);
    },
  });
  // Registered only with Redis: a gauge without labels reads 0 until set, and docs/scaling.md has
  // operators alert on 0, which fired on every instance that runs without Redis.
  const redis = services.redis;
  if (redis)
    new Gauge({
      name: 'modelgate_redis_up',
      help: '1 when the Redis link is ready, 0 while it is down (absent without Redis)',
      registers,
      collect() {
        this.set(redis.status === 'ready' ? 1 : 0);
      },
    });
  const leases = services.quota.stats;
  if (leases) {
    new Counter({
      name: 'modelgate_quota_leases_total',
      help: 'Quota leases asked from the database: by a reservation that waited for it, or ahead in the background',
      labelNames: ['mode'] as const,
      registers,
      collect() {
        this.reset();
        this.inc({ mode: 'waited' }, leases.leasesWaited);
        this.inc({ mode: 'ahead' }, leases.leasesAhead);
      },
    });
    new Counter({
      name: 'modelgate_quota_lease_waits_total',
      help: 'Times a quota reservation waited for the database (the request that asked for a lease, and each that arrived meanwhile)',
      registers,
      collect() {
        this.reset();
        this.inc(leases.waits);
      },
    });
  }
  new Gauge({
    name: 'modelgate_request_logs_pending',
    help: 'Request log entries buffered, not yet written to the database',
    registers,
    collect() {
      this.set(services.requestLogs.pending);
    },
  });
}

const statusClass = (s: number) => `${Math.floor(s / 100)}xx`;

function bearerMatches(header: string | undefined, token: string): boolean {
  const m = header ? /^Bearer\s+(.+)$/i.exec(header) : null;
  if (!m) return false;
  const a = Buffer.from(m[1]!.trim());
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
