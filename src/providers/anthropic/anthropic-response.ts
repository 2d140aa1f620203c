/**
 * Anthropic answers -> canonical: non-stream bodies, usage, stop reasons and errors. The stop
 * reason is mapped to a finish reason and kept as it is as the native one, with the matched stop
 * sequence (`setFinishDetails`).
 *
 * Usage: prompt_tokens = input_tokens + cache_read_input_tokens + cache_creation_input_tokens
 * (Anthropic's input_tokens excludes cached tokens; OpenAI's prompt_tokens includes them), with
 * cached_tokens = cache reads and cache_write_tokens = cache writes, of which
 * cache_write_1h_tokens = the one-hour writes (`cache_creation.ephemeral_1h_input_tokens`, billed
 * at their own price; the rest are 5-minute writes). Anthropic does not report
 * thinking tokens separately, so reasoning_tokens is counted locally from the thinking text
 * (exactly up to 128 K characters, by a sample beyond: see tokens.ts). Thinking without readable
 * text (a `redacted_thinking` block, or a thinking block Anthropic sent with its text omitted) is
 * output all the same, so with one the reasoning is what the output count leaves beside the
 * visible answer (text and tool calls, counted locally), when that is more (`reasoningEstimate`). `server_tool_use` (web
 * searches and fetches run) is kept as it is.
 *
 * Server tool blocks (server_tool_use, web_search_tool_result, ...) have no canonical form, and
 * the canonical fields do not keep the order of thinking interleaved with text and tool calls: the
 * text is the message's content, and the whole content, as it came, rides hidden
 * (`anthropic_content`) to the Anthropic ingress, which answers with it unchanged.
 */

import { setHidden } from '../../gateway/chat/hidden.js';
import { sampledTokens } from '../../gateway/chat/tokens.js';
import type {
  AssistantMessage,
  ChatChoice,
  ChatDeltaChoice,
  ChatResult,
  ChatUsage,
  FinishReason,
  ReasoningDetail,
  ToolCall,
} from '../../gateway/chat/types.js';
import { UpstreamError } from '../../gateway/errors.js';
import { classifyFailure, excerpt, safeJson } from '../shared/classify-failure.js';
import type { UpstreamHeaders } from '../types.js';
import { ANTHROPIC_FORMAT } from './anthropic-messages.js';

export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  /** The cache writes by TTL; together they make cache_creation_input_tokens. */
  cache_creation?: {
    ephemeral_5m_input_tokens?: number | null;
    ephemeral_1h_input_tokens?: number | null;
  } | null;
  /** Server tool calls run for the answer (web searches and fetches). */
  server_tool_use?: { web_search_requests?: number | null; web_fetch_requests?: number | null } | null;
}

export function mapStopReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, pause_turn and anything new
      return 'stop';
  }
}

/**
 * The reasoning tokens of an answer: its thinking text counted; with thinking that has no text to
 * count (`hidden`: redacted, or omitted), at least what the output count leaves beside the
 * visible answer. Undefined when the answer had no thinking. `toChatUsage` keeps it within the
 * output count.
 */
export function reasoningEstimate(
  thoughts: readonly string[],
  hidden: boolean,
  visible: readonly string[],
  output: number | null | undefined,
): number | undefined {
  if (thoughts.length === 0 && !hidden) return undefined;
  const counted = thoughts.length > 0 ? sampledTokens(thoughts) : 0;
  if (!hidden || typeof output !== 'number') return counted;
  return Math.max(counted, output - sampledTokens(visible));
}

export function toChatUsage(u: AnthropicUsage, reasoningTokens?: number): ChatUsage {
  const read = u.cache_read_input_tokens ?? 0;
  const write = u.cache_creation_input_tokens ?? 0;
  const prompt = (u.input_tokens ?? 0) + read + write;
  const completion = u.output_tokens ?? 0;
  const details: NonNullable<ChatUsage['prompt_tokens_details']> = {
    cached_tokens: read,
    cache_write_tokens: write,
  };
  // A part of the writes, never more than all of them.
  const hour = u.cache_creation?.ephemeral_1h_input_tokens;
  const write1h = typeof hour === 'number' ? Math.min(write, Math.max(0, hour)) : 0;
  if (write1h > 0) details.cache_write_1h_tokens = write1h;
  const usage: ChatUsage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: details,
  };
  if (reasoningTokens !== undefined) {
    usage.completion_tokens_details = { reasoning_tokens: Math.min(reasoningTokens, completion) };
  }
  const server = serverToolUse(u.server_tool_use);
  if (server) usage.server_tool_use = server;
  return usage;
}

/** Anthropic's `server_tool_use` counts, those that are counts (null or absent: none reported). */
function serverToolUse(s: AnthropicUsage['server_tool_use']): ChatUsage['server_tool_use'] {
  if (!s || typeof s !== 'object') return undefined;
  const out: NonNullable<ChatUsage['server_tool_use']> = {};
  for (const k of ['web_search_requests', 'web_fetch_requests'] as const) {
    const n = s[k];
    if (typeof n === 'number' && Number.isFinite(n) && n >= 0) out[k] = n;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Anthropic error types carry the meaning even when the status does not (stream errors have none). */
const TYPE_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

export function classifyAnthropicError(
  status: number,
  body: string,
  headers: UpstreamHeaders,
): UpstreamError {
  const parsed = safeJson(body) as { error?: { type?: string; message?: string } } | undefined;
  const type = parsed?.error?.type;
  const effective = status >= 200 && status < 300 ? (TYPE_STATUS[type ?? ''] ?? 500) : status;
  return classifyFailure(effective, headers, {
    codes: [type],
    message: parsed?.error?.message ?? (body ? excerpt(body) : undefined),
  });
}

interface AnthropicMessageBody {
  content?: Array<Record<string, any>>;
  stop_reason?: string | null;
  stop_sequence?: string | null;
  usage?: AnthropicUsage;
}

/**
 * A choice's finish details (`FinishDetails` in types.ts) from Anthropic's `stop_reason` and
 * `stop_sequence` (the matched string, non-null when the stop reason is `stop_sequence`).
 */
export function setFinishDetails(
  choice: ChatChoice | ChatDeltaChoice,
  stopReason: string | null | undefined,
  stopSequence: string | null | undefined,
): void {
  choice.native_finish_reason = stopReason ?? null;
  if (stopReason === 'stop_sequence' && typeof stopSequence === 'string')
    setHidden(choice, 'stop_sequence', stopSequence);
}

export function parseAnthropicResponse(status: number, body: string, headers: UpstreamHeaders): ChatResult {
  if (status < 200 || status >= 300) throw classifyAnthropicError(status, body, headers);
  const parsed = safeJson(body) as (AnthropicMessageBody & { type?: string }) | undefined;
  if (parsed?.type === 'error') throw classifyAnthropicError(status, body, headers);
  if (!parsed || !Array.isArray(parsed.content)) {
    throw new UpstreamError('bad_response', `unexpected Anthropic body: ${excerpt(body)}`, {
      upstreamStatus: status,
    });
  }
  let text: string | null = null;
  let reasoning: string | null = null;
  /** Thinking without readable text (redacted, or omitted), and the visible answer's texts. */
  let hidden = false;
  const visible: string[] = [];
  const details: ReasoningDetail[] = [];
  const calls: ToolCall[] = [];
  parsed.content.forEach((b, index) => {
    if (b.type === 'text') {
      text = (text ?? '') + b.text;
      if (typeof b.text === 'string') visible.push(b.text);
    } else if (b.type === 'thinking') {
      reasoning = (reasoning ?? '') + (b.thinking ?? '');
      if (!b.thinking) hidden = true;
      details.push({
        type: 'reasoning.text',
        text: b.thinking ?? '',
        signature: b.signature ?? null,
        format: ANTHROPIC_FORMAT,
        index,
      });
    } else if (b.type === 'redacted_thinking') {
      hidden = true;
      details.push({ type: 'reasoning.encrypted', data: b.data, format: ANTHROPIC_FORMAT, index });
    } else if (b.type === 'tool_use') {
      visible.push(String(b.name), JSON.stringify(b.input ?? {}));
      calls.push({
        id: b.id,
        type: 'function',
        function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) },
      });
    }
  });
  const message: AssistantMessage = { role: 'assistant', content: text };
  if (reasoning !== null) message.reasoning = reasoning;
  if (details.length > 0) message.reasoning_details = details;
  if (calls.length > 0) message.tool_calls = calls;
  // The whole content as given, hidden, for an Anthropic client (the /v1/messages ingress) to get
  // every block in place (AssistantMessage in types.ts): server tool blocks (server_tool_use,
  // web_search_tool_result...), which have no canonical form, and thinking interleaved with text
  // and tool calls ([thinking, text, tool_use, thinking, text]), whose order the canonical fields
  // (one text, the tool calls apart) cannot hold. Other encoders write the canonical fields.
  setHidden(message, 'anthropic_content', parsed.content);
  const choice: ChatChoice = {
    index: 0,
    message,
    finish_reason: mapStopReason(parsed.stop_reason),
    native_finish_reason: null,
    logprobs: null,
  };
  setFinishDetails(choice, parsed.stop_reason, parsed.stop_sequence);
  return {
    choices: [choice],
    // No usage in the answer: none here, so the gateway counts the prompt and the answer itself.
    usage: parsed.usage
      ? toChatUsage(
          parsed.usage,
          reasoningEstimate(reasoning ? [reasoning] : [], hidden, visible, parsed.usage.output_tokens),
        )
      : undefined,
  };
}
