/**
 * Canonical chat model. The request is the validated OpenAI/OpenRouter chat request itself (so the
 * OpenAI-compatible hot path forwards it with a shallow copy), the result is an OpenAI chat
 * completion body without the fields the encoder owns (id, object, created, model, provider), and
 * stream events are OpenAI chunk `choices` plus usage and error events.
 */
import type { UpstreamError } from '../errors.js';

/**
 * Anthropic's prompt-cache breakpoint. Text parts carry it as OpenRouter does (enumerable, sent to
 * every upstream). Elsewhere (images, files, tool definitions, tool calls, tool results) only the
 * Anthropic ingress sets it, as a non-enumerable property (`setHidden`): the Anthropic adapter reads
 * it, while an OpenAI-compatible upstream, which gets the objects serialized as they are, never sees it.
 */
export interface CacheControl {
  type: 'ephemeral';
  ttl?: string;
}

export type ChatRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface TextPart {
  type: 'text';
  text: string;
  cache_control?: CacheControl;
}
export interface ImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: string };
  /** Non-enumerable (see CacheControl). */
  cache_control?: CacheControl;
}
export interface AudioPart {
  type: 'input_audio';
  input_audio: { data: string; format: string };
}
export interface FilePart {
  type: 'file';
  file: { filename?: string; file_data?: string; file_id?: string };
  /** Non-enumerable (see CacheControl). */
  cache_control?: CacheControl;
}
/**
 * OpenRouter's (and vLLM's) video part: `url` is an http(s) URL (YouTube included, for Gemini), a
 * `gs://` URI or a `data:video/...;base64,` URL. OpenRouter's legacy `input_video` parts arrive
 * here as this (see legacyVideoParts in chat-request-prepare.ts).
 */
export interface VideoPart {
  type: 'video_url';
  video_url: { url: string; processing?: string };
}
/** Assistant messages only: a turn replayed from an earlier refusal. */
export interface RefusalPart {
  type: 'refusal';
  refusal: string;
}
export type ContentPart = TextPart | ImagePart | AudioPart | FilePart | VideoPart | RefusalPart;

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  /** Non-enumerable (see CacheControl). */
  cache_control?: CacheControl;
}

/**
 * OpenRouter `reasoning_details` item. Adapters put provider signatures here so a client that
 * sends the assistant message back unchanged lets the next request carry them again.
 */
export interface ReasoningDetail {
  type: 'reasoning.text' | 'reasoning.encrypted' | 'reasoning.summary' | (string & {});
  text?: string | null;
  signature?: string | null;
  data?: string;
  summary?: string;
  id?: string | null;
  format?: string;
  index?: number;
}

export interface ChatMessage {
  role: ChatRole;
  content?: string | ContentPart[] | null;
  name?: string;
  /** assistant */
  tool_calls?: ToolCall[];
  reasoning?: string | null;
  reasoning_details?: ReasoningDetail[];
  refusal?: string | null;
  /** tool */
  tool_call_id?: string;
  /**
   * tool, non-enumerable (set by the Anthropic ingress with `setHidden`, read by the Anthropic
   * adapter, and `is_error` by the Gemini one too): the result is an error
   * (`tool_result.is_error`), and the result's cache breakpoint.
   */
  is_error?: boolean;
  cache_control?: CacheControl;
  /**
   * assistant, non-enumerable (set by the Anthropic ingress, read by the Anthropic adapter): the
   * turn's content blocks as the client sent them, when they hold blocks the chat message has no
   * form for (server tool use and results: `AnthropicNativeBlock`), or signed thinking interleaved
   * with text, an order the chat message cannot hold. An Anthropic upstream is sent the turn as it
   * is; any other gets the canonical fields, without those blocks.
   */
  anthropic_content?: AnthropicNativeBlock[];
}

/**
 * An Anthropic content block passed on as it is (server_tool_use, web_search_tool_result, ...:
 * blocks of Anthropic's server tools, which only Anthropic runs and only Anthropic can take back).
 */
export type AnthropicNativeBlock = Record<string, unknown> & { type: string };

/**
 * An Anthropic-defined tool of the request (`web_search_20250305`, `bash_20250124`,
 * `text_editor_...`: a `type` other than "custom"), as the client sent it, and where it was among
 * the tools: `at` is the number of custom (function) tools before it.
 */
export interface AnthropicDefinedTool {
  at: number;
  tool: Record<string, unknown>;
}

/**
 * One event of an Anthropic stream's block that has no canonical form (a server tool's use or
 * result), or a `citations_delta` of a text block, as the upstream sent it; `index` is the
 * upstream's block index.
 */
export type AnthropicBlockEvent =
  | { type: 'start'; index: number; block: AnthropicNativeBlock }
  | { type: 'delta'; index: number; delta: Record<string, unknown> & { type: string } }
  | { type: 'stop'; index: number };

export interface ToolDefinition {
  type: 'function';
  function: {
    name: string;
    description?: string;
    parameters?: Record<string, unknown>;
    strict?: boolean | null;
  };
  /** Non-enumerable (see CacheControl). */
  cache_control?: CacheControl;
  /**
   * Non-enumerable, from the Anthropic ingress: the custom tool's other fields as the client sent
   * them (`strict`, `defer_loading`, `allowed_callers`, `input_examples`, `eager_input_streaming`,
   * ...), which an Anthropic upstream gets back on the tool and no other upstream sees.
   */
  anthropic_fields?: Record<string, unknown>;
}

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      json_schema: {
        name: string;
        description?: string;
        schema?: Record<string, unknown>;
        strict?: boolean | null;
      };
    };

export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

export interface ReasoningOptions {
  effort?: ReasoningEffort | null;
  max_tokens?: number | null;
  exclude?: boolean;
  enabled?: boolean;
}

/** The validated client request. Routing-only fields (models, provider, transforms) never reach an upstream. */
export interface ChatRequest {
  model?: string;
  messages: ChatMessage[];
  stream?: boolean;
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  min_p?: number;
  top_a?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  repetition_penalty?: number;
  seed?: number;
  stop?: string | string[] | null;
  n?: number;
  logit_bias?: Record<string, number>;
  logprobs?: boolean;
  top_logprobs?: number;
  tools?: ToolDefinition[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean | null;
  response_format?: ResponseFormat;
  user?: string;
  /** OpenAI's successor of `user`; Anthropic gets it as `metadata.user_id`. */
  safety_identifier?: string;
  /** Top-level: Anthropic's automatic prompt caching; sent to Anthropic and to upstreams that speak OpenRouter. */
  cache_control?: CacheControl;
  reasoning?: ReasoningOptions;
  reasoning_effort?: ReasoningEffort;
  usage?: { include?: boolean };
  stream_options?: { include_usage?: boolean } | null;
  models?: string[];
  provider?: Record<string, unknown>;
  transforms?: string[];
  /**
   * Non-enumerable (set by the Anthropic ingress, read by the Anthropic adapter; see `setHidden`;
   * a body's own field of such a name is dropped, `dropClientHidden`, as are a message's
   * `is_error` and `anthropic_content` and a tool's `anthropic_fields`):
   * the request's Anthropic-defined tools (server tools such as web search, and schema-less client
   * tools such as bash), sent to an Anthropic upstream as they are and to no other; and the
   * client's `tool_choice` as it is when the chat request cannot say it (it names such a tool, or
   * there are no custom tools).
   */
  anthropic_tools?: AnthropicDefinedTool[];
  anthropic_tool_choice?: Record<string, unknown>;
  /**
   * Non-enumerable, from the Anthropic ingress: an adaptive `thinking` as the client sent it
   * (`{type: "adaptive", display?}`), which an Anthropic upstream gets as it is instead of a
   * budget made from `reasoning` (newer Claude models take only adaptive thinking).
   */
  anthropic_thinking?: Record<string, unknown>;
  /**
   * Non-enumerable: the client's `anthropic-beta` values (the Anthropic ingress's header, or
   * OpenRouter's `x-anthropic-beta` on /v1/chat/completions and /v1/responses; split at commas,
   * in order, without duplicates), which an Anthropic upstream gets beside the channel's `beta`
   * and no other upstream gets.
   */
  anthropic_beta?: readonly string[];
  [extra: string]: unknown;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'error' | (string & {});

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** `cache_write_1h_tokens`: of the cache writes, those kept for an hour (Anthropic's `ttl: "1h"`). */
  prompt_tokens_details?: {
    cached_tokens: number;
    cache_write_tokens?: number;
    cache_write_1h_tokens?: number;
    [k: string]: unknown;
  } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null; [k: string]: unknown } | null;
  /**
   * Server tool calls the upstream ran and reported (Anthropic's `usage.server_tool_use`; also
   * OpenRouter's legacy field of that name): web searches are billed at the model's `web_search`
   * price. The OpenAI encoder writes usage field by field and leaves it out.
   */
  server_tool_use?: { web_search_requests?: number; web_fetch_requests?: number } | null;
  [extra: string]: unknown;
}

/**
 * What an upstream reported of a stream's usage before its final count, for a stream that ended
 * early (cut, error, client gone): the prompt side (`prompt_tokens` and its details) is final
 * once reported; `completion_tokens` is the count so far, final only when `completionFinal`.
 */
export interface ReportedUsage {
  usage: ChatUsage;
  completionFinal: boolean;
}

/** One piece of an answer in the upstream's order (`AssistantMessage.content_order`). */
export type ContentPiece = { type: 'reasoning' | 'text'; text: string } | { type: 'tool_call' };

export interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  reasoning?: string | null;
  reasoning_details?: ReasoningDetail[];
  tool_calls?: ToolCall[];
  refusal?: string | null;
  /**
   * Non-enumerable (set by the Anthropic adapter, read by the Anthropic ingress): the answer's
   * content blocks as Anthropic gave them, so an Anthropic client gets every block in place: server
   * tool blocks (`AnthropicNativeBlock`), and thinking interleaved with text and tool calls, whose
   * order the canonical fields do not keep. Other encoders write the canonical fields.
   */
  anthropic_content?: AnthropicNativeBlock[];
  /**
   * Non-enumerable (set by an adapter on a non-streamed answer whose order the canonical fields
   * may not hold: Gemini's, with thought parts, or with both text and calls; read by the Anthropic
   * ingress): the answer's pieces in the upstream's order, so an Anthropic client gets its
   * thinking, text and tool calls in that order. A `tool_call` is the next of `tool_calls`.
   */
  content_order?: ContentPiece[];
  [extra: string]: unknown;
}

/**
 * What a choice says of why generation stopped, beside the normalised `finish_reason`:
 * - `native_finish_reason` (sent to OpenAI/OpenRouter clients, as OpenRouter does): the upstream's
 *   own stop value, unchanged (Anthropic `end_turn`, `stop_sequence`, `max_tokens`, `tool_use`;
 *   Gemini `STOP`, `MAX_TOKENS`, `SAFETY`; an OpenAI-compatible server's `finish_reason`, or its
 *   own `native_finish_reason` when it sends one, as OpenRouter does); null while a stream has not
 *   finished, or when the upstream gave none. Each adapter sets it; the encoder sends null for a
 *   choice without one.
 * - `stop_sequence` (non-enumerable, set with `setHidden`, read by the Anthropic ingress): the stop
 *   sequence that ended the answer, when the upstream says which (Anthropic's `stop_sequence`, a
 *   vLLM server's string `stop_reason`). Never sent to OpenAI clients (OpenRouter sends no such
 *   field) nor copied by spreads: whatever rebuilds a choice carries it over itself.
 */
export interface FinishDetails {
  native_finish_reason?: string | null;
  stop_sequence?: string;
}

export interface ChatChoice extends FinishDetails {
  index: number;
  message: AssistantMessage;
  finish_reason: FinishReason | null;
  logprobs?: unknown;
  [extra: string]: unknown;
}

/** Non-stream result: an OpenAI completion body minus id/object/created/model/provider (the encoder sets them). */
export interface ChatResult {
  choices: ChatChoice[];
  usage?: ChatUsage;
  system_fingerprint?: string | null;
  [extra: string]: unknown;
}

export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChatDelta {
  role?: 'assistant';
  content?: string | null;
  reasoning?: string | null;
  reasoning_details?: ReasoningDetail[];
  tool_calls?: ToolCallDelta[];
  refusal?: string | null;
  /**
   * Non-enumerable (set by the Anthropic adapter, read by the Anthropic ingress): a stream event of
   * a server tool's block, or a text block's citation. Its delta carries nothing else, and the
   * OpenAI encoder leaves such a delta out (`onlyHidden`).
   */
  anthropic_event?: AnthropicBlockEvent;
  [extra: string]: unknown;
}

/** The final delta of a choice carries its `FinishDetails`; earlier ones `native_finish_reason: null`. */
export interface ChatDeltaChoice extends FinishDetails {
  index: number;
  delta: ChatDelta;
  finish_reason: FinishReason | null;
  logprobs?: unknown;
  [extra: string]: unknown;
}

/**
 * Stream events. `delta` carries OpenAI chunk choices as they are. `usage` may come more than once
 * (some upstreams repeat cumulative counts); the last one wins. `error` is a failure after the
 * upstream answered 200; the stream ends after it.
 */
export type ChatStreamEvent =
  | { type: 'delta'; choices: ChatDeltaChoice[] }
  | { type: 'usage'; usage: ChatUsage }
  | { type: 'error'; error: UpstreamError };
