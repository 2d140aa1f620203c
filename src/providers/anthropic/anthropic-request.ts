/**
 * Canonical request -> Anthropic Messages (`POST {base}/v1/messages`, `x-api-key`,
 * `anthropic-version: 2023-06-01`).
 *
 * Target options (`target.extra`): `defaultMaxTokens` (default 4096: Anthropic requires
 * `max_tokens`), `version` (anthropic-version), `beta` (anthropic-beta header, merged with the
 * client's betas, those `client_betas` allows: `anthropicHeaders`),
 * `structuredOutputs` (true|false: whether the model takes `output_config.format`, instead of the
 * name rule in `anthropic-output-format.ts`), `effort` (true|false|levels: whether, and at which
 * levels, the model takes `output_config.effort`, instead of the name rule in `anthropic-effort.ts`).
 *
 * Mapped: max_tokens/max_completion_tokens (at most the model's output limit, `target.maxOutputTokens`,
 * when the registry knows it: Anthropic refuses more), temperature (clamped to Anthropic's 0..1), top_p (only
 * without temperature: newer models refuse both), top_k,
 * stop -> stop_sequences (whitespace-only ones removed: Anthropic rejects them), safety_identifier
 * or else user -> metadata.user_id (see `endUserId`), top-level cache_control (automatic prompt
 * caching, as OpenRouter passes it) as it is, tools, tool_choice (required -> any, named -> tool), parallel_tool_calls:false ->
 * disable_parallel_tool_use, reasoning -> thinking, response_format json_schema ->
 * output_config.format on models with structured outputs (Claude 4.5 and later; the schema
 * adapted, see `anthropic-output-format.ts`), verbosity -> output_config.effort on models with
 * effort (Opus 4.5, Opus and Sonnet 4.6 and later; the nearest level the model takes, see
 * `anthropic-effort.ts`). From the Anthropic ingress, hidden (types.ts): its Anthropic-defined
 * tools (web search, bash, ...) among the custom ones where the client had them, and a tool_choice
 * naming one, as sent. Everything else (penalties, seed, logprobs,
 * logit_bias, n, response_format json_object or on older models, min_p...) is dropped.
 *
 * Thinking: on models that think only adaptively (`thinksAdaptively`: Opus 4.7+, 5.x), adaptive
 * thinking shown (`display: summarized`) with the effort as `output_config.effort`
 * (`adaptiveEffort`) and no budget. Elsewhere budget = reasoning.max_tokens, else effort ratio x
 * max_tokens, at least 1024 and at most 128000. Anthropic needs budget < max_tokens, so max_tokens is raised to budget + the
 * requested (or default) answer length when it would not be, but not past the model's output
 * limit (`target.maxOutputTokens`, from the registry): there the budget is cut instead, and a
 * limit of 1024 or less leaves thinking off. Except for a client's own budget sent with the
 * interleaved-thinking beta (`anthropic_beta`) that the call carries (`interleavedSent`): Anthropic
 * takes that budget at or past max_tokens (it spans all the thinking blocks of the turn), so
 * budget and max_tokens go as the client sent them, uncapped. With thinking on, Anthropic refuses
 * temperature and top_k (dropped), top_p below 0.95 (dropped) and forced tool use (any/tool become auto).
 * In a tool loop whose last assistant turn came back without its thinking blocks, and with an
 * assistant prefill, thinking is left off for the request (Anthropic refuses it otherwise; see
 * `toolTurnLostThinking`); so it is for models without thinking (Claude before 3.7 Sonnet, see
 * `takesThinking`; the channel setting `thinking: true|false` overrides the name rule).
 */
import { sentMaxTokens } from '../../gateway/chat/max-tokens.js';
import {
  effortFromBudget,
  type ResolvedReasoning,
  reasoningBudget,
  resolveReasoning,
} from '../../gateway/chat/reasoning.js';
import type { AnthropicDefinedTool, ChatRequest } from '../../gateway/chat/types.js';
import { joinUrl } from '../shared/media.js';
import { functionTools } from '../shared/tools.js';
import type { UpstreamHttpRequest, UpstreamTarget } from '../types.js';
import { anthropicEffort, type Effort, nearestEffort } from './anthropic-effort.js';
import { type AnthropicMessage, toAnthropicMessages } from './anthropic-messages.js';
import { anthropicOutputFormat } from './anthropic-output-format.js';
import { takesThinking, thinksAdaptively } from './claude-model.js';

/** The interleaved-thinking beta (`interleaved-thinking-2025-05-14`, and any later date). */
export const isInterleavedThinking = (beta: string): boolean => beta.startsWith('interleaved-thinking-');

const BASE_PARAMS = [
  'messages',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'top_k',
  'stop',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'user',
  'safety_identifier',
  'cache_control',
  'reasoning',
  'reasoning_effort',
];
const STRUCTURED = ['response_format', 'structured_outputs'];
/** What a model without structured outputs or effort can express. */
export const ANTHROPIC_PARAMS: ReadonlySet<string> = new Set(BASE_PARAMS);
/** What a model with structured outputs (`takesStructuredOutputs`) and no effort can express. */
export const ANTHROPIC_STRUCTURED_PARAMS: ReadonlySet<string> = new Set([...BASE_PARAMS, ...STRUCTURED]);
/** What a model with effort (`takesEffort`: `verbosity`) and no structured outputs can express. */
export const ANTHROPIC_EFFORT_PARAMS: ReadonlySet<string> = new Set([...BASE_PARAMS, 'verbosity']);
/** What a model with both can express: everything this kind sends. */
export const ANTHROPIC_ALL_PARAMS: ReadonlySet<string> = new Set([
  ...BASE_PARAMS,
  ...STRUCTURED,
  'verbosity',
]);

export const DEFAULT_MAX_TOKENS = 4096;

/**
 * The max_tokens sent when the client asked none (Anthropic requires one): the channel's
 * `defaultMaxTokens`, else 4096, at most the model's output limit when the registry knows it.
 */
export function anthropicDefaultMaxTokens(
  settings: Record<string, unknown> | undefined,
  limit: number | null | undefined,
): number {
  const d = typeof settings?.defaultMaxTokens === 'number' ? settings.defaultMaxTokens : DEFAULT_MAX_TOKENS;
  return limit == null ? d : Math.min(d, limit);
}
/** The answer's length asked (at most the model's output limit), else the default sent. */
function anthropicAnswerLength(
  req: ChatRequest,
  settings: Record<string, unknown> | undefined,
  limit: number | null | undefined,
): number {
  return sentMaxTokens(req, limit) ?? anthropicDefaultMaxTokens(settings, limit);
}

/**
 * `max_tokens` as sent, and the thinking budget (0: none) when thinking goes on (`r`, the request's
 * resolved reasoning; undefined: thinking stays off). A budget is
 * part of max_tokens, so a budget at or past the answer's length raises max_tokens to budget +
 * answer; past the model's output limit (the 400 above), max_tokens stops at the limit and the
 * budget gives way, so the answer keeps the length asked for while the budget stays at least
 * 1024, and a limit with no room for 1024 below it leaves thinking off rather than failing. A
 * client's max_tokens past the limit with its budget within it (as an Anthropic client sends:
 * its max_tokens holds the thinking) asked for `max_tokens - budget` to answer, which is kept: the
 * budget is the rest of the limit (it fell to 1024, the clamped max_tokens taken for the answer).
 * Adaptive thinking as the Anthropic client sent it: the model decides how much to think within
 * max_tokens, so no budget is made (and none is added). The client's own budget with the
 * interleaved-thinking beta, when the call carries the beta (`interleavedSent`): Anthropic takes
 * it at or past max_tokens (it spans the turn's thinking blocks), so both go as the client sent
 * them; a channel that does not forward the beta gets the budget within max_tokens, as above.
 */
export function anthropicLengths(
  req: ChatRequest,
  settings: Record<string, unknown> | undefined,
  limit: number | null | undefined,
  r: ResolvedReasoning | undefined,
  adaptiveOnly = false,
): { maxTokens: number; budget: number; adaptive: boolean } {
  const answer = anthropicAnswerLength(req, settings, limit);
  if (r === undefined) return { maxTokens: answer, budget: 0, adaptive: false };
  // A model that thinks only adaptively (`thinksAdaptively`) takes no budget either.
  if (req.anthropic_thinking?.type === 'adaptive' || adaptiveOnly)
    return { maxTokens: answer, budget: 0, adaptive: true };
  if (r.budget !== undefined && interleavedSent(req, settings))
    return { maxTokens: answer, budget: Math.max(MIN_THINKING_BUDGET, r.budget), adaptive: false };
  let maxTokens = answer;
  let budget = reasoningBudget(r, maxTokens, { min: MIN_THINKING_BUDGET, cap: MAX_THINKING_BUDGET });
  if (maxTokens <= budget) {
    maxTokens = budget + answer;
    if (limit != null && maxTokens > limit) {
      maxTokens = limit;
      // The answer keeps the length asked for: past a budget within the client's own max_tokens
      // (Anthropic's holds the thinking) cut to the limit, the room it left beside the budget.
      const asked = req.max_completion_tokens ?? req.max_tokens;
      const room = asked !== undefined && asked > answer && asked > budget ? asked - budget : answer;
      budget = Math.max(MIN_THINKING_BUDGET, Math.min(budget, limit - room));
      if (budget >= limit) return { maxTokens: answer, budget: 0, adaptive: false };
    }
  }
  return { maxTokens, budget, adaptive: false };
}

export const MIN_THINKING_BUDGET = 1024;
export const MAX_THINKING_BUDGET = 128_000;

/**
 * The headers of a call. `anthropic-beta`: the channel's `beta` and the client's values (the
 * Anthropic ingress's `anthropic-beta`, or `x-anthropic-beta` on the OpenAI-shaped ingresses:
 * `ChatRequest.anthropic_beta`) that `client_betas` allows, comma-joined, the channel's
 * first, without duplicates; the channel's as configured when the client sent none. The channel's
 * own `headers` come last and win, as for every kind.
 */
export function anthropicHeaders(
  target: UpstreamTarget,
  accept: string,
  clientBetas?: readonly string[],
): Record<string, string> {
  const h: Record<string, string> = {
    'content-type': 'application/json',
    accept,
    'x-api-key': target.apiKey,
    'anthropic-version': typeof target.extra?.version === 'string' ? target.extra.version : '2023-06-01',
  };
  const beta = sentBetas(target.extra, clientBetas);
  if (beta !== undefined) h['anthropic-beta'] = beta;
  return target.headers ? Object.assign(h, target.headers) : h;
}

/**
 * The `anthropic-beta` a channel (`settings`) sends for the client's betas: the channel's `beta`
 * merged with those of the client's its `client_betas` allows; undefined for none.
 */
function sentBetas(
  settings: Record<string, unknown> | undefined,
  clientBetas: readonly string[] | undefined,
): string | undefined {
  const beta = typeof settings?.beta === 'string' ? settings.beta : undefined;
  const allowed =
    clientBetas && clientBetas.length > 0 ? clientBetas.filter(allowedBeta(settings?.client_betas)) : [];
  return allowed.length > 0 ? mergedBetas(beta, allowed) : beta;
}

/**
 * Whether the client asked for interleaved thinking (`anthropic_beta`) and the call carries the
 * beta in the `anthropic-beta` header it sends (`anthropicHeaders`). That is the gateway's (the
 * client's betas the channel forwards, `client_betas`, and its own `beta`), unless the channel's
 * `headers` have an `anthropic-beta`, which replaces it (`settings.headers` become the target's
 * `headers`, and channel headers win). Only then does Anthropic take a budget at or past
 * max_tokens; without the beta it refuses one.
 */
function interleavedSent(req: ChatRequest, settings: Record<string, unknown> | undefined): boolean {
  if (req.anthropic_beta?.some(isInterleavedThinking) !== true) return false;
  const headers = settings?.headers as Record<string, unknown> | undefined;
  if (headers?.['anthropic-beta'] === undefined && namesInterleaved(sentBetas(settings, req.anthropic_beta)))
    return true;
  // One spelled otherwise (`Anthropic-Beta`) replaces nothing: a second line, read as one list.
  for (const name in headers ?? {})
    if (name.toLowerCase() === 'anthropic-beta' && namesInterleaved(headers?.[name])) return true;
  return false;
}

const namesInterleaved = (header: unknown): boolean =>
  typeof header === 'string' && header.split(',').some((b) => isInterleavedThinking(b.trim()));

/**
 * The client betas an Anthropic channel forwards unless its `settings.client_betas` says
 * otherwise: those that change how a request is streamed, cached or thought through, and are
 * billed by the tokens the gateway counts. Left out: betas that bill what the gateway does not
 * price (`context-1m-*`: long-context rates; `code-execution-*`: container time), or reach the
 * operator's account beyond the request (`files-api-*`: the account's files; `mcp-client-*`,
 * `skills-*`).
 */
const DEFAULT_CLIENT_BETAS = [
  'interleaved-thinking-*',
  'fine-grained-tool-streaming-*',
  'token-efficient-tools-*',
  'prompt-caching-*',
  'extended-cache-ttl-*',
  'output-128k-*',
  'context-management-*',
  'claude-code-*',
  'computer-use-*',
];

/**
 * Which client betas a channel forwards: `settings.client_betas`, a list of names, or prefixes
 * ending in `*` (`["*"]`: all, `[]`: none), else `DEFAULT_CLIENT_BETAS`.
 */
function allowedBeta(setting: unknown): (beta: string) => boolean {
  const patterns = Array.isArray(setting)
    ? setting.filter((p): p is string => typeof p === 'string')
    : DEFAULT_CLIENT_BETAS;
  return (beta) => patterns.some((p) => (p.endsWith('*') ? beta.startsWith(p.slice(0, -1)) : beta === p));
}

function mergedBetas(channel: string | undefined, client: readonly string[]): string {
  const out: string[] = [];
  for (const v of [...(channel?.split(',') ?? []), ...client]) {
    const b = v.trim();
    if (b !== '' && !out.includes(b)) out.push(b);
  }
  return out.join(',');
}

/** `https://api.anthropic.com` and `https://api.anthropic.com/v1` both work as base URLs. */
export function anthropicUrl(baseUrl: string, path: string): string {
  return /\/v1\/?$/.test(baseUrl) ? joinUrl(baseUrl, path) : joinUrl(baseUrl, `v1/${path}`);
}

/**
 * Anthropic requires `input_schema.type: "object"`; OpenAI takes any JSON Schema object for a
 * function's parameters, including `{}` or one with `properties` but no `type`, which Anthropic
 * rejects with a 400. Those get the type; absent parameters are an empty object schema.
 */
function inputSchema(parameters: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!parameters) return { type: 'object', properties: {} };
  return parameters.type === undefined ? { type: 'object', ...parameters } : parameters;
}

/**
 * The custom tools with the Anthropic-defined ones put back, unchanged, where the client had
 * them among the custom tools (`at`); one past the end goes last.
 */
function withDefinedTools(
  custom: Record<string, unknown>[],
  defined: readonly AnthropicDefinedTool[],
): Record<string, unknown>[] {
  if (defined.length === 0) return custom;
  const out: Record<string, unknown>[] = [];
  let next = 0;
  custom.forEach((t, i) => {
    while (next < defined.length && defined[next]!.at <= i) out.push(defined[next++]!.tool);
    out.push(t);
  });
  while (next < defined.length) out.push(defined[next++]!.tool);
  return out;
}

/**
 * With thinking on, Anthropic requires the last assistant turn, when it holds tool_use (a tool
 * loop) or ends the conversation (a prefill), to start with its thinking / redacted_thinking
 * blocks, as answered, and refuses the request otherwise (400 "Expected `thinking` or
 * `redacted_thinking`, but found `tool_use`... To avoid this requirement, disable `thinking`").
 * Clients that do not send `reasoning_details` back (most OpenAI clients) cannot meet it, nor can
 * a prefill: such a request goes without thinking.
 */
function toolTurnLostThinking(messages: AnthropicMessage[]): boolean {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== 'assistant') continue;
    if (i !== messages.length - 1 && !m.content.some((b) => b.type === 'tool_use')) return false;
    const first = m.content[0]?.type;
    return first !== 'thinking' && first !== 'redacted_thinking';
  }
  return false;
}

/**
 * The `output_config.effort` of adaptive thinking asked through `reasoning`: its effort, or for a
 * budget alone the effort whose share of max_tokens is nearest the budget's (OpenRouter's ratios),
 * at the nearest level the model takes. Undefined (the model's default, high) for none.
 */
function adaptiveEffort(
  r: ResolvedReasoning | undefined,
  maxTokens: number,
  target: UpstreamTarget,
): Effort | undefined {
  if (!r) return undefined;
  const effort = r.effort ?? (r.budget !== undefined ? effortFromBudget(r.budget, maxTokens) : undefined);
  // OpenRouter's `minimal` is Anthropic's lowest, `low`.
  return nearestEffort(effort === 'minimal' ? 'low' : effort, target);
}

/**
 * The end-user id for `metadata.user_id` (an opaque id Anthropic uses to detect abuse; at most
 * 256 characters, which the chat schema enforces on both fields). OpenAI's `safety_identifier`,
 * the successor of `user` for exactly this purpose, wins over `user` when both are set.
 */
function endUserId(req: ChatRequest): string | undefined {
  const id = req.safety_identifier;
  if (typeof id === 'string' && id !== '') return id;
  return req.user || undefined;
}

export function buildAnthropicRequest(
  req: ChatRequest,
  target: UpstreamTarget,
  opts: { stream: boolean },
): UpstreamHttpRequest {
  const { system, messages } = toAnthropicMessages(req.messages);
  // Anthropic refuses a max_tokens above the model's output limit (400 "max_tokens: N > M, which
  // is the maximum allowed number of output tokens"), and the answer cannot be longer than the
  // limit anyway: the limit is sent instead, when the registry knows it (`target.maxOutputTokens`).
  const answer = anthropicAnswerLength(req, target.extra, target.maxOutputTokens);
  const body: Record<string, unknown> = { model: target.upstreamModel, max_tokens: answer, messages };
  if (system.length > 0) body.system = system;
  if (req.temperature !== undefined) body.temperature = Math.min(1, req.temperature);
  if (req.top_p !== undefined) body.top_p = req.top_p;
  if (req.top_k !== undefined) body.top_k = req.top_k;
  const stops = (typeof req.stop === 'string' ? [req.stop] : (req.stop ?? [])).filter((s) => s.trim() !== '');
  if (stops.length > 0) body.stop_sequences = stops;
  const userId = endUserId(req);
  if (userId) body.metadata = { user_id: userId };
  // Automatic prompt caching: Anthropic puts the breakpoint on the last cacheable block itself.
  if (req.cache_control) body.cache_control = req.cache_control;

  let toolChoice: Record<string, unknown> | undefined;
  const fns = functionTools(req);
  // Non-enumerable, from the Anthropic ingress: its Anthropic-defined tools and a choice the chat
  // request cannot say (types.ts).
  const defined = req.anthropic_tools ?? [];
  if (fns.tools.length > 0 || defined.length > 0) {
    const custom = fns.tools.map((t) => ({
      // Non-enumerable, from the Anthropic ingress: the tool's fields the chat tool has no name for.
      ...t.anthropic_fields,
      name: t.function.name,
      ...(t.function.description ? { description: t.function.description } : {}),
      input_schema: inputSchema(t.function.parameters),
      // Non-enumerable, from the Anthropic ingress (CacheControl in types.ts).
      ...(t.cache_control ? { cache_control: t.cache_control } : {}),
    }));
    body.tools = withDefinedTools(custom, defined);
    const tc = fns.choice;
    if (req.anthropic_tool_choice) toolChoice = { ...req.anthropic_tool_choice };
    else if (tc === 'none') toolChoice = { type: 'none' };
    else if (tc === 'required') toolChoice = { type: 'any' };
    else if (tc === 'tool') toolChoice = { type: 'tool', name: fns.name };
    else if (tc === 'auto' || req.parallel_tool_calls === false) toolChoice = { type: 'auto' };
    if (toolChoice && toolChoice.type !== 'none' && req.parallel_tool_calls === false) {
      toolChoice.disable_parallel_tool_use = true;
    }
  }

  // Claude before 3.7 Sonnet refuses `thinking`: reasoning asked of it is dropped, as an upstream
  // drops what it does not support (`takesThinking`).
  const r = takesThinking(target.upstreamModel, target.extra) ? resolveReasoning(req) : undefined;
  const thinking = r?.enabled === true && !toolTurnLostThinking(messages);
  const { maxTokens, budget, adaptive } = anthropicLengths(
    req,
    target.extra,
    target.maxOutputTokens,
    thinking ? r : undefined,
    thinksAdaptively(target.upstreamModel, target.extra),
  );
  /** The effort adaptive thinking was asked at, from `reasoning` (`adaptiveEffort`). */
  let thinkingEffort: Effort | undefined;
  if (budget > 0 || adaptive) {
    body.max_tokens = maxTokens;
    if (req.anthropic_thinking?.type === 'adaptive') body.thinking = { ...req.anthropic_thinking };
    else if (adaptive) {
      // Opus 4.7 and later show no thinking text unless asked: shown, as a budget's thinking is.
      body.thinking = { type: 'adaptive', display: r?.exclude ? 'omitted' : 'summarized' };
      thinkingEffort = adaptiveEffort(r, maxTokens, target);
    } else body.thinking = { type: 'enabled', budget_tokens: budget };
    delete body.temperature;
    delete body.top_k;
    if (typeof body.top_p === 'number' && body.top_p < 0.95) delete body.top_p;
    if (toolChoice && (toolChoice.type === 'any' || toolChoice.type === 'tool')) {
      toolChoice = {
        type: 'auto',
        ...(toolChoice.disable_parallel_tool_use ? { disable_parallel_tool_use: true } : {}),
      };
    }
  }
  // Claude models from Sonnet 4.5 on refuse both (400 "`temperature` and `top_p` cannot both be
  // specified for this model"); OpenAI clients often send both, top_p mostly at its default of 1.
  // Temperature is the one kept.
  if (body.temperature !== undefined && body.top_p !== undefined) delete body.top_p;
  if (toolChoice) body.tool_choice = toolChoice;
  const format = anthropicOutputFormat(req, target, messages.at(-1)?.role === 'assistant');
  const effort = anthropicEffort(req, target) ?? thinkingEffort;
  if (format || effort) body.output_config = { ...(effort ? { effort } : {}), ...(format ? { format } : {}) };
  if (opts.stream) body.stream = true;

  return {
    method: 'POST',
    url: anthropicUrl(target.baseUrl, 'messages'),
    headers: anthropicHeaders(
      target,
      opts.stream ? 'text/event-stream' : 'application/json',
      req.anthropic_beta,
    ),
    body: JSON.stringify(body),
  };
}
