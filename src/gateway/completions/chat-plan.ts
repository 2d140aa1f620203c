import type { KeyPrincipal } from '../../access/api-keys.js';
import { withChanges } from '../chat/hidden.js';
import { badImageDataUrl } from '../chat/image-urls.js';
import { answerRoom, sentMaxTokens } from '../chat/max-tokens.js';
import { applyMiddleOut } from '../chat/middle-out.js';
import { requestedParameters } from '../chat/parameters.js';
import { resolveReasoning } from '../chat/reasoning.js';
import { measurePrompt, type PromptCounts, promptTokenBound } from '../chat/tokens.js';
import type { ChatRequest } from '../chat/types.js';
import { badRequest, forbidden, UnfitCandidate } from '../errors.js';
import { perObject } from '../per-object.js';
import type { Pricing } from '../registry/model-info.js';
import type { HealthTracker } from '../routing/health.js';
import { planRoute } from '../routing/plan.js';
import type { Candidate, ProviderPrefs, RouteTarget } from '../routing/types.js';
import { type ChatModel, resolveChatModel } from './model-variant.js';

export interface ChatPlan {
  request: ChatRequest;
  /** The model asked for (`model` or a default), without a variant suffix (`:nitro`...). */
  model: string;
  candidates: Candidate[];
  /** Registry ids of models whose `:thinking` variant turns reasoning on (undefined: none). */
  thinking: ReadonlySet<string> | undefined;
  /** The prompt measured for middle-out on first use (`measurePrompt`: bounded cost). */
  promptCounts(): PromptCounts;
  /** An upper bound on the prompt's tokens without the tokenizer (promptTokenBound: UTF-8 bytes). */
  promptBound(): number;
  /** The tokens middle-out keeps free for the answer on a target (`answerRoom`). */
  answerRoom(t: RouteTarget): number;
  /** The max_tokens a target is sent (undefined: none), the adapter's when it sets its own. */
  sentMaxTokens(t: RouteTarget): number | undefined;
  stream: boolean;
  includeUsage: boolean;
  excludeReasoning: boolean;
  middleOut: boolean;
}

export interface PlanDeps {
  targetsFor(model: string): RouteTarget[] | undefined;
  /**
   * Whether a model no upstream serves for chat (a registry id `targetsFor` answered `[]` for)
   * is served for embeddings only: an embedding model, or one only embeddings channels serve.
   */
  embeddingOnly(model: string): boolean;
  /**
   * Whether a key's allow-list admits `model` (the name as routing resolves it), `asWritten` being
   * the name the request wrote when it differs (a variant's): registry/allow-list.ts.
   */
  allows(allowed: readonly string[], model: string, asWritten: string): boolean;
  adapterParams(kind: string, target: RouteTarget): ReadonlySet<string> | undefined;
  /** The max_tokens the target's adapter sends for `req` when not the client's (`ChatAdapter.sentMaxTokens`). */
  sentMaxTokens?(req: ChatRequest, target: RouteTarget): number | undefined;
  health: HealthTracker;
  defaultModel: string;
}

/**
 * Everything decided before the first upstream call: the model (request, else the user's
 * default, else the server's), the key's allow-list, ranges that depend on the model, and
 * the ordered candidates.
 */
export function planChat(req: ChatRequest, principal: KeyPrincipal, deps: PlanDeps): ChatPlan {
  const asked = requestedModel(req, principal, deps);
  if (!asked) throw badRequest('model: is required (no default model is configured)', 'model');
  const primary = resolveChatModel(asked, deps.targetsFor, 'model');
  const allowed = principal.allowedModels;
  // A variant is a way of serving its base model: the key's allow-list is read for the base (and
  // the name as written, so an entry naming the variant itself allows it too).
  const mayUse = (m: ChatModel) => !allowed || deps.allows(allowed, m.id, m.name);
  if (!mayUse(primary)) throw forbidden(`this API key may not use model ${asked}`, 'model');
  if (req.reasoning?.effort && req.reasoning_effort && req.reasoning.effort !== req.reasoning_effort)
    throw badRequest('reasoning_effort: conflicts with reasoning.effort', 'reasoning_effort');
  if (req.top_logprobs !== undefined && req.top_logprobs > 0 && req.logprobs !== true)
    throw badRequest('top_logprobs: requires logprobs to be true', 'top_logprobs');
  // OpenAI's deprecated function calling: no adapter translates it (and `role: "function"`
  // messages are refused), so dropping it would serve a request whose functions the model never
  // saw, to a client waiting for a function_call. Refused, naming what to send instead.
  if (req.functions !== undefined || req.function_call !== undefined) {
    const legacy = req.functions !== undefined ? 'functions' : 'function_call';
    throw badRequest(
      `${legacy}: deprecated function calling is not supported; send tools (type "function") and tool_choice instead`,
      legacy,
    );
  }
  // Checked here, before any upstream: each would refuse it in its own words, after an attempt.
  const badImage = badImageDataUrl(req.messages);
  if (badImage) throw badImage;
  // Without tools, a tool_choice is left by the body's normalizer only when it demands a tool
  // (emptyToolsMeanNone).
  if (!req.tools?.length && req.tool_choice !== undefined)
    throw badRequest('tool_choice: requires a tool to call, and tools is empty or missing', 'tool_choice');
  const listed = req.models?.length ? withFallbacks(primary, req.models, deps, mayUse) : [primary];
  const models = chatModels(listed, deps);
  const thinking = thinkingModels(models, req);
  const routed = planRoute({
    models,
    prefs: (req.provider ?? undefined) as ProviderPrefs | undefined,
    // Only the names a model's supported_parameters can hold count (chat/parameters.ts).
    requestedParams: memo(() => requestedParameters(req)),
    adapterParams: deps.adapterParams,
    health: deps.health,
  });
  // The limit that is used (max_completion_tokens wins when both are sent) is the one checked,
  // and the error names it: a client that sent only max_completion_tokens looks for that name.
  const limitField = req.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens';
  const maxTokens = req[limitField];
  const candidates = maxTokens === undefined ? routed : fitting(routed, maxTokens, limitField);
  // A `:thinking` variant's candidates are sent reasoning on (requestFor).
  const sent = (t: RouteTarget): number | undefined => {
    if (!deps.sentMaxTokens) return sentMaxTokens(req, t.maxCompletionTokens);
    // withChanges: the hidden fields (anthropic_beta, anthropic_thinking) stay, so the max_tokens
    // planned is worked out for the request requestFor sends.
    const asSent = thinking?.has(t.modelId)
      ? withChanges(req, { reasoning: { ...req.reasoning, enabled: true } })
      : req;
    return deps.sentMaxTokens(asSent, t) ?? sentMaxTokens(req, t.maxCompletionTokens);
  };
  return {
    request: req,
    model: primary.id,
    candidates,
    thinking,
    promptCounts: memo(() => measurePrompt(req)),
    promptBound: memo(() => promptTokenBound(req)),
    answerRoom: (t) => answerRoom(t, sent(t)),
    sentMaxTokens: sent,
    stream: req.stream === true,
    includeUsage: req.usage?.include === true || req.stream_options?.include_usage === true,
    excludeReasoning: req.reasoning?.exclude === true,
    middleOut: req.transforms?.includes('middle-out') ?? false,
  };
}

/**
 * The model a request asks for: its own, else the first of its `models`, else its user's default,
 * else the server's ('' when none is configured). What a request refused by `planChat` is logged
 * under.
 */
export function requestedModel(
  req: ChatRequest,
  principal: KeyPrincipal,
  deps: Pick<PlanDeps, 'defaultModel'>,
): string {
  // OpenRouter: `models` alone is the list tried in order, so its first entry is the model asked
  // for (the rest its fallbacks; withFallbacks drops the repeat). Defaults come only after.
  return req.model || req.models?.[0] || principal.user.default_model || deps.defaultModel;
}

/**
 * `model` then the `models` fallbacks, each once: a name written twice, or a variant of a model
 * already listed (`x:nitro` after `x`), is dropped, the first one kept. Fallbacks the key may not
 * use are dropped rather than failing the request; unknown ones are left for the plan to skip.
 */
function withFallbacks(
  primary: ChatModel,
  fallbacks: string[],
  deps: PlanDeps,
  mayUse: (m: ChatModel) => boolean,
): ChatModel[] {
  const out = [primary];
  const seen = new Set([primary.name, primary.id]);
  for (const name of fallbacks) {
    if (seen.has(name)) continue;
    seen.add(name);
    const m = resolveChatModel(name, deps.targetsFor, 'models');
    if (m.id !== name && seen.has(m.id)) continue;
    seen.add(m.id);
    if (mayUse(m)) out.push(m);
  }
  return out;
}

/**
 * The listed models without those served for embeddings only: such a model in `models` is
 * skipped, as an unknown one is (it can never answer a chat request, so trying it would only
 * make a 503 that a retry cannot cure). When no listed model is a chat model (each is unknown or
 * serves embeddings only), the request is invalid input: a 400 naming the first embedding model,
 * and the field that listed it (`model` for the model asked for).
 */
function chatModels(listed: ChatModel[], deps: PlanDeps): ChatModel[] {
  const embedding = (m: ChatModel) => m.targets?.length === 0 && deps.embeddingOnly(m.id);
  // The usual request: its model has upstreams, nothing to look at.
  if (listed.length === 1 && listed[0]!.targets?.length) return listed;
  const chat = listed.filter((m) => !embedding(m));
  if (chat.length === listed.length) return listed;
  if (chat.every((m) => m.targets === undefined)) {
    const first = listed.find(embedding)!;
    const field = first === listed[0] ? 'model' : 'models';
    throw badRequest(
      `${field}: ${first.id} is an embedding model, not a chat model (use /v1/embeddings)`,
      field,
    );
  }
  return chat;
}

/**
 * The registry ids whose `:thinking` variant turns reasoning on: when the request does not say
 * whether to reason (`reasoning.enabled`, an effort, a budget). Else the variant changes nothing
 * and adds nothing to what `require_parameters` checks.
 */
function thinkingModels(models: ChatModel[], req: ChatRequest): ReadonlySet<string> | undefined {
  let out: Set<string> | undefined;
  for (const m of models) {
    if (m.variant !== 'thinking') continue;
    if (resolveReasoning(req)?.enabled !== undefined) {
      m.params = undefined;
      continue;
    }
    const id = m.targets?.[0]?.modelId;
    if (id === undefined) continue;
    out ??= new Set();
    out.add(id);
  }
  return out;
}

/**
 * The candidates whose context can hold the completion limit, in order. A model that cannot is
 * skipped, as OpenRouter routes a set `max_tokens` only to providers that can produce it, rather
 * than sent a request it would refuse; the 400 (naming the field sent and the largest context
 * offered) comes only when no candidate can. The usual list, where every candidate fits, is
 * returned as is.
 */
function fitting(candidates: Candidate[], maxTokens: number, field: string): Candidate[] {
  let widest = candidates[0]!.target;
  let fits = 0;
  for (const { target: t } of candidates) {
    if (maxTokens < t.contextLength) fits++;
    if (t.contextLength > widest.contextLength) widest = t;
  }
  if (fits === candidates.length) return candidates;
  if (fits === 0)
    throw badRequest(
      `${field}: must be below the context length of ${widest.modelId} (${widest.contextLength})`,
      field,
    );
  return candidates.filter((c) => maxTokens < c.target.contextLength);
}

/** Middle-out's result per plan, context length and reserve: retries and fallbacks of one size reuse it. */
const cuts = new WeakMap<ChatPlan, Map<string, ChatRequest | null>>();

/**
 * The request as one candidate receives it: routing fields are left for the adapter to drop,
 * middle-out compresses the prompt to this candidate's context when asked, and a `:thinking`
 * variant of its model turns reasoning on (keeping the request's `exclude`).
 */
export function requestFor(plan: ChatPlan, t: RouteTarget): ChatRequest {
  const r = plan.middleOut ? cutFor(plan, t) : plan.request;
  if (plan.thinking === undefined || !plan.thinking.has(t.modelId)) return r;
  return withChanges(r, { reasoning: { ...r.reasoning, enabled: true } });
}

/** The request with its prompt cut by middle-out to fit `t`'s context, when it does not already. */
function cutFor(plan: ChatPlan, t: RouteTarget): ChatRequest {
  const reserve = plan.answerRoom(t);
  // The bound (bytes, no tokenizer) settles a prompt that clearly fits; one that may not is
  // measured once for all candidates (bounded cost), and middle-out goes by those counts.
  if (plan.promptBound() + reserve < t.contextLength) return plan.request;
  let byContext = cuts.get(plan);
  if (!byContext) {
    byContext = new Map();
    cuts.set(plan, byContext);
  }
  const size = `${t.contextLength}/${reserve}`;
  let r = byContext.get(size);
  if (r === undefined) {
    r = middleOut(plan, t.contextLength, reserve);
    byContext.set(size, r);
  }
  if (r === null)
    throw new UnfitCandidate(
      `messages: the prompt does not fit ${t.modelId} (context ${t.contextLength} tokens) even after middle-out`,
      'messages',
    );
  return r;
}

/** The request cut to `contextLength`; null when even what middle-out must keep does not fit. */
function middleOut(plan: ChatPlan, contextLength: number, reserve: number): ChatRequest | null {
  const counts = plan.promptCounts();
  const r = applyMiddleOut(
    plan.request.messages,
    { contextLength, reserveTokens: reserve, overheadTokens: counts.overhead },
    counts.messages,
  );
  if (!r.fits) return null;
  if (r.removed === 0 && r.truncated === 0) return plan.request;
  return withChanges(plan.request, { messages: r.messages });
}

/**
 * The most prompt tokens `t` can be billed for, without the tokenizer and without running
 * middle-out: the prompt's byte bound (`promptBound`), and with middle-out also `t`'s context,
 * since middle-out cuts a longer prompt to fit it and a candidate it cannot fit is skipped,
 * never sent. Before, the reservation priced the whole prompt even when it would be cut: a key
 * near its limit got a 402 for a huge prompt that would have cost a fraction of it.
 */
export function promptTokenCap(plan: ChatPlan, t: RouteTarget): number {
  const bound = plan.promptBound();
  return plan.middleOut ? Math.min(bound, t.contextLength) : bound;
}

/**
 * Worst-case cost of the request over its candidates, in micro-USD, for the quota reservation.
 * Each is priced at its own upstream's price (a channel's `settings.pricing`): which one serves is
 * known only after the call, so the dearest candidate decides, and the bill (at the price of the
 * one that served) never exceeds the estimate on price.
 */
export function reservationMicros(plan: ChatPlan): number {
  let worst = 0;
  for (const { target: t } of plan.candidates) {
    const maxTokens = plan.sentMaxTokens(t);
    const prompt = promptTokenCap(plan, t);
    const limit = t.maxCompletionTokens ?? 4096;
    // Without max_tokens the completion is what the context leaves after the prompt. A prompt
    // middle-out cut is measured to fit under the context, so it may leave room for the whole
    // completion limit: the prompt's cap (the context) says nothing about what it leaves.
    const completion =
      maxTokens ??
      (plan.middleOut
        ? Math.min(limit, t.contextLength)
        : Math.min(limit, Math.max(1, t.contextLength - Math.min(prompt, t.contextLength))));
    const price = worstPrices(t.pricing);
    // Images at most as many as the client sent (middle-out only removes them).
    const images = price.image > 0 ? imagesIn(plan.request) : 0;
    const usd = prompt * price.prompt + completion * price.completion + price.request + images * price.image;
    worst = Math.max(worst, usd);
  }
  return Math.ceil(worst * 1e6);
}

/**
 * A target's prices as the reservation counts them, worked out once per pricing object (targets
 * and their prices live until the registry is rebuilt), not per request. Every prompt token may
 * be billed as a cache write (Anthropic's `cache_control`: 1.25x the prompt price, 2x with
 * `ttl: "1h"`), the dearest way a prompt token can be billed, and every completion token a
 * reasoning token (`internal_reasoning`) when that is dearer, so the estimate stays an upper
 * bound (docs/quotas.md's guarantee).
 */
const worstPrices = perObject((p: Pricing) => ({
  prompt: Math.max(
    Number(p.prompt) || 0,
    Number(p.input_cache_write) || 0,
    Number(p.input_cache_write_1h) || 0,
  ),
  completion: Math.max(Number(p.completion) || 0, Number(p.internal_reasoning) || 0),
  request: Number(p.request),
  image: Number(p.image) || 0,
}));

/**
 * The images a request sends (`image_url` parts, in any message), priced per image at
 * `pricing.image` (OpenRouter's price per input image). Counted once per request object: the
 * client's for the reservation, the one the upstream that served received for the bill (after
 * middle-out, which removes whole turns, images with them).
 */
export const imagesIn = perObject((r: ChatRequest): number => {
  let n = 0;
  for (const m of r.messages)
    if (Array.isArray(m.content)) for (const p of m.content) if (p.type === 'image_url') n++;
  return n;
});

/** The images `t` was sent (`imagesIn` of its request), 0 where it has no image price. */
export function imagesSent(plan: ChatPlan, t: RouteTarget): number {
  return Number(t.pricing.image) > 0 ? imagesIn(requestFor(plan, t)) : 0;
}

function memo<T>(fn: () => T): () => T {
  let v: T | undefined;
  return () => {
    v ??= fn();
    return v;
  };
}
