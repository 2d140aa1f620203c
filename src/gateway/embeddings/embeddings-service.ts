import type { KeyPrincipal } from '../../access/api-keys.js';
import type { QuotaLedger, Reservation } from '../../access/quota/quota-ledger.js';
import type { Config } from '../../config/schema.js';
import { selectEmbeddingCandidates } from '../../providers/embedding-registry.js';
import { MAX_EXACT } from '../../store/column-bounds.js';
import { abortedStatus } from '../cancel.js';
import { routeTargetsOf } from '../completions/chat-wiring.js';
import { badRequest, forbidden, GatewayError, UpstreamError, upstreamToGateway } from '../errors.js';
import { createSafeFetcher, type SafeFetcher } from '../images/safe-fetch.js';
import { isAllowed } from '../registry/allow-list.js';
import type { ModelInfo, Pricing, Registry } from '../registry/index.js';
import { costOf } from '../registry/index.js';
import { isEmbeddingModel } from '../registry/model-info.js';
import { attemptsOf, executeRoute, keepAttempts } from '../routing/execute.js';
import type { HealthTracker } from '../routing/health.js';
import { planRoute } from '../routing/plan.js';
import type { AttemptRecord, Candidate } from '../routing/types.js';
import { sharedUpstreamClient, type UpstreamTimeouts } from '../upstream/upstream-client.js';
import { errorKindOf, lastProvider, type RequestLogEntry } from '../usage/request-log-entry.js';
import { EmbedProgress } from './embed-progress.js';
import { type EmbeddingSend, embedWithAdapter } from './embed-with-adapter.js';
import type { EmbeddingAdapter, EmbeddingTarget } from './embedding-adapter.js';
import {
  type EmbeddingRequest,
  type EmbeddingResult,
  type EmbeddingUsage,
  partTypesOf,
  type ResolvedEmbeddingRequest,
} from './embedding-request.js';
import { billedAs, estimateEmbeddingUsage, finalizeEmbeddingUsage } from './embedding-usage.js';
import { resolveImages } from './resolve-images.js';
import { UpstreamLimitMemory } from './upstream-limit-memory.js';

/**
 * One embedding request end to end, for both public endpoints: model (request, else the
 * server default), key allow-list, images fetched and measured by our SSRF-safe fetcher,
 * upstreams that can take the request's part types, quota reserved from our own usage
 * estimate, route execution (the one place for retries and fallbacks), then — always, in a
 * finally — the quota settled on the final usage and one request log written.
 */
export type EmbeddingEndpoint = 'embeddings' | 'multimodalembeddings';

export interface EmbedContext {
  requestId: string;
  principal: KeyPrincipal;
  signal: AbortSignal;
  startedAt: number;
  endpoint: EmbeddingEndpoint;
}

export interface EmbeddingsServiceDeps {
  registry: Pick<Registry, 'resolve' | 'targetsFor'>;
  quota: QuotaLedger;
  logs: { record(e: RequestLogEntry): void };
  health: HealthTracker;
  /** Shared by all requests; `close` (when present) is called on shutdown. */
  fetcher: Pick<SafeFetcher, 'fetch'> & Partial<Pick<SafeFetcher, 'close'>>;
  /** How long all the image fetches of one request may take together (default 60 s). */
  imageTotalTimeoutMs?: number;
  send: EmbeddingSend;
  retry: { maxAttempts: number; retryBaseMs: number; retryMaxMs: number };
  defaultModel: string;
}

export interface Embedded {
  result: EmbeddingResult;
  attempts: AttemptRecord[];
}

const DEFAULT_IMAGE_TOTAL_TIMEOUT_MS = 60_000;

/** The field a client error about the inputs points at, per endpoint. */
const INPUTS_PARAM: Record<EmbeddingEndpoint, string> = {
  embeddings: 'input',
  multimodalembeddings: 'inputs',
};

export class EmbeddingsService {
  /** Caps and body sizes upstreams taught, so later requests are split up front. */
  private readonly limits = new UpstreamLimitMemory();

  constructor(private readonly deps: EmbeddingsServiceDeps) {}

  async close(): Promise<void> {
    await this.deps.fetcher.close?.();
  }

  /**
   * The request's images as bytes. URLs are fetched only for a key that can still pay (a key
   * over its quota is told so first, not after a thousand downloads) and within one deadline
   * for all of them: each fetch has its own timeout, and a request of many slow URLs would
   * otherwise hold the gateway's fetcher for as long as they take in turn.
   */
  private async resolve(req: EmbeddingRequest, ctx: EmbedContext): Promise<ResolvedEmbeddingRequest> {
    const urls = req.inputs.some((parts) => parts.some((p) => p.type === 'image' && p.source.kind === 'url'));
    if (!urls) return resolveImages(req, { fetcher: this.deps.fetcher, signal: ctx.signal });
    const { principal } = ctx;
    this.deps.quota.release(
      await this.deps.quota.reserve({ keyId: principal.key.id, userId: principal.user.id, micros: 1 }),
    );
    const totalMs = this.deps.imageTotalTimeoutMs ?? DEFAULT_IMAGE_TOTAL_TIMEOUT_MS;
    const deadline = AbortSignal.timeout(totalMs);
    try {
      return await resolveImages(req, {
        fetcher: this.deps.fetcher,
        signal: ctx.signal ? AbortSignal.any([ctx.signal, deadline]) : deadline,
      });
    } catch (err) {
      if (deadline.aborted && !ctx.signal?.aborted)
        throw new GatewayError(
          400,
          `${INPUTS_PARAM[ctx.endpoint]}: fetching the images of this request took longer than ${totalMs} ms (gateway.image_fetch_total_timeout_ms)`,
          { param: INPUTS_PARAM[ctx.endpoint] },
        );
      throw err;
    }
  }

  async embed(req: EmbeddingRequest, ctx: EmbedContext): Promise<Embedded> {
    const log: LogState = { model: req.model ?? this.deps.defaultModel, status: 500 };
    let reservation: Reservation | undefined;
    try {
      const model = this.model(req, ctx.principal);
      log.model = model.id;
      const candidates = this.candidates(model);
      const hasImages = partTypesOf(req).has('image');
      if (hasImages && model.source !== 'discovered' && !model.input_modalities.includes('image'))
        throw badRequest(
          `${INPUTS_PARAM[ctx.endpoint]}: model ${model.id} cannot embed images (it takes ${model.input_modalities.join(', ') || 'text'})`,
          INPUTS_PARAM[ctx.endpoint],
        );
      const resolved = await this.resolve(req, ctx);
      const { usable, rejection } = selectEmbeddingCandidates(candidates, resolved);
      if (rejection)
        throw new GatewayError(400, rejection.message, {
          param: rejection.param ?? INPUTS_PARAM[ctx.endpoint],
        });
      // The text is counted once; the images as each upstream bills them (Voyage clamps pixels).
      // An input the upstream truncates counts at most what the model takes (docs/embeddings.md).
      const estimate = estimateEmbeddingUsage(resolved, { maxInputTokens: model.context_length });
      const billed = new Map<EmbeddingAdapter, EmbeddingUsage>();
      if (hasImages)
        for (const { adapter } of usable)
          if (!billed.has(adapter)) billed.set(adapter, billedAs(estimate, resolved, adapter));
      const estimateFor = (a: EmbeddingAdapter) => billed.get(a) ?? estimate;
      const images = countImages(resolved);
      const worst = Math.max(
        0,
        ...usable.map((u) => embeddingMicros(u.candidate.target.pricing, estimateFor(u.adapter), images)),
      );
      reservation = await this.deps.quota.reserve({
        keyId: ctx.principal.key.id,
        userId: ctx.principal.user.id,
        micros: worst,
        userLimited: ctx.principal.user.quota_limit_micros !== null,
      });
      const adapters = new Map(usable.map((u) => [u.candidate, u.adapter]));
      // What each upstream served so far: its retries send only what is missing; another upstream
      // starts afresh (docs/embeddings.md, "Retries").
      const served = new Map<Candidate, EmbedProgress>();
      const progressOf = (c: Candidate) => {
        const p = served.get(c) ?? new EmbedProgress(resolved.inputs.length);
        served.set(c, p);
        return p;
      };
      const ex = await executeRoute(
        usable.map((u) => u.candidate),
        (c, apiKey, signal) => {
          const upstream = `${c.target.channelId} ${c.target.baseUrl}`;
          return embedWithAdapter(adapters.get(c)!, resolved, embeddingTarget(c, apiKey), this.deps.send, {
            signal,
            progress: progressOf(c),
            estimate: estimateFor(adapters.get(c)!),
            maxBatch: this.limits.batchCap(upstream),
            onBatchCap: (cap) => this.limits.rememberBatchCap(upstream, cap),
            maxBodyBytes: this.limits.bodyBytes(upstream),
            onBodyLimit: (bytes) => this.limits.rememberBodyBytes(upstream, bytes),
          });
        },
        { health: this.deps.health, ...this.deps.retry, signal: ctx.signal },
      ).catch((err: unknown) => {
        log.attempts = attemptsOf(err);
        throw err;
      });
      const latencyMs = Date.now() - ex.startedAt;
      this.deps.health.success(ex.candidate.healthKey, { latencyMs, durationMs: latencyMs }, ex.probe);
      const usage = finalizeEmbeddingUsage(
        resolved,
        ex.value.usage,
        estimateFor(adapters.get(ex.candidate)!),
      );
      const t = ex.candidate.target;
      Object.assign(log, {
        provider: t.channelName,
        channelId: t.channelId,
        attempts: ex.attempts,
        usage,
        micros: embeddingMicros(t.pricing, usage, images),
        status: 200,
      });
      return {
        result: { model: t.modelId, vectors: ex.value.vectors, usage, dtype: ex.value.dtype },
        attempts: ex.attempts,
      };
    } catch (err) {
      const e = clientError(err, ctx.endpoint);
      // The client's error keeps the route's trail, for the x-modelgate-attempts header.
      if (log.attempts && e !== err) keepAttempts(e, log.attempts);
      log.status = ctx.signal.aborted
        ? abortedStatus(ctx.signal)
        : e instanceof GatewayError
          ? e.status
          : 500;
      log.error = err;
      throw e;
    } finally {
      try {
        if (reservation) await this.deps.quota.settle(reservation, log.micros ?? 0);
      } finally {
        this.record(ctx, log);
      }
    }
  }

  private model(req: EmbeddingRequest, principal: KeyPrincipal): ModelInfo {
    const name = req.model ?? this.deps.defaultModel;
    if (!name) throw badRequest('model: is required (no default embedding model is configured)', 'model');
    const model = this.deps.registry.resolve(name);
    if (!model) throw new GatewayError(404, `model not found: ${name}`, { param: 'model' });
    if (!isAllowed(model, principal.allowedModels, this.deps.registry))
      throw forbidden(`this API key may not use model ${name}`, 'model');
    return model;
  }

  private candidates(model: ModelInfo): Candidate[] {
    const targets = this.deps.registry.targetsFor(model.id, { endpoint: 'embeddings' });
    if (targets.length === 0 && !isEmbeddingModel(model) && model.source !== 'discovered')
      throw badRequest(`model: ${model.id} is not an embedding model`, 'model');
    return planRoute({
      models: [{ name: model.id, targets: routeTargetsOf(targets) }],
      prefs: undefined,
      requestedParams: [],
      adapterParams: () => undefined,
      health: this.deps.health,
    });
  }

  private record(ctx: EmbedContext, s: LogState): void {
    const err = s.error;
    this.deps.logs.record({
      request_id: ctx.requestId,
      user_id: ctx.principal.user.id,
      key_id: ctx.principal.key.id,
      endpoint: ctx.endpoint,
      model: s.model,
      provider: s.provider ?? lastProvider(s.attempts),
      channel_id: s.channelId ?? null,
      prompt_tokens: s.usage?.totalTokens ?? 0,
      completion_tokens: 0,
      cost_micros: s.micros ?? 0,
      latency_ms: Date.now() - ctx.startedAt,
      status: s.status,
      error_kind: errorKindOf(err, ctx.signal),
      stream: false,
      attempts: s.attempts ?? null,
    });
  }
}

interface LogState {
  model: string;
  status: number;
  provider?: string;
  channelId?: number;
  attempts?: AttemptRecord[];
  usage?: EmbeddingUsage;
  micros?: number;
  error?: unknown;
}

function embeddingTarget(c: Candidate, apiKey: string): EmbeddingTarget {
  const headers = c.target.settings.headers;
  return {
    baseUrl: c.target.baseUrl,
    apiKey: apiKey || undefined,
    upstreamModel: c.target.upstreamModel,
    headers: headers && typeof headers === 'object' ? (headers as Record<string, string>) : undefined,
  };
}

function countImages(req: { inputs: { type: string }[][] }): number {
  let n = 0;
  for (const input of req.inputs) for (const p of input) if (p.type === 'image') n++;
  return n;
}

/**
 * Cost in micro-USD from the registry's prices: `prompt` per token of total_tokens (images
 * count through their token equivalent), `request` per call, `image` per image. A model with
 * an `image_pixel` price instead pays text tokens at `prompt` and each pixel at `image_pixel`.
 */
export function embeddingMicros(pricing: Pricing, usage: EmbeddingUsage, images: number): number {
  const pixelPrice = Number(pricing.image_pixel ?? 0);
  const perPixel = Number.isFinite(pixelPrice) && pixelPrice > 0;
  const micros = costOf(
    { pricing },
    { prompt_tokens: perPixel ? usage.textTokens : usage.totalTokens, images, requests: 1 },
  );
  // Saturated like costOf (2^53 - 1 micro-USD): an absurd stored pixel price must not make it Infinity.
  return perPixel ? Math.min(MAX_EXACT, micros + Math.round(usage.imagePixels * pixelPrice * 1e6)) : micros;
}

/**
 * Upstream failures as the client sees them; a prompt too long for the model is about the
 * inputs, not about chat `messages`.
 */
function clientError(err: unknown, endpoint: EmbeddingEndpoint): unknown {
  if (!(err instanceof UpstreamError)) return err;
  if (err.kind === 'context_length')
    return new GatewayError(400, `${INPUTS_PARAM[endpoint]}: ${err.message}`, {
      param: INPUTS_PARAM[endpoint],
      metadata: { upstream_kind: err.kind, upstream_status: err.upstreamStatus ?? null },
    });
  return upstreamToGateway(err);
}

/** Builds the embeddings pipeline with one shared image fetcher; `close` releases its sockets. */
export function createEmbeddingsService(deps: {
  config: Config;
  registry: Registry;
  quota: QuotaLedger;
  logs: { record(e: RequestLogEntry): void };
  health: HealthTracker;
}): EmbeddingsService {
  const g = deps.config.gateway;
  const fetcher = createSafeFetcher({ allowList: g.image_allow_hosts, timeoutMs: g.image_fetch_timeout_ms });
  const imageTotalTimeoutMs = g.image_fetch_total_timeout_ms;
  const timeouts: UpstreamTimeouts = {
    connectTimeoutMs: g.connect_timeout_ms,
    firstByteTimeoutMs: g.first_byte_timeout_ms,
    idleTimeoutMs: g.idle_timeout_ms,
  };
  const client = sharedUpstreamClient();
  const sendOptions = {
    ...timeouts,
    maxBodyBytes: g.max_embedding_response_bytes,
    maxErrorBodyBytes: g.max_error_body_bytes,
  };
  return new EmbeddingsService({
    registry: deps.registry,
    quota: deps.quota,
    logs: deps.logs,
    health: deps.health,
    fetcher,
    imageTotalTimeoutMs,
    send: (req, o) => client.send(req, sendOptions, o.signal),
    retry: { maxAttempts: g.max_attempts, retryBaseMs: g.retry_base_ms, retryMaxMs: g.retry_max_ms },
    defaultModel: g.default_embedding_model,
  });
}
