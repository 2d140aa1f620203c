import type { QuotaLedger } from '../../access/quota/quota-ledger.js';
import type { Config } from '../../config/schema.js';
import { getChatAdapter, isChatProviderKind } from '../../providers/registry.js';
import { perObject } from '../per-object.js';
import { isAllowed, type Registry, type Target, unknownAllowed } from '../registry/index.js';
import { isEmbeddingModel } from '../registry/model-info.js';
import { HealthTracker } from '../routing/health.js';
import { startKeyProbe } from '../routing/key-probe.js';
import type { RouteTarget } from '../routing/types.js';
import { upstreamLimits } from '../upstream/upstream-limits.js';
import type { RequestLogEntry } from '../usage/request-log-entry.js';
import type { PlanDeps } from './chat-plan.js';
import { ChatRunner } from './chat-runner.js';

export interface ChatServices {
  runner: ChatRunner;
  planDeps: PlanDeps;
  health: HealthTracker;
  keyProbe: { stop(): void; runOnce(): Promise<number> };
}

/** Builds the chat pipeline from the registry, quota ledger and request logs. */
export function createChatServices(
  config: Config,
  registry: Registry,
  quota: QuotaLedger,
  logs: { record(e: RequestLogEntry): void },
): ChatServices {
  const g = config.gateway;
  const health = new HealthTracker({
    failures: g.circuit_failures,
    windowMs: g.circuit_window_ms,
    cooldownMs: g.circuit_cooldown_ms,
  });
  const planDeps: PlanDeps = {
    targetsFor(model) {
      const m = registry.resolve(model);
      return m ? chatTargetsOf(registry.targetsFor(m.id, CHAT)) : undefined;
    },
    embeddingOnly(model) {
      const m = registry.resolve(model);
      return m !== undefined && (isEmbeddingModel(m) || registry.targetsFor(m.id, EMBEDDINGS).length > 0);
    },
    allows(allowed, model, asWritten) {
      const m = registry.resolve(model);
      if (!m) return unknownAllowed(allowed, asWritten) || unknownAllowed(allowed, model);
      return isAllowed(m, allowed, registry, asWritten === model ? undefined : asWritten);
    },
    adapterParams(kind, t) {
      if (!isChatProviderKind(kind)) return undefined;
      const a = getChatAdapter(kind);
      return a.paramsFor?.(t) ?? a.supportedParams;
    },
    sentMaxTokens(req, t) {
      return isChatProviderKind(t.kind) ? getChatAdapter(t.kind).sentMaxTokens?.(req, t) : undefined;
    },
    health,
    defaultModel: g.default_model,
  };
  const upstream = {
    connectTimeoutMs: g.connect_timeout_ms,
    firstByteTimeoutMs: g.first_byte_timeout_ms,
    idleTimeoutMs: g.idle_timeout_ms,
    finishGraceMs: g.finish_grace_ms,
    ...upstreamLimits(g),
  };
  const runner = new ChatRunner({
    adapter: getChatAdapter,
    health,
    quota,
    logs,
    retry: { maxAttempts: g.max_attempts, retryBaseMs: g.retry_base_ms, retryMaxMs: g.retry_max_ms },
    upstream,
    upstreamComplete: {
      ...upstream,
      firstByteTimeoutMs: Math.max(g.first_byte_timeout_ms, g.non_stream_timeout_ms),
    },
  });
  const keyProbe = startKeyProbe(
    health,
    (kind) => (isChatProviderKind(kind) ? getChatAdapter(kind) : undefined),
    {
      intervalMs: g.key_probe_interval_ms,
      timeoutMs: Math.min(g.connect_timeout_ms, 10_000),
      limits: upstreamLimits(g),
    },
  );
  return { runner, planDeps, health, keyProbe };
}

/**
 * One RouteTarget per registry target, kept while the registry keeps that target (it makes new
 * ones when channels or models change), so what is derived per target (the adapter's view of
 * it, its request facts) is worked out once, not per request.
 */
const routeTargetOf = perObject((t: Target) => toRouteTarget(t));

/** The embeddings path's route targets, derived once per catalog answer as the chat path's. */
export const routeTargetsOf = perObject((ts: Target[]) => ts.map(routeTargetOf));

const CHAT = { endpoint: 'chat' } as const;
const EMBEDDINGS = { endpoint: 'embeddings' } as const;
/** The catalog answers with the same array until it is rebuilt: derive the route targets once. */
const chatTargetsOf = perObject((ts: Target[]) =>
  ts.filter((t) => isChatProviderKind(t.kind)).map(routeTargetOf),
);

export function toRouteTarget(t: Target): RouteTarget {
  return {
    channelId: t.channelId,
    channelName: t.channelName,
    kind: t.kind,
    baseUrl: t.baseUrl,
    keys: t.keys.length > 0 ? t.keys : [''],
    upstreamModel: t.upstreamModel,
    priority: t.priority,
    weight: t.weight,
    settings: t.settings as Record<string, unknown>,
    modelId: t.model.id,
    contextLength: t.model.context_length,
    maxCompletionTokens: t.model.max_completion_tokens,
    pricing: t.pricing,
    supportedParameters: t.model.supported_parameters.length > 0 ? t.model.supported_parameters : null,
  };
}
