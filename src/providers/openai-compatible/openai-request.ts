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
 * What an upstream receives is decided once per upstream (`targetFacts`), and route planning reads
 * the same decision (`openAiParamsFor`) for `provider.require_parameters`.
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
import { takes, withAliases } from '../../gateway/chat/parameters.js';
import { effortFromBudget, resolveReasoning } from '../../gateway/chat/reasoning.js';
import type { ChatMessage, ChatRequest, ContentPart, TextPart } from '../../gateway/chat/types.js';
import { perObject } from '../../gateway/per-object.js';
import { joinUrl } from '../shared/media.js';
import type { ParamsTarget, UpstreamHttpRequest, UpstreamTarget } from '../types.js';

export const OPENAI_PARAMS: ReadonlySet<string> = new Set([
  'messages',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'frequency_penalty',
  'presence_penalty',
  'seed',
  'stop',
  'n',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'response_format',
  'user',
  'reasoning',
  'reasoning_effort',
  'service_tier',
  'metadata',
  'store',
  'modalities',
  'audio',
  'prediction',
  'verbosity',
  'web_search_options',
  'prompt_cache_key',
  // OpenAI's successor of `user` (the SDK marks `user` deprecated for it) and the cache lifetime.
  'safety_identifier',
  'prompt_cache_retention',
]);

/** Self-hosted servers (vLLM, llama.cpp) also take these sampling params. */
export const OPENAI_COMPATIBLE_PARAMS: ReadonlySet<string> = new Set([
  ...OPENAI_PARAMS,
  'top_k',
  'min_p',
  'repetition_penalty',
]);

/**
 * An upstream that speaks OpenRouter (`reasoningObject: true`) takes OpenRouter's request fields
 * too: `top_a`, `structured_outputs`, `session_id` (its sticky routing key, for cache hits) and a
 * top-level `cache_control` (Anthropic's automatic prompt caching, which OpenRouter passes on to
 * Claude). OpenRouter drops what the model behind it does not support, so they are safe to send.
 */
export const OPENROUTER_PARAMS: ReadonlySet<string> = new Set([
  ...OPENAI_COMPATIBLE_PARAMS,
  'top_a',
  'structured_outputs',
  'session_id',
  'cache_control',
]);

const REASONING_MODEL = /^(?:.*\/)?(?:o\d|gpt-5)/i;
/**
 * Reasoning models that also answer 400 "Unsupported parameter: 'stop'": the o-series and gpt-5
 * up to 5.4 (gpt-5, gpt-5-mini, gpt-5.2, ...). Agent frameworks (LangChain, smolagents) send stop
 * sequences on every call; dropped there, like the sampling params. Later gpt-5 releases and the
 * `-chat` models keep it.
 */
const STOPLESS_MODEL = /^(?:.*\/)?(?!.*-chat)(?:o\d|gpt-5(?:$|-|\.[0-4](?![0-9])))/i;
const REASONING_UNSUPPORTED = [
  'temperature',
  'top_p',
  'presence_penalty',
  'frequency_penalty',
  'logprobs',
  'top_logprobs',
  'logit_bias',
];

const isOfficialOpenAi = (baseUrl: string) => /^https?:\/\/api\.openai\.com(?:[:/]|$)/i.test(baseUrl);

export function isReasoningModel(target: UpstreamTarget): boolean {
  return isReasoningModelName(target.upstreamModel, target.extra ?? {});
}

function isReasoningModelName(upstreamModel: string, extra: Record<string, unknown>): boolean {
  const forced = extra.reasoningModel;
  return typeof forced === 'boolean' ? forced : REASONING_MODEL.test(upstreamModel);
}

interface TargetFacts {
  official: boolean;
  /** `reasoningObject: true`: the upstream speaks OpenRouter. */
  openRouter: boolean;
  /** `developer` messages become `system` (hosts other than api.openai.com and OpenRouter). */
  developerToSystem: boolean;
  /** `cache_control` is removed from messages and their parts (api.openai.com). */
  dropCache: boolean;
  reasoningModel: boolean;
  /** Fields copied as they are: the allow-list without what is set after the copy or refused here. */
  copied: ReadonlySet<string>;
  /** The completion limit is sent: the allow-list names it (either spelling, chat/parameters.ts). */
  sendsLimit: boolean;
  /** Reasoning is sent (as `reasoning_effort`, or as it is to an upstream that speaks OpenRouter). */
  sendsReasoning: boolean;
  /** Every request param this upstream receives, as it is or translated: `paramsFor`. */
  sends: ReadonlySet<string>;
  url: string;
}

/**
 * What a target says about every request to it, from its host, model and settings. The one place
 * that decides what an upstream of this kind receives: `buildOpenAiRequest` sends by it, and route
 * planning (`openAiParamsFor`) checks `provider.require_parameters` against it.
 */
function targetFacts(baseUrl: string, upstreamModel: string, extra: Record<string, unknown>): TargetFacts {
  const official = isOfficialOpenAi(baseUrl);
  const reasoningModel = isReasoningModelName(upstreamModel, extra);
  const openRouter = extra.reasoningObject === true;
  const stopless = reasoningModel && STOPLESS_MODEL.test(upstreamModel);
  const allowed = Array.isArray(extra.supportedParams)
    ? customList(extra.supportedParams)
    : openRouter
      ? OPENROUTER_PARAMS
      : official
        ? OPENAI_PARAMS
        : OPENAI_COMPATIBLE_PARAMS;
  const skip = stopless ? STOPLESS_SKIP : reasoningModel ? REASONING_SKIP : SET_AFTER;
  const dropVerbosity = official && !VERBOSITY_MODEL.test(upstreamModel);
  // Worked out once per target (factsOf, openAiParamsFor): a few sets per upstream, per rebuild.
  const copied: ReadonlySet<string> = new Set(
    [...allowed].filter((p) => !skip.has(p) && !(dropVerbosity && p === 'verbosity')),
  );
  const sendsLimit = takes(allowed, 'max_tokens');
  // OpenAI answers 400 to reasoning_effort on a non-reasoning model: not sent there.
  const sendsReasoning = takes(allowed, 'reasoning') && (openRouter || reasoningModel || !official);
  return {
    official,
    openRouter,
    developerToSystem: !official && !openRouter,
    dropCache: official,
    reasoningModel,
    copied,
    sendsLimit,
    sendsReasoning,
    sends: sendsOf(copied, sendsLimit, sendsReasoning),
    url: joinUrl(baseUrl, 'chat/completions'),
  };
}

/** Per sending target (one per key of an upstream). */
const factsOf = perObject(
  (target: UpstreamTarget): TargetFacts =>
    targetFacts(target.baseUrl, target.upstreamModel, target.extra ?? {}),
);

/** What one upstream receives, for route planning (`ChatAdapter.paramsFor`): worked out once per route target. */
export const openAiParamsFor = perObject(
  (t: ParamsTarget): ReadonlySet<string> => targetFacts(t.baseUrl, t.upstreamModel, t.settings).sends,
);

/** A channel's `supportedParams`, as a set once per list. */
const customList = perObject(
  (list: unknown[]): ReadonlySet<string> => new Set(list.filter((p): p is string => typeof p === 'string')),
);

/**
 * What is copied, plus what is translated: the limit (both spellings), reasoning (all its
 * spellings), and `structured_outputs` where `response_format` goes (OpenAI's json_schema is its
 * structured outputs; the flag itself is sent only where the allow-list names it).
 */
function sendsOf(copied: ReadonlySet<string>, limit: boolean, reasoning: boolean): ReadonlySet<string> {
  const s = new Set(copied);
  if (limit) for (const p of withAliases(['max_tokens'])) s.add(p);
  if (reasoning) for (const p of withAliases(['reasoning'])) s.add(p);
  if (s.has('response_format')) s.add('structured_outputs');
  return s;
}

/**
 * Fields the copy loop leaves to the code after it: the token limit (renamed per target), the
 * reasoning fields (translated) and `stream` (set from `opts`). Skipping them instead of copying
 * and deleting keeps `body` a fast-mode object: one `delete` of a property that is not the last
 * added turns it into a dictionary, which makes `JSON.stringify` of it ~1.7x slower.
 */
const SET_AFTER: ReadonlySet<string> = new Set([
  'model',
  'messages',
  'max_tokens',
  'max_completion_tokens',
  'reasoning',
  'reasoning_effort',
  'stream',
]);
const REASONING_SKIP: ReadonlySet<string> = new Set([...SET_AFTER, ...REASONING_UNSUPPORTED]);
const STOPLESS_SKIP: ReadonlySet<string> = new Set([...REASONING_SKIP, 'stop']);
/**
 * The OpenAI models that take `verbosity`: gpt-5 and later (gpt-5, -mini, -nano, -pro, gpt-5.1,
 * gpt-5.1-chat-latest...), but not gpt-5-chat-latest. The others (gpt-4o, gpt-4.1, the o-series)
 * take only the default and answer any other with 400 "Unsupported value: 'verbosity' does not
 * support 'low' with this model. Supported values are: 'medium'": on api.openai.com it is dropped
 * there, like `reasoning_effort` on a non-reasoning model (OpenRouter, too, ignores verbosity
 * where a model cannot take it).
 */
const VERBOSITY_MODEL = /^(?:.*\/)?gpt-(?:5(?!-chat)|[6-9]|\d{2})/i;

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

/**
 * Copies only the messages that carry fields self-hosted servers (or, for `dropCache`,
 * api.openai.com) reject. An upstream that speaks OpenRouter (`keepReasoning`) keeps the
 * assistant's `reasoning` / `reasoning_details`: OpenRouter asks for them back unchanged to carry
 * reasoning across turns (Anthropic refuses a thinking turn with tool calls whose signed thinking
 * blocks are missing).
 */
function plainMessages(
  messages: ChatMessage[],
  developerToSystem: boolean,
  keepReasoning: boolean,
  dropCache: boolean,
): ChatMessage[] {
  let out: ChatMessage[] | undefined;
  let empty = false;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === 'assistant' && m.content == null && isEmptyTurn(m, keepReasoning)) {
      empty = true;
      continue;
    }
    const dev = developerToSystem && m.role === 'developer';
    const strip = !keepReasoning && (m.reasoning !== undefined || m.reasoning_details !== undefined);
    const uncache = dropCache && carriesCache(m);
    if (!dev && !strip && !uncache) continue;
    out ??= messages.slice();
    let rest = strip ? withoutReasoning(m) : m;
    if (uncache) rest = withoutCache(rest);
    out[i] = dev ? { ...rest, role: 'system' } : rest;
  }
  if (empty)
    return (out ?? messages).filter(
      (m) => !(m.role === 'assistant' && m.content == null && isEmptyTurn(m, keepReasoning)),
    );
  return out ?? messages;
}

/**
 * OpenAI's chat API takes text only in a `tool` message (`ChatCompletionToolMessageParam`), so
 * the images and files a tool returned (an Anthropic `tool_result` with an image, a Responses
 * `function_call_output` with `input_image`: a screenshot, a file read) would make the upstream
 * refuse the request. The tool message keeps its text (or says where its media went), and the
 * media follow in one user message after the run of tool messages, as the next turn sees them.
 */
function toolMediaAsUser(messages: ChatMessage[]): ChatMessage[] {
  let out: ChatMessage[] | undefined;
  let media: ContentPart[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const parts = m.role === 'tool' && Array.isArray(m.content) ? m.content : undefined;
    const moved = parts?.filter((p) => p.type !== 'text');
    if (moved?.length) {
      out ??= messages.slice(0, i);
      const text = parts!.filter((p): p is TextPart => p.type === 'text');
      const note = `(${moved.length === 1 ? 'the attachment' : `${moved.length} attachments`} of this result: in the next user message)`;
      out.push({ ...m, content: text.length ? [...text, { type: 'text', text: note }] : note });
      media.push(...moved);
    } else out?.push(m);
    if (media.length && messages[i + 1]?.role !== 'tool') {
      out!.push({ role: 'user', content: media });
      media = [];
    }
  }
  return out ?? messages;
}

/**
 * An assistant turn with no content (null), no tool calls, no refusal and no reasoning the
 * upstream takes back: what is left of a turn made only of what this upstream has no form for
 * (an Anthropic server tool's blocks, on a fallback from Claude). OpenAI-compatible servers
 * refuse it ("content: expected a string, got null"); it says nothing, so it is left out.
 */
function isEmptyTurn(m: ChatMessage, keepReasoning: boolean): boolean {
  if (m.tool_calls?.length || m.refusal != null) return false;
  return !keepReasoning || (m.reasoning == null && !m.reasoning_details?.length);
}

/**
 * A breakpoint that would be serialized: the Anthropic ingress sets its own as non-enumerable
 * properties (CacheControl in types.ts), which JSON.stringify already leaves out.
 */
const sentCache = (o: object) => Object.prototype.propertyIsEnumerable.call(o, 'cache_control');

function carriesCache(m: ChatMessage): boolean {
  if (sentCache(m)) return true;
  const content = m.content;
  if (!Array.isArray(content)) return false;
  for (const p of content) if (sentCache(p)) return true;
  return false;
}

/** The message without breakpoints, on it or its parts (copies: the client's objects stay as sent). */
function withoutCache(m: ChatMessage): ChatMessage {
  const out = { ...m };
  delete out.cache_control;
  if (Array.isArray(m.content))
    out.content = m.content.map((p) => {
      if (!sentCache(p)) return p;
      const { cache_control: _c, ...part } = p as typeof p & { cache_control?: unknown };
      return part as typeof p;
    });
  return out;
}

function withoutReasoning(m: ChatMessage): ChatMessage {
  const { reasoning: _r, reasoning_details: _d, ...rest } = m;
  return rest;
}
