import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { LimitScope } from '../access/limits/request-limits.js';
import { tapRequestLogs } from '../access/limits/usage-tap.js';
import type { RequestLogEntry } from '../gateway/usage/request-log-entry.js';
import type { Services } from '../services.js';
import { registerEventLoopDelay } from './event-loop-metrics.js';

export interface GatewayMetrics {
  readonly registry: Registry;
  /** A request refused by a rate limit. */
  rateLimited(scope: LimitScope | 'search_ip'): void;
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
export function registerMetrics(app: FastifyInstance, services: Services): GatewayMetrics {
  const register = new Registry();
  const noop: GatewayMetrics = { registry: register, rateLimited: () => {} };
  if (!services.config.metrics.enabled) return noop;
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
    registerEventLoopDelay(processRegistry);
  }
  const registers = [register];

  const httpRequests = new Counter({
    name: 'modelgate_http_requests_total',
    help: 'HTTP requests by method, route template and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const httpDuration = new Histogram({
    name: 'modelgate_http_request_duration_seconds',
    help: 'HTTP request duration (to the last byte, streams included) by route and status class',
    labelNames: ['method', 'route', 'status_class'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const upstreamDuration = new Histogram({
    name: 'modelgate_upstream_request_duration_seconds',
    help: 'Chat and embeddings requests, end to end, by endpoint, model and upstream',
    labelNames: ['endpoint', 'model', 'provider', 'status_class'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const ttft = new Histogram({
    name: 'modelgate_time_to_first_token_seconds',
    help: 'Streamed chat: time to the first content chunk, by model and upstream',
    labelNames: ['model', 'provider'] as const,
    buckets: TTFT_BUCKETS,
    registers,
  });
  const upstreamErrors = new Counter({
    name: 'modelgate_upstream_errors_total',
    help: 'Failed upstream attempts (retries and fallbacks included) by upstream and error kind',
    labelNames: ['provider', 'kind'] as const,
    registers,
  });
  const tokens = new Counter({
    name: 'modelgate_tokens_total',
    help: 'Tokens billed, by model and type (prompt, completion)',
    labelNames: ['model', 'type'] as const,
    registers,
  });
  const cost = new Counter({
    name: 'modelgate_cost_usd_total',
    help: 'Cost billed to keys, in USD, by model',
    labelNames: ['model'] as const,
    registers,
  });
  const rejections = new Counter({
    name: 'modelgate_rate_limit_rejections_total',
    help: 'Requests refused with 429 by a rate limit, by scope',
    labelNames: ['scope'] as const,
    registers,
  });
  registerGauges(register, services);

  // Client-chosen model names must not mint series: unknown models are counted as "other".
  const modelLabel = (m: string) => (m && services.registry.resolve(m) ? m : 'other');
  tapRequestLogs(services.requestLogs, (e: RequestLogEntry) => {
    const model = modelLabel(e.model);
    const provider = e.provider || 'none';
    upstreamDuration.observe(
      { endpoint: e.endpoint, model, provider, status_class: statusClass(e.status) },
      (e.latency_ms ?? 0) / 1000,
    );
    if (e.ttft_ms !== undefined && e.ttft_ms !== null) ttft.observe({ model, provider }, e.ttft_ms / 1000);
    if (e.prompt_tokens) tokens.inc({ model, type: 'prompt' }, e.prompt_tokens);
    if (e.completion_tokens) tokens.inc({ model, type: 'completion' }, e.completion_tokens);
    if (e.cost_micros) cost.inc({ model }, e.cost_micros / 1e6);
    for (const a of e.attempts ?? []) {
      const at = a as { ok?: boolean; provider?: string; error_kind?: string };
      if (at && at.ok === false)
        upstreamErrors.inc({ provider: at.provider || provider, kind: at.error_kind || 'unknown' });
    }
  });

  // Label sets are bounded (route templates x status codes), so the bound children are kept:
  // prom-client then skips hashing the labels on every response.
  const bound = new Map<
    string,
    { count: ReturnType<typeof httpRequests.labels>; duration: ReturnType<typeof httpDuration.labels> }
  >();
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    const id = `${request.method} ${status} ${route}`;
    let b = bound.get(id);
    if (!b) {
      b = {
        count: httpRequests.labels({ method: request.method, route, status }),
        duration: httpDuration.labels({ method: request.method, route, status_class: statusClass(status) }),
      };
      bound.set(id, b);
    }
    b.count.inc();
    b.duration.observe(reply.elapsedTime / 1000);
    // The catalog search limit lives in its route; count its refusals with the others.
    if (status === 429 && route === '/api/app/search') rejections.inc({ scope: 'search_ip' });
    done();
  });

  const token = services.config.metrics.token;
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (token && !bearerMatches(request.headers.authorization, token))
      return reply.code(401).header('www-authenticate', 'Bearer').send('unauthorized\n');
    const merged = Registry.merge([processRegistry!, register]);
    reply.header('content-type', merged.contentType);
    return merged.metrics();
  });

  return { registry: register, rateLimited: (scope) => rejections.inc({ scope }) };
}

/** Values read when scraped: circuit states, database pool, Redis link, log backlog. */
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
  new Gauge({
    name: 'modelgate_redis_up',
    help: '1 when the Redis link is ready, 0 while it is down (absent without Redis)',
    registers,
    collect() {
      if (services.redis) this.set(services.redis.status === 'ready' ? 1 : 0);
    },
  });
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
