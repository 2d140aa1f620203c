/**
 * Canonical request -> OpenAI Chat Completions body. This is the hot path: the body is a shallow
 * copy of the client request filtered by an allow-list, `messages` is reused as is unless a message
 * needs a change, and nothing is deep-copied.
 *
 * Target options read from `target.extra`:
 * - `supportedParams: string[]`: replace the default allow-list (a server that rejects unknown fields).
 *   The limit and reasoning are sent when it names one of their spellings (`max_tokens` or
 *   `max_completion_tokens`; `reasoning`, `reasoning_effort` or `include_reasoning`), and sent
 *   under the name this upstream takes.
 * - `maxTokensField: 'max_tokens' | 'max_completion_tokens'`: force the field name for the limit.
 *   Default: `max_completion_tokens` for api.openai.com (every current model accepts it and reasoning
 *   models reject `max_tokens`) and for model names of OpenAI reasoning models (o1/o3/o4..., gpt-5...);
 *   `max_tokens` everywhere else (Ollama ignores `max_completion_tokens`).
 * - `reasoningModel: boolean`: override the o-series/gpt-5 name rule. Reasoning models also get
 *   temperature, top_p, penalties, logprobs and logit_bias dropped (OpenAI rejects them there),
 *   and the o-series and gpt-5 up to 5.4 also `stop`. On api.openai.com only gpt-5 and later
 *   get `verbosity` (the others, o-series included, take only the default and refuse any other).
 * - `reasoningObject: true`: the upstream speaks OpenRouter; forward `reasoning` as is, keep
 *   the history's assistant reasoning and `developer` messages (below), and allow OpenRouter's
 *   own fields (OPENROUTER_PARAMS: `top_a`, ...) unless `supportedParams` says otherwise.
 *   Otherwise `reasoning` becomes `reasoning_effort` (a budget is turned into the nearest effort).
 * - `streamUsage: false`: do not send `stream_options.include_usage` (servers that choke on it).
 *
 * `service_tier: "fast"` (OpenRouter's alias of `priority`) is sent as `priority` except to an
 * upstream that speaks OpenRouter.
 *
 * What an upstream receives is decided once per upstream (`targetFacts`, target-facts.ts), and
 * route planning reads the same decision (`openAiParamsFor`) for `provider.require_parameters`.
 * The history is rewritten for it in plain-messages.ts.
 *
 * Dropped always: routing fields (models, provider, transforms, usage, plugins, route, debug).
 * Assistant `reasoning` / `reasoning_details` are removed from history (OpenAI's strict message
 * schema and self-hosted chat templates do not know them) unless `reasoningObject` says the upstream
 * speaks OpenRouter, which wants them back; and for hosts other than api.openai.com
 * `developer` becomes `system`, except for an upstream that speaks OpenRouter (it takes `developer`).
 * api.openai.com does not get Anthropic's `cache_control` breakpoints on messages and their parts
 * (OpenRouter's clients put them there): it answers 400 "Unknown parameter:
 * 'messages[0].content[0].cache_control'", and caches prefixes on its own. Other hosts get them
 * (OpenRouter and some OpenAI-compatible APIs read them).
 */
import { sentMaxTokens } from '../../gateway/chat/max-tokens.js';
import { effortFromBudget, resolveReasoning } from '../../gateway/chat/reasoning.js';
import type { ChatRequest } from '../../gateway/chat/types.js';
import type { UpstreamHttpRequest, UpstreamTarget } from '../types.js';
import { plainMessages, toolMediaAsUser } from './plain-messages.js';
import { factsOf } from './target-facts.js';

export function buildOpenAiRequest(
  req: ChatRequest,
  target: UpstreamTarget,
  opts: { stream: boolean },
): UpstreamHttpRequest {
  const extra = target.extra ?? {};
  const f = factsOf(target);
  const { official, openRouter, reasoningModel, sendsReasoning } = f;

  const body: Record<string, unknown> = { model: target.upstreamModel };
  body.messages = toolMediaAsUser(plainMessages(req.messages, f.developerToSystem, openRouter, f.dropCache));
  const copied = f.copied;
  for (const key in req) {
    const v = req[key];
    if (v !== undefined && copied.has(key)) body[key] = v;
  }

  // OpenAI's verbosity is low, medium or high: OpenRouter's higher levels (an Anthropic client's
  // effort, through /v1/messages) go as its highest instead of a 400.
  if (official && (body.verbosity === 'xhigh' || body.verbosity === 'max')) body.verbosity = 'high';

  // OpenRouter's alias of the priority tier: OpenAI (and others that copy its enum) know only
  // `priority`. An upstream that speaks OpenRouter gets the alias as sent.
  if (body.service_tier === 'fast' && !openRouter) body.service_tier = 'priority';

  // OpenAI refuses more than the model's limit: 400 "max_tokens is too large ... This model
  // supports at most N completion tokens".
  const limit = sentMaxTokens(req, target.maxOutputTokens);
  if (limit !== undefined && f.sendsLimit) {
    const field =
      extra.maxTokensField === 'max_tokens' || extra.maxTokensField === 'max_completion_tokens'
        ? extra.maxTokensField
        : official || reasoningModel
          ? 'max_completion_tokens'
          : 'max_tokens';
    body[field] = limit;
  }

  // Not sent where the allow-list names none of its spellings, or to OpenAI's other models.
  if (sendsReasoning && openRouter) {
    if (req.reasoning !== undefined) body.reasoning = req.reasoning;
    if (req.reasoning_effort !== undefined) body.reasoning_effort = req.reasoning_effort;
  } else if (sendsReasoning) {
    const r = resolveReasoning(req);
    if (r && r.enabled !== undefined) {
      body.reasoning_effort =
        r.enabled === false
          ? 'none'
          : (r.effort ?? effortFromBudget(r.budget ?? 0, limit ?? (r.budget ?? 0) * 2));
    }
  }

  if (opts.stream) {
    body.stream = true;
    if (extra.streamUsage !== false) body.stream_options = { include_usage: true };
  }

  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: opts.stream ? 'text/event-stream' : 'application/json',
  };
  if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
  if (target.headers) Object.assign(headers, target.headers);
  return {
    method: 'POST',
    url: f.url,
    headers,
    body: JSON.stringify(body),
  };
}
