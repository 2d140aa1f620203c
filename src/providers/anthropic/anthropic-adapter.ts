/**
 * Anthropic Messages API. `target.baseUrl` is `https://api.anthropic.com` (a trailing `/v1` is
 * accepted). Request mapping in `anthropic-request.ts`, answers in `anthropic-response.ts` and
 * `anthropic-stream.ts`.
 */
import { resolveReasoning } from '../../gateway/chat/reasoning.js';
import { perObject } from '../../gateway/per-object.js';
import { isoSeconds, label, listItems, tokenCount } from '../shared/model-listing.js';
import type { ChatAdapter, ListedModel, ParamsTarget } from '../types.js';
import { takesEffort } from './anthropic-effort.js';
import { takesStructuredOutputs } from './anthropic-output-format.js';
import {
  ANTHROPIC_ALL_PARAMS,
  ANTHROPIC_EFFORT_PARAMS,
  ANTHROPIC_PARAMS,
  ANTHROPIC_STRUCTURED_PARAMS,
  anthropicHeaders,
  anthropicLengths,
  anthropicUrl,
  buildAnthropicRequest,
} from './anthropic-request.js';
import { classifyAnthropicError, parseAnthropicResponse } from './anthropic-response.js';
import { AnthropicStreamDecoder } from './anthropic-stream.js';
import { takesThinking, thinksAdaptively } from './claude-model.js';

/**
 * response_format, verbosity and reasoning only where they are sent: require_parameters routes
 * response_format to Claude 4.5+, not Opus 4.1, verbosity to Opus 4.5+, not Sonnet 4.5, and
 * reasoning to Claude 3.7 Sonnet and later, not 3.5 Haiku. Worked out once per route target.
 */
const anthropicParamsFor = perObject((t: ParamsTarget): ReadonlySet<string> => {
  const effort = takesEffort(t.upstreamModel, t.settings);
  const params = takesStructuredOutputs(t.upstreamModel, t.settings)
    ? effort
      ? ANTHROPIC_ALL_PARAMS
      : ANTHROPIC_STRUCTURED_PARAMS
    : effort
      ? ANTHROPIC_EFFORT_PARAMS
      : ANTHROPIC_PARAMS;
  if (takesThinking(t.upstreamModel, t.settings)) return params;
  return new Set([...params].filter((p) => p !== 'reasoning' && p !== 'reasoning_effort'));
});

export const anthropicAdapter: ChatAdapter = {
  kind: 'anthropic',
  supportedParams: ANTHROPIC_ALL_PARAMS,
  paramsFor: anthropicParamsFor,
  // Thinking counted as on whenever asked: a tool turn that lost its thinking goes without
  // (buildAnthropicRequest), which only makes this an upper bound.
  sentMaxTokens: (req, t) => {
    const r = takesThinking(t.upstreamModel, t.settings) ? resolveReasoning(req) : undefined;
    return anthropicLengths(
      req,
      t.settings,
      t.maxCompletionTokens,
      r?.enabled === true ? r : undefined,
      thinksAdaptively(t.upstreamModel, t.settings),
    ).maxTokens;
  },
  buildChatRequest: buildAnthropicRequest,
  parseChatResponse: parseAnthropicResponse,
  createStreamDecoder: (maxEventBytes) => new AnthropicStreamDecoder(maxEventBytes),
  classifyError: classifyAnthropicError,
  listModels: {
    // 1000 is the most a page holds; the next page starts after the last id of this one.
    request: (target, page) => ({
      method: 'GET',
      url: `${anthropicUrl(target.baseUrl, 'models')}?limit=1000${page === undefined ? '' : `&after_id=${encodeURIComponent(page)}`}`,
      headers: anthropicHeaders(target, 'application/json'),
    }),
    // Newer listings give `max_input_tokens` and `max_tokens`; older ones (and servers copying
    // the API) only the id, `display_name` and `created_at`. `capabilities` is not read.
    parse: (body) => {
      const parsed = JSON.parse(body) as { data?: unknown };
      const out: ListedModel[] = [];
      for (const m of listItems(parsed.data)) {
        if (typeof m.id !== 'string') continue;
        out.push({
          name: m.id,
          contextLength: tokenCount(m.max_input_tokens),
          maxCompletionTokens: tokenCount(m.max_tokens),
          created: isoSeconds(m.created_at),
          displayName: label(m.display_name),
        });
      }
      return out;
    },
    nextPage: (body) => {
      const page = JSON.parse(body) as { has_more?: unknown; last_id?: unknown };
      return page.has_more === true && typeof page.last_id === 'string' && page.last_id !== ''
        ? page.last_id
        : undefined;
    },
  },
};
