/**
 * OpenAI-format answers -> canonical. The upstream JSON is parsed once and handed on as is (the
 * canonical result and chunk choices are OpenAI's own shapes); the only rewrite is the
 * `reasoning_content` alias (llama.cpp, older vLLM, DeepSeek) to `reasoning` and content given as a
 * list of chunks (Mistral: `fromParts`) to string content and reasoning, `reasoning_details` kept
 * to a list of objects (`detailsOnly`), and the only additions a choice's finish details
 * (`finishDetails`), an id for a tool call that came without one, and in streams the `index` of a
 * tool-call delta that had none or a clashing one (`ToolCallIndexes`). Fields named like the
 * gateway's hidden answer fields (a choice's `stop_sequence`, a message's or delta's
 * `anthropic_content`...) are dropped (`dropUpstreamHidden`): handed on, they would be read as this
 * adapter's word.
 *
 * Reasoning tokens: a server that sends reasoning text (`reasoning_content` / `reasoning`: vLLM,
 * llama.cpp, DeepSeek-style servers) but no `completion_tokens_details.reasoning_tokens` count gets
 * one estimated from that text (`withReasoningEstimate`), as Anthropic's thinking is counted, at
 * most the completion count; a count the upstream gives is kept.
 *
 * The non-stream result may still carry upstream fields such as id/model/created; the encoder
 * overwrites those it owns.
 */

import { dropUpstreamHidden, setHidden } from '../../gateway/chat/hidden.js';
import { SseDecoder } from '../../gateway/chat/sse.js';
import { sampledTokens } from '../../gateway/chat/tokens.js';
import type {
  ChatChoice,
  ChatDeltaChoice,
  ChatResult,
  ChatStreamEvent,
  ChatUsage,
  FinishReason,
} from '../../gateway/chat/types.js';
import { isCount } from '../../gateway/chat/usage-counts.js';
import { UpstreamError } from '../../gateway/errors.js';
import { isPlainObject as isDetail } from '../../gateway/plain-object.js';
import { classifyFailure, excerpt, safeJson } from '../shared/classify-failure.js';
import { newCallId } from '../shared/tools.js';
import type { StreamDecoder, UpstreamHeaders } from '../types.js';
import { ToolCallIndexes } from './tool-call-indexes.js';

interface OpenAiErrorBody {
  error?:
    | {
        message?: string;
        type?: string;
        code?: string | number | null;
        param?: string | null;
        /** OpenRouter: the moderation flag's `reasons`/`flagged_input`, or a typed `error_type`. */
        metadata?: { reasons?: unknown; flagged_input?: unknown; error_type?: unknown } | null;
        /** OpenRouter: why no endpoint could serve the model (`region_restricted`, ...). */
        availability?: { code?: unknown } | null;
      }
    | string;
  message?: string;
  type?: string;
  code?: string | number;
  detail?: unknown;
}

export function classifyOpenAiError(status: number, body: string, headers: UpstreamHeaders): UpstreamError {
  const parsed = safeJson(body) as OpenAiErrorBody | undefined;
  if (!parsed || typeof parsed !== 'object') {
    return classifyFailure(status, headers, { message: body ? excerpt(body) : undefined });
  }
  // Shapes: OpenAI {error:{...}}, old vLLM flat {object:"error", message, type, code}, {error:"text"}, FastAPI {detail}.
  const e = typeof parsed.error === 'object' && parsed.error !== null ? parsed.error : parsed;
  const message =
    (typeof parsed.error === 'string' ? parsed.error : e.message) ??
    (typeof parsed.detail === 'string' ? parsed.detail : undefined) ??
    excerpt(body);
  const code = typeof e.code === 'string' ? e.code : undefined;
  const codes = [code, e.type];
  if (typeof parsed.error === 'object' && parsed.error !== null) {
    // OpenRouter answers 403 for a bad key and for a prompt its moderation flagged: the flag is
    // this request's content, not the key's, so the key is not set aside for everyone.
    const meta = parsed.error.metadata;
    if (meta && typeof meta === 'object') {
      if (Array.isArray(meta.reasons) || typeof meta.flagged_input === 'string')
        codes.push('content_policy_violation');
      if (typeof meta.error_type === 'string') codes.push(meta.error_type);
    }
    const availability = parsed.error.availability?.code;
    if (typeof availability === 'string') codes.push(availability);
  }
  return classifyFailure(status, headers, { codes, message });
}

/**
 * `usage` with `completion_tokens_details.reasoning_tokens` estimated from `texts`, the reasoning
 * the answer carried, when the upstream gave no count there (absent, null, not a count) and its
 * completion count is one (else the gateway counts the completion itself). Mutates and returns
 * the upstream's usage object, parsed for this answer alone.
 */
export function withReasoningEstimate(usage: ChatUsage, texts: readonly string[]): ChatUsage {
  if (!texts.some((t) => t !== '') || !usage || typeof usage !== 'object') return usage;
  const completion = usage.completion_tokens;
  if (!isCount(completion)) return usage;
  const d = usage.completion_tokens_details;
  if (d && typeof d === 'object' && isCount(d.reasoning_tokens)) return usage;
  const estimate = Math.min(sampledTokens(texts), completion);
  if (estimate === 0) return usage;
  usage.completion_tokens_details = {
    ...(d && typeof d === 'object' ? d : {}),
    reasoning_tokens: estimate,
  };
  return usage;
}

export function parseOpenAiResponse(status: number, body: string, headers: UpstreamHeaders): ChatResult {
  if (status < 200 || status >= 300) throw classifyOpenAiError(status, body, headers);
  let parsed: any;
  try {
    parsed = JSON.parse(body);
  } catch (cause) {
    throw new UpstreamError('bad_response', `unparseable upstream body: ${excerpt(body)}`, {
      upstreamStatus: status,
      cause,
    });
  }
  // `choices: []` is no answer either (clients read choices[0]): a failure another upstream may not have.
  const noChoices = !Array.isArray(parsed?.choices) || parsed.choices.length === 0;
  if (noChoices && parsed?.error) {
    // Some gateways answer 200 with only an error object.
    throw classifyOpenAiError(errorStatus(parsed.error, 500), body, headers);
  }
  if (noChoices) {
    throw new UpstreamError('bad_response', `upstream body has no choices: ${excerpt(body)}`, {
      upstreamStatus: status,
    });
  }
  // OpenRouter's answer when the provider failed part-way (finish_reason "error" and the choice's
  // own error): a partial answer is no answer, and nothing was sent to the client yet, so it is
  // an upstream failure, retried and fallen back from like any other (decisions.md).
  const failed = parsed.choices.find(
    (c: any) => c?.finish_reason === 'error' && c.error && typeof c.error === 'object',
  );
  if (failed) {
    throw classifyOpenAiError(
      errorStatus(failed.error, 502),
      JSON.stringify({ error: failed.error }),
      headers,
    );
  }
  const thoughts: string[] = [];
  for (const c of parsed.choices) {
    const m = c?.message;
    if (m === null || typeof m !== 'object') {
      throw new UpstreamError('bad_response', `upstream choice has no message: ${excerpt(body)}`, {
        upstreamStatus: status,
      });
    }
    // DeepSeek's and vLLM's name for it; vLLM sends both names with the same text. Taken once, as
    // `reasoning`: left beside it, it went out twice, and past `reasoning.exclude`.
    if (m.reasoning_content !== undefined) {
      if (m.reasoning === undefined && typeof m.reasoning_content === 'string')
        m.reasoning = m.reasoning_content;
      delete m.reasoning_content;
    }
    if (Array.isArray(m.content)) fromParts(m, m.content, null);
    if (m.reasoning_details != null) detailsOnly(m);
    // Clients answer a call by its id (tool_call_id, function_call_output.call_id): some servers
    // (older Ollama, LM Studio) leave it out.
    if (Array.isArray(m.tool_calls))
      for (const t of m.tool_calls)
        if (t && typeof t === 'object' && (typeof t.id !== 'string' || t.id === '')) t.id = newCallId();
    if (c.finish_reason === undefined) c.finish_reason = null;
    dropUpstreamHidden(c, m);
    finishDetails(c);
    if (typeof m.reasoning === 'string' && m.reasoning !== '') thoughts.push(m.reasoning);
  }
  if (parsed.usage) withReasoningEstimate(parsed.usage, thoughts);
  return parsed as ChatResult;
}

/**
 * Servers' own finish reasons, as OpenRouter normalises them (the raw value stays in
 * `native_finish_reason`): text-generation-inference's `eos_token` and `stop_sequence`, Mistral's
 * `model_length`, and an Anthropic-style proxy's `end_turn`, `max_tokens` and `tool_use`. Others
 * pass on as they are (OpenRouter: "some models may add others"). A null prototype, so a value
 * named like an Object property (`constructor`) finds nothing.
 */
const OWN_FINISH_REASONS: Record<string, FinishReason | undefined> = Object.assign(Object.create(null), {
  eos_token: 'stop',
  stop_sequence: 'stop',
  end_turn: 'stop',
  model_length: 'length',
  max_tokens: 'length',
  tool_use: 'tool_calls',
});

/**
 * A choice's `FinishDetails` (types.ts), on the upstream's own object: `native_finish_reason` is
 * the one it sent (an OpenRouter-like server's, passed on as is) or else its `finish_reason`,
 * which is the raw value of an OpenAI-compatible server; a vLLM server's `stop_reason` that is a
 * string is the stop sequence that matched (an integer one is a stop token id, and null a
 * natural end).
 */
function finishDetails(c: ChatChoice | ChatDeltaChoice): void {
  if (c.native_finish_reason === undefined) c.native_finish_reason = c.finish_reason;
  if (c.finish_reason) {
    const normal = OWN_FINISH_REASONS[c.finish_reason];
    if (normal !== undefined) c.finish_reason = normal;
  }
  if (c.finish_reason === 'stop' && typeof c.stop_reason === 'string' && c.stop_reason !== '')
    setHidden(c, 'stop_sequence', c.stop_reason);
}

/**
 * Content as a list of chunks (Mistral's reasoning models, streamed and not): `text` chunks are
 * the content, as one string; `thinking` chunks (their `thinking` a list of text chunks, or a
 * string) are reasoning, after any the message had. Other chunks (Mistral's `reference`) carry no
 * text and are left out: a chat completion's content is a string. `none` is the content when
 * there was no text (null for a message, absent for a delta).
 */
function fromParts(
  m: { content?: unknown; reasoning?: unknown },
  parts: unknown[],
  none: null | undefined,
): void {
  let text = '';
  let thinking = '';
  let hasText = false;
  for (const p of parts as any[]) {
    if (p === null || typeof p !== 'object') continue;
    if (p.type === 'text' && typeof p.text === 'string') {
      text += p.text;
      hasText = true;
    } else if (p.type === 'thinking') thinking += partsText(p.thinking);
  }
  if (hasText) m.content = text;
  else if (none === undefined) delete m.content;
  else m.content = none;
  if (thinking !== '') m.reasoning = typeof m.reasoning === 'string' ? m.reasoning + thinking : thinking;
}

/**
 * `reasoning_details` as the canonical answer holds them, a list of objects (OpenRouter's items):
 * a value that is not a list is dropped, and so are the items that are not objects (null, a
 * string), the rest kept in their order. Every reader of an answer's details (the Anthropic
 * ingress's thinking blocks and signatures, the Responses ingress's `encrypted_content`) takes
 * them as the type says; a string there was a 500 on /v1/messages, a null item a failed stream.
 * Here, where the upstream's objects become the canonical answer, rather than in each reader: the
 * Anthropic and Gemini adapters build their details themselves. Null (OpenRouter's "none") stays.
 */
function detailsOnly(m: { reasoning_details?: unknown }): void {
  const details = m.reasoning_details;
  if (!Array.isArray(details)) {
    delete m.reasoning_details;
    return;
  }
  // One pass and no allocation for a well-formed list, the one every chunk has.
  for (let i = 0; i < details.length; i++)
    if (!isDetail(details[i])) {
      m.reasoning_details = details.filter(isDetail);
      return;
    }
}

function partsText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (!Array.isArray(v)) return '';
  let out = '';
  for (const p of v) if (p && typeof p === 'object' && typeof p.text === 'string') out += p.text;
  return out;
}

/** Error carried inside a 200 stream: `data: {"error": {...}}` (OpenAI, vLLM, OpenRouter, llama.cpp). */
function streamError(err: any): UpstreamError {
  return classifyOpenAiError(errorStatus(err, 500), JSON.stringify({ error: err }), {});
}

/**
 * The HTTP status an error object that came with a 200 (in a stream, or as a whole body) stands
 * for: its numeric `code` (OpenRouter, vLLM, llama.cpp), else the status OpenAI answers for its
 * string `code` or its `type` (`{"type": "invalid_request_error", "code":
 * "context_length_exceeded"}` is the client's 400, not the upstream's 500), else `otherwise`.
 * Read once here for streams and whole bodies, so both classify such an error alike.
 */
export function errorStatus(err: unknown, otherwise: number): number {
  if (err === null || typeof err !== 'object') return otherwise;
  const { code, type } = err as { code?: unknown; type?: unknown };
  if (typeof code === 'number' && Number.isInteger(code) && code >= 400 && code <= 599) return code;
  for (const name of [code, type])
    if (typeof name === 'string') {
      const status = STATUS_OF_CODE[name.toLowerCase()];
      if (status !== undefined) return status;
    }
  return otherwise;
}

/** OpenAI's (and OpenAI-compatible servers') error types and codes, by the status they come with. */
const STATUS_OF_CODE: Record<string, number> = {
  invalid_request_error: 400,
  context_length_exceeded: 400,
  authentication_error: 401,
  invalid_api_key: 401,
  permission_error: 403,
  not_found_error: 404,
  model_not_found: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  rate_limit_exceeded: 429,
  insufficient_quota: 429,
  server_error: 500,
  api_error: 500,
  overloaded_error: 503,
  server_is_overloaded: 503,
  service_unavailable_error: 503,
  unavailable_error: 503,
  slow_down: 503,
  timeout_error: 504,
};

/**
 * An event of type `error` (`event: error`, or older llama.cpp's `error:` field, `SseDecoder`):
 * its data is the error object, bare (`{"code": 500, "message": ..., "type": ...}`) or wrapped
 * (`{"error": {...}}`), or a text.
 */
function errorEvent(data: string): UpstreamError {
  const parsed = safeJson(data) as any;
  if (parsed !== null && typeof parsed === 'object') {
    const e = parsed.error;
    if (e !== null && typeof e === 'object') return streamError(e);
    return streamError(typeof e === 'string' ? { code: parsed.code, message: e } : parsed);
  }
  return streamError({ message: data ? excerpt(data) : 'upstream stream error event' });
}

export class OpenAiStreamDecoder implements StreamDecoder {
  private readonly sse: SseDecoder;
  /** A chunk with choices was seen (the first delta carries the role). */
  private sawRole = false;
  private finished = false;
  private done = false;
  private failed = false;
  /** Per choice index, made at a choice's first tool-call delta. */
  private tools?: Map<unknown, ToolCallIndexes>;
  /**
   * Reasoning text so far, for a usage chunk without a reasoning count (`withReasoningEstimate`),
   * counted as one text (the deltas cut words apart).
   */
  private readonly thoughts: string[] = [];

  /** @param maxEventBytes the largest single event; see `SseDecoder`. */
  constructor(maxEventBytes?: number) {
    this.sse = new SseDecoder(maxEventBytes);
  }

  push(chunk: string | Uint8Array): ChatStreamEvent[] {
    const events = this.sse.push(chunk);
    if (events.length === 0) return [];
    const out: ChatStreamEvent[] = [];
    for (const ev of events) this.handle(ev.data, ev.event, out);
    return out;
  }

  end(): ChatStreamEvent[] {
    const out: ChatStreamEvent[] = [];
    for (const ev of this.sse.end()) this.handle(ev.data, ev.event, out);
    if (!this.done && !this.finished && !this.failed) {
      this.failed = true;
      out.push({ type: 'error', error: new UpstreamError('connection', 'upstream stream ended early') });
    }
    return out;
  }

  /**
   * Whole once its choice finished (`n` is at most 1) or `[DONE]` came; a usage chunk the cut
   * lost is counted locally, as for a body that closed without one.
   */
  endOnCut(): ChatStreamEvent[] | undefined {
    if (!this.whole()) return undefined;
    this.done = true;
    return [];
  }

  whole(): boolean {
    return !this.failed && (this.finished || this.done);
  }

  private toolIndexes(choice: unknown): ToolCallIndexes {
    this.tools ??= new Map();
    let t = this.tools.get(choice);
    if (!t) {
      t = new ToolCallIndexes();
      this.tools.set(choice, t);
    }
    return t;
  }

  private handle(data: string, event: string | undefined, out: ChatStreamEvent[]): void {
    if (this.done || this.failed) return;
    if (event === 'error') {
      this.failed = true;
      out.push({ type: 'error', error: errorEvent(data) });
      return;
    }
    if (data === '[DONE]') {
      this.done = true;
      // A stream that ends properly without a single choice is no answer, not an empty success.
      if (!this.sawRole) {
        this.failed = true;
        out.push({
          type: 'error',
          error: new UpstreamError('bad_response', 'upstream stream had no choices'),
        });
      }
      return;
    }
    let chunk: any;
    try {
      chunk = JSON.parse(data);
    } catch (cause) {
      this.failed = true;
      out.push({
        type: 'error',
        error: new UpstreamError('bad_response', `unparseable stream chunk: ${excerpt(data)}`, { cause }),
      });
      return;
    }
    if (chunk.error) {
      this.failed = true;
      out.push({ type: 'error', error: streamError(chunk.error) });
      return;
    }
    const choices: ChatDeltaChoice[] | undefined = chunk.choices;
    if (choices && choices.length > 0) {
      for (const c of choices) {
        const d = c.delta;
        if (d) {
          if (d.reasoning_content !== undefined) {
            if (d.reasoning === undefined && typeof d.reasoning_content === 'string')
              d.reasoning = d.reasoning_content;
            delete d.reasoning_content;
          }
          if (Array.isArray(d.content)) fromParts(d, d.content, undefined);
          if (d.reasoning_details != null) detailsOnly(d);
          if (typeof d.reasoning === 'string' && d.reasoning !== '') this.thoughts.push(d.reasoning);
          // Clients (LangChain-JS) key tool-call parsing off a first delta with the role.
          if (!this.sawRole) d.role ??= 'assistant';
          if (Array.isArray(d.tool_calls)) this.toolIndexes(c.index).apply(d.tool_calls);
        } else {
          c.delta = this.sawRole ? {} : { role: 'assistant' };
        }
        if (c.finish_reason === undefined) c.finish_reason = null;
        else if (c.finish_reason !== null) this.finished = true;
        dropUpstreamHidden(c, c.delta);
        finishDetails(c);
      }
      this.sawRole = true;
      out.push({ type: 'delta', choices });
    } else if (chunk.object === 'error') {
      // Older vLLM's flat error object (`{"object": "error", "message", "type", "code"}`).
      this.failed = true;
      out.push({ type: 'error', error: streamError(chunk) });
      return;
    }
    // Groq puts a stream's usage on its last chunk under `x_groq.usage`, not at the top level;
    // without it the answer was counted locally although Groq had counted it.
    const usage = chunk.usage ?? chunk.x_groq?.usage;
    if (usage && typeof usage === 'object')
      out.push({ type: 'usage', usage: withReasoningEstimate(usage, [this.thoughts.join('')]) });
  }
}
