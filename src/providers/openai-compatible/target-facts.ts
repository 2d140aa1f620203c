/**
 * What an OpenAI-compatible upstream receives, decided once per upstream from its host, model and
 * settings (`target.extra`, see openai-request.ts): the allow-list of copied fields, whether the
 * limit and reasoning are sent, how messages are rewritten. `buildOpenAiRequest` sends by it, and
 * route planning (`openAiParamsFor`) checks `provider.require_parameters` against the same facts.
 */
import { takes, withAliases } from '../../gateway/chat/parameters.js';
import { perObject } from '../../gateway/per-object.js';
import { joinUrl } from '../shared/media.js';
import type { ParamsTarget, UpstreamTarget } from '../types.js';

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

export interface TargetFacts {
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
export const factsOf = perObject(
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
