/**
 * Anthropic Messages request (`POST /v1/messages`, schema in anthropic-request-schema.ts) ->
 * the canonical chat request, so it runs through the same pipeline as /v1/chat/completions.
 * This is the request's own fields; its content blocks are anthropic-content-decode.ts (system,
 * user turns) and anthropic-assistant-decode.ts (assistant turns), its tools and tool_choice
 * anthropic-tools-decode.ts.
 *
 * - `system` -> a system message first; `metadata.user_id` -> `user`; `stop_sequences` -> `stop`;
 *   `fallbacks: [{model}]` (OpenRouter's skin) -> `models`.
 * - Top-level `cache_control` (automatic caching) is put on the last block of the last message.
 * - thinking enabled -> `reasoning.max_tokens` = budget_tokens (at least 1024, and below
 *   max_tokens unless the client sent the interleaved-thinking beta, as Anthropic's); adaptive -> `reasoning.enabled`
 *   (with `output_config.effort` as the effort), and the `thinking` object as sent rides hidden
 *   (`anthropic_thinking`) for an Anthropic upstream; disabled -> `reasoning.enabled: false`.
 * - `output_config.effort` -> `verbosity` (OpenRouter's mapping, back to `output_config.effort`
 *   on Anthropic models that take it), with or without thinking; alone it turns no thinking on.
 * - The `anthropic-beta` header's values ride hidden (`anthropic_beta`) to an Anthropic upstream,
 *   which gets them beside its channel's `beta`; no other upstream gets them.
 * - `service_tier`, `container`, `context_management`, `mcp_servers` and other fields are ignored.
 */
import { setHidden } from '../../gateway/chat/hidden.js';
import type { ChatMessage, ChatRequest, ReasoningEffort } from '../../gateway/chat/types.js';
import { badRequest } from '../../gateway/errors.js';
import { isInterleavedThinking, MIN_THINKING_BUDGET } from '../../providers/anthropic/anthropic-request.js';
import { assistantTurn } from './anthropic-assistant-decode.js';
import { systemContent, userTurn } from './anthropic-content-decode.js';
import { type AnthropicToolChoice, splitTools, toolChoice } from './anthropic-tools-decode.js';

type Block = Record<string, any> & { type: string };

export interface AnthropicRequestBody {
  model: string;
  max_tokens?: number;
  messages: Array<{ role: 'user' | 'assistant'; content: string | Block[] }>;
  system?: string | Block[];
  tools?: Array<Record<string, any>>;
  tool_choice?: AnthropicToolChoice;
  thinking?: { type: string; budget_tokens?: number };
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stream?: boolean;
  metadata?: { user_id?: string | null };
  output_config?: { effort?: string };
  fallbacks?: Array<{ model: string }>;
  cache_control?: unknown;
  [extra: string]: unknown;
}

/**
 * `betas`: the client's `anthropic-beta` values (`anthropicBetas`, anthropic-beta.ts), which ride hidden
 * (`anthropic_beta`) to an Anthropic upstream.
 */
export function decodeAnthropicRequest(
  body: AnthropicRequestBody,
  betas: readonly string[] = [],
): ChatRequest {
  if (body.cache_control && typeof body.cache_control === 'object') markLastBlock(body);
  const messages: ChatMessage[] = [];
  if (body.system !== undefined) {
    const system = systemContent(body.system);
    if (system !== undefined) messages.push({ role: 'system', content: system });
  }
  body.messages.forEach((m, i) => {
    if (m.role === 'user') userTurn(m.content, `messages.${i}.content`, messages);
    else messages.push(assistantTurn(m.content, `messages.${i}.content`));
  });
  const req: ChatRequest = { model: body.model, messages };
  if (body.max_tokens !== undefined) req.max_tokens = body.max_tokens;
  if (body.stream === true) req.stream = true;
  if (body.temperature !== undefined) req.temperature = body.temperature;
  if (body.top_p !== undefined) req.top_p = body.top_p;
  if (body.top_k !== undefined) req.top_k = body.top_k;
  if (body.stop_sequences?.length) req.stop = body.stop_sequences;
  if (body.metadata?.user_id) req.user = body.metadata.user_id;
  if (body.fallbacks?.length) req.models = body.fallbacks.map((f) => f.model);
  const { functions, defined } = splitTools(body.tools ?? []);
  if (functions.length > 0) req.tools = functions;
  if (defined.length > 0) setHidden(req, 'anthropic_tools', defined);
  toolChoice(body.tool_choice, functions, defined, req);
  const reasoning = reasoningOf(body, betas.some(isInterleavedThinking));
  if (reasoning) req.reasoning = reasoning;
  if (body.thinking?.type === 'adaptive') setHidden(req, 'anthropic_thinking', { ...body.thinking });
  if (betas.length > 0) setHidden(req, 'anthropic_beta', betas);
  // Effort is how much a turn spends (text, tool calls and thinking), thinking or not: it is
  // the chat request's `verbosity`, which reaches an Anthropic model that takes effort as
  // `output_config.effort` again (anthropic-effort.ts).
  const effort = body.output_config?.effort;
  if (effort) req.verbosity = effort as ChatRequest['verbosity'];
  return req;
}

/**
 * Top-level `cache_control` (automatic caching) marks the last block of the request, as
 * Anthropic applies it: set on that block here (a string content becomes one text block), unless
 * the block has its own.
 */
function markLastBlock(body: AnthropicRequestBody): void {
  const last = body.messages.at(-1);
  if (!last) return;
  if (typeof last.content === 'string')
    last.content = [{ type: 'text', text: last.content, cache_control: body.cache_control }];
  else {
    const b = last.content.at(-1);
    if (b && b.cache_control === undefined) b.cache_control = body.cache_control;
  }
}

/**
 * `interleaved`: the client sent the interleaved-thinking beta, with which Anthropic takes a
 * `budget_tokens` at or past `max_tokens` (the budget is then across all the thinking blocks of
 * the turn); without it Anthropic refuses one, and so does the gateway. A budget below 1024
 * Anthropic refuses with or without the beta, and so does the gateway, whatever the upstream.
 */
function reasoningOf(body: AnthropicRequestBody, interleaved: boolean): ChatRequest['reasoning'] {
  const t = body.thinking;
  const effort = body.output_config?.effort as ReasoningEffort | undefined;
  // Effort alone turns no thinking on (it goes on as `verbosity`, see above).
  if (!t) return undefined;
  if (t.type === 'disabled') return { enabled: false };
  if (t.type === 'enabled') {
    if (t.budget_tokens === undefined)
      throw badRequest(
        'thinking.budget_tokens: is required when thinking is enabled',
        'thinking.budget_tokens',
      );
    // Anthropic's minimum, beta or not. Raised to it (as a budget from /v1/chat/completions is),
    // the request would not be the one sent: max_tokens 10 with budget 5 became 1034 and 1024.
    if (t.budget_tokens < MIN_THINKING_BUDGET)
      throw badRequest(
        `thinking.budget_tokens: must be at least ${MIN_THINKING_BUDGET}`,
        'thinking.budget_tokens',
      );
    if (!interleaved && body.max_tokens !== undefined && t.budget_tokens >= body.max_tokens)
      throw badRequest(
        'thinking.budget_tokens: must be less than max_tokens (or send the anthropic-beta interleaved-thinking-2025-05-14)',
        'thinking.budget_tokens',
      );
    return { max_tokens: t.budget_tokens };
  }
  return effort ? { effort } : { enabled: true };
}
