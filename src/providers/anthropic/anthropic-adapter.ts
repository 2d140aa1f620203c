/**
 * Anthropic Messages API. `target.baseUrl` is `https://api.anthropic.com` (a trailing `/v1` is
 * accepted). Request mapping in `anthropic-request.ts`, answers in `anthropic-response.ts` and
 * `anthropic-stream.ts`.
 */
import type { ChatAdapter } from '../types.js';
import { takesStructuredOutputs } from './anthropic-output-format.js';
import {
  ANTHROPIC_PARAMS,
  ANTHROPIC_STRUCTURED_PARAMS,
  anthropicHeaders,
  anthropicUrl,
  buildAnthropicRequest,
} from './anthropic-request.js';
import { classifyAnthropicError, parseAnthropicResponse } from './anthropic-response.js';
import { AnthropicStreamDecoder } from './anthropic-stream.js';

export const anthropicAdapter: ChatAdapter = {
  kind: 'anthropic',
  supportedParams: ANTHROPIC_STRUCTURED_PARAMS,
  // response_format only where it is sent: require_parameters routes it to Claude 4.5+, not Opus 4.1.
  paramsFor: (t) =>
    takesStructuredOutputs(t.upstreamModel, t.settings) ? ANTHROPIC_STRUCTURED_PARAMS : ANTHROPIC_PARAMS,
  buildChatRequest: buildAnthropicRequest,
  parseChatResponse: parseAnthropicResponse,
  createStreamDecoder: (maxEventBytes) => new AnthropicStreamDecoder(maxEventBytes),
  classifyError: classifyAnthropicError,
  listModels: {
    request: (target) => ({
      method: 'GET',
      url: `${anthropicUrl(target.baseUrl, 'models')}?limit=1000`,
      headers: anthropicHeaders(target, 'application/json'),
    }),
    parse: (body) => {
      const parsed = JSON.parse(body) as { data?: Array<{ id?: unknown }> };
      return (parsed.data ?? []).map((m) => m.id).filter((id): id is string => typeof id === 'string');
    },
  },
};
