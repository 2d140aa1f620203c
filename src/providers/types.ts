/**
 * The adapter seam. An adapter is pure translation: it builds the upstream HTTP request, parses a
 * non-stream answer, decodes a stream, and classifies failures. It never does I/O itself; the
 * caller sends the request with `src/gateway/upstream` (see `call-chat.ts` there), which keeps
 * retries, timeouts and aborts in one place.
 *
 * Adapters throw only `UpstreamError` (from `parseChatResponse`, `classifyError` returns one),
 * and, from `buildChatRequest`, `UnfitCandidate` scoped to the upstream for a request its kind
 * refuses before any call (an empty user message at Anthropic or Gemini: shared/empty-turn.ts),
 * so route execution tries the model's other upstreams without counting a try.
 *
 * An adapter whose answers and chunks are the upstream's own parsed objects, handed on as they are
 * (the OpenAI-compatible one), runs `dropUpstreamHidden` (gateway/chat/hidden.ts) on each choice:
 * a field the upstream named like a hidden answer field would otherwise be read as an adapter's.
 */

import type { ChatRequest, ChatResult, ChatStreamEvent, ReportedUsage } from '../gateway/chat/types.js';
import type { UpstreamError } from '../gateway/errors.js';
// The HTTP request shape is the upstream client's, a leaf module with no provider knowledge.
import type { UpstreamHttpRequest } from '../gateway/upstream/upstream-client.js';

/** Where and how to reach one upstream for one model. */
export interface UpstreamTarget {
  /** e.g. https://api.openai.com/v1, https://api.anthropic.com, https://generativelanguage.googleapis.com */
  baseUrl: string;
  apiKey: string;
  /** Model name the upstream knows. */
  upstreamModel: string;
  /** Extra headers sent on every call (they win over the adapter's own). */
  headers?: Record<string, string>;
  /** Kind-specific options; each adapter documents the keys it reads. */
  extra?: Record<string, unknown>;
  /**
   * The model's output limit (the registry's `max_completion_tokens`) when known: every adapter
   * sends at most this (`sentMaxTokens`), whether the client asked for more or the adapter raised
   * it (Anthropic thinking); OpenAI, Anthropic and Gemini refuse a larger output length.
   */
  maxOutputTokens?: number;
}

export type { UpstreamHttpRequest };

/** Response headers, lower-cased names (undici gives them so). */
export type UpstreamHeaders = Record<string, string | string[] | undefined>;

export interface StreamDecoder {
  /** Feed the next piece of the body (text or raw bytes; any boundary). */
  push(chunk: string | Uint8Array): ChatStreamEvent[];
  /** The body ended: flush, and report a stream that ended without its terminator as an error event. */
  end(): ChatStreamEvent[];
  /**
   * The body failed instead of ending (a reset, the idle timeout) after what was decoded so far.
   * Once every choice's finish reason has arrived the answer is whole and only its terminator
   * was lost: the events that end it as `end()` would (the finish and usage an upstream holds
   * for its terminator), without the partial event the cut left, are returned, and the stream
   * ends as one that closed cleanly. Undefined otherwise: the cut is the stream's failure.
   */
  endOnCut?(): ChatStreamEvent[] | undefined;
  /**
   * Whether the answer decoded so far is whole (what `endOnCut` would end cleanly), its terminator
   * or trailing events (a usage chunk) still to come; asks only, changes nothing. An upstream that
   * goes silent past this is given a short grace, then its stream ends as if cut there.
   */
  whole?(): boolean;
  /**
   * Usage the upstream reported in what was decoded so far, for a stream that ends without its
   * usage event; undefined unless it reported the prompt's count (only upstreams that report it
   * before the end need this: Anthropic in message_start, Gemini on every chunk).
   */
  reported?(): ReportedUsage | undefined;
}

/** What `ChatAdapter.paramsFor` reads of an upstream (a route target). */
export interface ParamsTarget {
  baseUrl: string;
  upstreamModel: string;
  /** The channel's settings (`UpstreamTarget.extra` when sending). */
  settings: Record<string, unknown>;
}

export interface ChatAdapter {
  readonly kind: string;
  /**
   * Request params this kind can express (sends as they are or translated). Others are dropped
   * silently by `buildChatRequest`; route planning uses this set for `provider.require_parameters`,
   * with the aliases of `gateway/chat/parameters.ts` (a set naming `max_tokens` takes
   * `max_completion_tokens`).
   */
  readonly supportedParams: ReadonlySet<string>;
  /**
   * The params one upstream of this kind sends for one model, when its settings, host or model
   * change them (an OpenAI-compatible upstream that speaks OpenRouter takes `top_a`, one with a
   * `supportedParams` list only what it names, an OpenAI reasoning model no `temperature`; an
   * Anthropic model from Claude 4.5 on takes `response_format`, from Opus 4.5 on `verbosity`):
   * exactly what `buildChatRequest` sends it. Route planning calls it per candidate, with the
   * same object for the same upstream while the registry holds it: an adapter may cache by that
   * object, and must not allocate per call. Absent: `supportedParams`.
   */
  paramsFor?(target: ParamsTarget): ReadonlySet<string>;
  /**
   * The `max_tokens` `buildChatRequest` sends for `req`, when it is not simply the client's (at
   * most the model's limit): one sent when the client asked none (Anthropic must send one), or
   * one raised to hold a thinking budget (Anthropic's is part of max_tokens). Route planning keeps
   * room for it beside the prompt (middle-out) and reserves quota for it. Absent: the client's,
   * or none, and the upstream answers in what the prompt leaves.
   */
  sentMaxTokens?(req: ChatRequest, target: ParamsTarget & { maxCompletionTokens: number | null }): number;
  buildChatRequest(req: ChatRequest, target: UpstreamTarget, opts: { stream: boolean }): UpstreamHttpRequest;
  /** Parses a 2xx body; throws UpstreamError for a non-2xx status or a malformed/blocked body. */
  parseChatResponse(status: number, body: string, headers: UpstreamHeaders): ChatResult;
  /**
   * @param maxEventBytes the largest single stream event (`gateway.max_stream_event_bytes`); one
   * larger ends the stream with a 'bad_response' error event. Undefined: the decoder's default.
   */
  createStreamDecoder(maxEventBytes?: number): StreamDecoder;
  classifyError(status: number, body: string, headers: UpstreamHeaders): UpstreamError;
  listModels?: {
    /** `page`: the cursor `nextPage` read from the page before; absent for the first page. */
    request(target: UpstreamTarget, page?: string): UpstreamHttpRequest;
    /**
     * The models the upstream serves, named as the upstream names them (Gemini's `models/` prefix
     * stripped), each with what its listing says of it in the wire format's own fields. Throws on
     * a body that is no listing.
     */
    parse(body: string): ListedModel[];
    /**
     * The cursor of the page after this one (Gemini's `nextPageToken`, Anthropic's `last_id` while
     * `has_more`), undefined on the last page. Absent: the listing is one page.
     */
    nextPage?(body: string): string | undefined;
  };
}

/**
 * One model of an upstream's listing, with the facts its listing gives, checked and in the
 * registry's units (shared/model-listing.ts); a fact the listing lacks, or gives in a shape that
 * does not check, is absent. The registry lays them under the config and admin entries.
 */
export interface ListedModel {
  name: string;
  /** The context window, in tokens. */
  contextLength?: number;
  /** The longest answer, in tokens (the registry's `max_completion_tokens`). */
  maxCompletionTokens?: number;
  /** Unix seconds. */
  created?: number;
  /** A name for people (`Gemma 3 27B`). */
  displayName?: string;
  inputModalities?: string[];
  outputModalities?: string[];
  /** OpenRouter's names of request parameters (`tools`, `temperature`, ...). */
  supportedParameters?: string[];
  /** What the upstream charges us: price key -> USD per unit, as OpenRouter writes it. */
  pricing?: Record<string, string>;
}
