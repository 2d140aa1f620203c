import type { KeyPrincipal } from '../../access/api-keys.js';
import type { QuotaLedger, Reservation } from '../../access/quota/quota-ledger.js';
import type { ChatAdapter, UpstreamTarget } from '../../providers/types.js';
import type { CancelSignal } from '../cancel.js';
import { omitReasoningFromEvent, omitReasoningFromResult } from '../chat/reasoning.js';
import { generatedText, sampledPromptTokens, sampledTokens, withCountedCompletion } from '../chat/tokens.js';
import type { ChatResult, ChatStreamEvent, ChatUsage, ReportedUsage } from '../chat/types.js';
import { countsWellFormed, isCount, withDetailsInBounds } from '../chat/usage-counts.js';
import { GatewayError } from '../errors.js';
import { perObject } from '../per-object.js';
import { costOf, usdOfMicros } from '../registry/cost.js';
import { type Executed, type ExecuteOptions, executeRoute } from '../routing/execute.js';
import type { HealthTracker } from '../routing/health.js';
import type { AttemptRecord, Candidate, RouteTarget } from '../routing/types.js';
import { completeChat, openChatStream } from '../upstream/call-chat.js';
import type { ChatEventStream } from '../upstream/event-stream.js';
import { DEFAULT_TIMEOUTS, type SendOptions } from '../upstream/upstream-client.js';
import { errorKindOf, lastProvider, type RequestLogEntry } from '../usage/request-log-entry.js';
import { type ChatPlan, imagesSent, promptTokenCap, requestFor, reservationMicros } from './chat-plan.js';
import { readUntilShown } from './read-until-shown.js';

export interface ChatRunnerDeps {
  adapter(kind: string): ChatAdapter;
  health: HealthTracker;
  quota: QuotaLedger;
  logs: { record(e: RequestLogEntry): void };
  retry: { maxAttempts: number; retryBaseMs: number; retryMaxMs: number };
  /** Every upstream call's timeouts and size limits (no signal: each call passes its own). */
  upstream: Omit<SendOptions, 'signal'>;
  /**
   * A non-streamed call's, when they differ: its headers come only once the whole answer is
   * generated, so its first byte may take minutes (`gateway.non_stream_timeout_ms`).
   */
  upstreamComplete?: Omit<SendOptions, 'signal'>;
}

export interface ChatContext {
  requestId: string;
  principal: KeyPrincipal;
  signal: CancelSignal;
  startedAt: number;
  /** The request log's `endpoint`: the ingress the request came through (`chat.completions`, `messages`). */
  endpoint: string;
}

export interface ServedChat {
  target: RouteTarget;
  attempts: AttemptRecord[];
}

/** What `finish` is told about the outcome. */
export interface Finish {
  served?: ServedChat;
  usage?: ChatUsage;
  /** Without `usage`: what the upstream reported before its stream ended early. */
  reported?: ReportedUsage;
  completionText?: string;
  status: number;
  error?: unknown;
  ttftMs?: number | null;
  attempts?: AttemptRecord[];
}

/** What the request cost, for the answer's `usage`. */
export interface Bill {
  usage: ChatUsage | undefined;
  costMicros: number;
  /** `costMicros` in USD: the charged and logged figure, never the unrounded price. */
  costUsd: number;
}

export interface StreamOpened extends ServedChat {
  /** The events read until one the client must see (never an error before it); then `events`. */
  first: ChatStreamEvent[];
  events: ChatEventStream;
  /**
   * When the try that opened it began (epoch ms): a stream the client leaves logs its length.
   * Its end is reported to the health tracker as an ordinary request's (`probe` false): a
   * half-open circuit's probe was settled when the stream opened (`open`).
   */
  attemptStartedAt: number;
}

/**
 * The adapter's view of a route target with one of its keys, made once per (target, key):
 * targets live until the registry changes, so adapters may cache what they derive from one.
 */
const byKey = perObject((_t: RouteTarget) => new Map<string, UpstreamTarget>());
function upstreamTarget(t: RouteTarget, apiKey: string): UpstreamTarget {
  const keys = byKey(t);
  let u = keys.get(apiKey);
  if (!u) {
    u = {
      baseUrl: t.baseUrl,
      apiKey,
      upstreamModel: t.upstreamModel,
      headers: t.settings.headers as Record<string, string> | undefined,
      extra: t.settings,
      maxOutputTokens: t.maxCompletionTokens ?? undefined,
    };
    keys.set(apiKey, u);
  }
  return u;
}

/**
 * The prompt counted locally as `t` received it (after middle-out). Beyond 128 K characters the
 * count is a sampled estimate, which can come out above what could have been sent: it is billed
 * at most `promptTokenCap` (the byte bound, and with middle-out the context of the model that
 * took it), the figure the reservation priced, so the reservation stays an upper bound of the bill.
 */
function countedPrompt(plan: ChatPlan, t: RouteTarget): number {
  return Math.min(sampledPromptTokens(requestFor(plan, t)), promptTokenCap(plan, t));
}

/** Usage counted locally: the prompt as `t` received it (`countedPrompt`) and the generated text. */
export function countedUsage(plan: ChatPlan, t: RouteTarget, completionText: string): ChatUsage {
  const completion = sampledTokens([completionText]);
  const prompt = countedPrompt(plan, t);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/**
 * Reported usage whose counts are not all counts (`countsWellFormed`), with each malformed part
 * counted locally as for usage not reported at all, and the total their sum; the counts that
 * are counts stay the upstream's. Before, `"completion_tokens": -5` or `null` billed and showed
 * 0 completion tokens (free output), and `"12"` was billed 12 but logged and shown as 0.
 */
function withLocalCounts(plan: ChatPlan, t: RouteTarget, u: ChatUsage, completionText: string): ChatUsage {
  const prompt = isCount(u.prompt_tokens) ? u.prompt_tokens : countedPrompt(plan, t);
  const completion = isCount(u.completion_tokens) ? u.completion_tokens : sampledTokens([completionText]);
  return { ...u, prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/**
 * Runs one chat request end to end around the route executor: reserves quota, calls
 * upstreams (with retries/fallbacks), and — through `finish` — settles the quota on the
 * actual usage and writes the request log exactly once, for the upstream that served.
 */
export class ChatRunner {
  /** Route execution's options, the same for every request (the signal goes separately). */
  private readonly routeOptions: ExecuteOptions;

  constructor(private readonly deps: ChatRunnerDeps) {
    this.routeOptions = { health: deps.health, ...deps.retry };
  }

  /** The reservation itself when the ledger answers at once (local credit), else a promise. */
  reserve(plan: ChatPlan, ctx: ChatContext): Reservation | Promise<Reservation> {
    const { key, user } = ctx.principal;
    const limited = key.quota_limit_micros !== null || user.quota_limit_micros !== null;
    return this.deps.quota.reserve({
      keyId: key.id,
      userId: user.id,
      // Counting the prompt (the tokenizer) is only worth it when a limit needs the estimate.
      micros: limited ? reservationMicros(plan) : 0,
      limited,
      userLimited: user.quota_limit_micros !== null,
    });
  }

  private execute<T>(
    plan: ChatPlan,
    ctx: ChatContext,
    call: (c: Candidate, apiKey: string) => Promise<T>,
  ): Promise<Executed<T>> {
    return executeRoute(plan.candidates, call, this.routeOptions, ctx.signal);
  }

  /**
   * `completionText` is what the upstream generated, for counting usage it did not report
   * (undefined when it reported well-formed counts, `countsWellFormed`): taken before
   * `reasoning.exclude` removes the reasoning, which the upstream generated and bills all the same.
   */
  async complete(
    plan: ChatPlan,
    ctx: ChatContext,
  ): Promise<{ result: ChatResult; served: ServedChat; latencyMs: number; completionText?: string }> {
    const ex = await this.execute(plan, ctx, (c, apiKey) =>
      completeChat(
        this.deps.adapter(c.target.kind),
        requestFor(plan, c.target),
        upstreamTarget(c.target, apiKey),
        this.deps.upstreamComplete ?? this.deps.upstream,
        ctx.signal,
      ),
    );
    const latencyMs = Date.now() - ex.startedAt;
    const reported = ex.value.usage;
    const completionText = reported && countsWellFormed(reported) ? undefined : generatedText(ex.value);
    const result = plan.excludeReasoning ? omitReasoningFromResult(ex.value) : ex.value;
    this.deps.health.success(
      ex.candidate.healthKey,
      {
        latencyMs,
        // A malformed count ("12", -5) is no throughput sample.
        completionTokens: isCount(reported?.completion_tokens) ? reported.completion_tokens : undefined,
        durationMs: latencyMs,
      },
      ex.probe,
    );
    return {
      result,
      served: { target: ex.candidate.target, attempts: ex.attempts },
      latencyMs,
      completionText,
    };
  }

  /**
   * Opens a stream on the first candidate that answers 2xx and then produces something the
   * client must see before any error, end or first-byte timeout (`readUntilShown`), so nothing
   * has been written to the client when a candidate fails. A half-open circuit's probe that
   * opened the stream has succeeded there: its circuit closes.
   */
  async open(plan: ChatPlan, ctx: ChatContext): Promise<StreamOpened> {
    const ex = await this.execute(plan, ctx, async (c, apiKey) => {
      const deadline =
        Date.now() + (this.deps.upstream.firstByteTimeoutMs ?? DEFAULT_TIMEOUTS.firstByteTimeoutMs);
      const events = await openChatStream(
        this.deps.adapter(c.target.kind),
        requestFor(plan, c.target),
        upstreamTarget(c.target, apiKey),
        this.deps.upstream,
        ctx.signal,
      );
      return { events, first: await readUntilShown(events, deadline) };
    });
    // Its first content goes to the client now: a probe has shown the upstream serves again
    // (HealthTracker.probeServed), and the circuit need not wait for the end of the stream.
    if (ex.probe) this.deps.health.probeServed(ex.candidate.healthKey);
    return {
      ...ex.value,
      target: ex.candidate.target,
      attempts: ex.attempts,
      attemptStartedAt: ex.startedAt,
    };
  }

  /** Filters reasoning when excluded. */
  shapeEvent(plan: ChatPlan, ev: ChatStreamEvent): ChatStreamEvent | null {
    return plan.excludeReasoning ? omitReasoningFromEvent(ev) : ev;
  }

  /**
   * A request refused before any upstream call still leaves a log record (docs/quotas.md,
   * "Which requests leave a row"): by `planChat` (403 allow-list, 404 unknown model, 503 no
   * upstream, a 400 about the parameters), where there is no plan and the model is the one asked
   * for, or by the quota (402). No upstream, channel, tokens or cost.
   */
  recordRefusal(plan: Pick<ChatPlan, 'model' | 'stream'>, ctx: ChatContext, err: unknown): void {
    this.deps.logs.record({
      request_id: ctx.requestId,
      user_id: ctx.principal.user.id,
      key_id: ctx.principal.key.id,
      endpoint: ctx.endpoint,
      model: plan.model,
      latency_ms: Date.now() - ctx.startedAt,
      status: err instanceof GatewayError ? err.status : 500,
      error_kind: errorKindOf(err),
      stream: plan.stream,
    });
  }

  /**
   * Settles the reservation on what was actually used, then records the request (in that
   * order: the writer's batches keep settled spend equal to logged cost). Usage the upstream did
   * not report (or only in part: a stream that ended before its usage event; or as a count that
   * is not one, `withLocalCounts`) is counted locally from the prompt as sent and the generated
   * text. Synchronous when the ledger settles at once (the database ledger does: it only
   * queues), else a promise.
   */
  finish(plan: ChatPlan, ctx: ChatContext, reservation: Reservation, o: Finish): Bill | Promise<Bill> {
    return this.settle(plan, ctx, reservation, o, this.price(plan, o));
  }

  /**
   * `finish`'s first step: what was used, counted locally where the upstream did not report it,
   * and its cost, neither settled nor recorded. For a non-streamed answer, whose status is known
   * only once it is written (its client may have left meanwhile): `settle` follows.
   */
  price(plan: ChatPlan, o: Omit<Finish, 'status'>): Bill {
    let usage = o.usage;
    // What the upstream reported wins, part by part; the prompt is counted as the serving
    // upstream received it (middle-out may have cut it to a fraction). A count that is not one
    // is counted locally too, for the bill, the log and the client alike.
    if (o.served && o.completionText !== undefined) {
      if (!usage)
        usage = o.reported
          ? withCountedCompletion(o.reported, o.completionText)
          : countedUsage(plan, o.served.target, o.completionText);
      if (!countsWellFormed(usage)) usage = withLocalCounts(plan, o.served.target, usage, o.completionText);
    }
    // A detail past its total (50 cached of a 10-token prompt) is clamped in what the client is
    // told, as billing reads it: the bill, the log and the answer agree.
    if (usage) usage = withDetailsInBounds(usage);
    const model = o.served ? { pricing: o.served.target.pricing } : undefined;
    const u = usage && {
      prompt_tokens: usage.prompt_tokens,
      completion_tokens: usage.completion_tokens,
      cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
      cache_write_tokens: usage.prompt_tokens_details?.cache_write_tokens ?? 0,
      cache_write_1h_tokens: usage.prompt_tokens_details?.cache_write_1h_tokens ?? 0,
      reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0,
      // The images the upstream that served was sent, at the `image` price.
      images: o.served ? imagesSent(plan, o.served.target) : 0,
      // Searches an upstream's server tool ran (Anthropic's web search), at the `web_search` price.
      web_searches: usage.server_tool_use?.web_search_requests ?? 0,
    };
    const micros = model && u ? costOf(model, u) : 0;
    // The client is told what was charged and logged, to the micro-USD.
    return { usage, costMicros: micros, costUsd: usdOfMicros(micros) };
  }

  /** `finish`'s last step: settles the reservation on `bill`, then records the request as `o` ended. */
  settle(
    plan: ChatPlan,
    ctx: ChatContext,
    reservation: Reservation,
    o: Finish,
    bill: Bill,
  ): Bill | Promise<Bill> {
    const { usage, costMicros: micros } = bill;
    let settled: void | Promise<void>;
    try {
      settled = this.deps.quota.settle(reservation, micros);
    } catch (err) {
      this.record(plan, ctx, o, usage, micros);
      throw err;
    }
    if (settled === undefined) {
      this.record(plan, ctx, o, usage, micros);
      return bill;
    }
    return settled.then(
      () => {
        this.record(plan, ctx, o, usage, micros);
        return bill;
      },
      (err: unknown) => {
        this.record(plan, ctx, o, usage, micros);
        throw err;
      },
    );
  }

  private record(
    plan: ChatPlan,
    ctx: ChatContext,
    o: Finish,
    usage: ChatUsage | undefined,
    micros: number,
  ): void {
    const err = o.error;
    this.deps.logs.record({
      request_id: ctx.requestId,
      user_id: ctx.principal.user.id,
      key_id: ctx.principal.key.id,
      endpoint: ctx.endpoint,
      model: o.served?.target.modelId ?? plan.model,
      provider: o.served?.target.channelName ?? lastProvider(o.attempts),
      channel_id: o.served?.target.channelId ?? null,
      prompt_tokens: usage?.prompt_tokens ?? 0,
      completion_tokens: usage?.completion_tokens ?? 0,
      cost_micros: micros,
      latency_ms: Date.now() - ctx.startedAt,
      ttft_ms: o.ttftMs ?? null,
      status: o.status,
      error_kind: errorKindOf(err, ctx.signal),
      stream: plan.stream,
      attempts: o.served?.attempts ?? o.attempts ?? null,
    });
  }
}
