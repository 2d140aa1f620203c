/**
 * Canonical answers -> Anthropic Messages responses (reference/providers.md §2.5-2.7).
 *
 * - An Anthropic answer (`anthropic_content`, hidden) is written with its content as it came: every
 *   block in its place (thinking interleaved with text and tool calls, server tool blocks such as
 *   server_tool_use and web_search_tool_result), signatures unchanged. In streams server tool
 *   events (`anthropic_event`, hidden) become blocks of their own at their place, with the
 *   upstream's deltas (input_json_delta), and text blocks' citations_delta are passed on.
 *   `usage.server_tool_use` (web searches and fetches) is passed on when the upstream reported it.
 * - Any other answer's content: thinking blocks first (from Anthropic-format `reasoning_details`,
 *   signature and redacted data unchanged; else the plain `reasoning` text with an empty signature,
 *   which Anthropic would not accept back and the adapter leaves out on the next turn), then the
 *   text, then one tool_use per tool call (arguments parsed to an object, the id kept). An
 *   OpenAI-format answer gives its reasoning and its content as two fields, so which came first
 *   is not known: the thinking leads, as a reasoning model thinks before it answers. A turn of
 *   thinking and tool calls alone has its thinking put back between the calls by the details'
 *   block indexes (`withThinkingInPlace`).
 * - Another upstream's signed reasoning (Gemini's thought signatures, in `reasoning_details`) rides
 *   in thinking blocks' signatures, for the client to send back (anthropic-signatures.ts): in the
 *   thinking block before the tool_use whose call it signs, else the first one; streamed, as one
 *   signature_delta at the block's close, and never in the middle of a text: one that comes while
 *   a text block is open waits for that block's end.
 * - stop_reason and stop_sequence (`anthropicStop`): `stop_sequence` with the matched string when
 *   the upstream said which of the request's stop sequences ended the answer; else the native
 *   finish reason when it is one of Anthropic's stop reasons (an Anthropic upstream's, directly or
 *   through an OpenRouter-like one); else from the finish reason: stop -> end_turn, length ->
 *   max_tokens, tool_calls -> tool_use, content_filter -> refusal. An upstream that stopped on a
 *   sequence without saying so (Gemini, OpenAI) gives end_turn: the gateway cannot tell.
 * - usage: input_tokens excludes cached tokens (Anthropic's meaning): prompt - cache reads -
 *   cache writes, with those two as cache_read_input_tokens / cache_creation_input_tokens; the
 *   answer's and message_start's usage add the writes by TTL (`cache_creation`), which Anthropic's
 *   message_delta usage does not carry.
 * - Streams: message_start, then content_block_start / _delta / _stop per block (text_delta,
 *   thinking_delta, signature_delta, input_json_delta), message_delta (stop reason and the final
 *   usage, input counts included since message_start cannot know them), message_stop. A failure
 *   is one `error` event, as Anthropic sends it, and ends the stream.
 */
import type {
  AnthropicBlockEvent,
  AssistantMessage,
  ChatDeltaChoice,
  ChatResult,
  ChatUsage,
  ContentPiece,
  FinishDetails,
  FinishReason,
  ReasoningDetail,
} from '../../gateway/chat/types.js';
import type { GatewayError } from '../../gateway/errors.js';
import {
  reasoningBlocksAt,
  replayableByAnthropic,
  withThinkingInPlace,
} from '../../providers/anthropic/anthropic-messages.js';
import { argumentsObject } from '../../providers/shared/tools.js';
import {
  carriedDetails,
  carryingSignature,
  detailItems,
  withCarriedSignatures,
} from './anthropic-signatures.js';

type Block = Record<string, unknown> & { type: string };

/** Anthropic's error type for a gateway status (the SDKs pick their error class by status). */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    case 504:
      return 'timeout_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

export function anthropicErrorBody(e: GatewayError, requestId: string | undefined): Record<string, unknown> {
  const body: Record<string, unknown> = {
    type: 'error',
    error: { type: anthropicErrorType(e.status), message: e.message },
  };
  if (requestId) body.request_id = requestId;
  return body;
}

/** Anthropic's stop reasons (reference/providers.md §2.5). */
const ANTHROPIC_STOP_REASONS = new Set([
  'end_turn',
  'max_tokens',
  'stop_sequence',
  'tool_use',
  'pause_turn',
  'refusal',
  'model_context_window_exceeded',
]);

/** How a choice finished, as a canonical choice (or its final delta) says it. */
export interface Finish extends FinishDetails {
  finish_reason: FinishReason | null | undefined;
}

/** The request's stop sequences as a list (`stop` may be one string). */
export function stopList(stop: string | string[] | null | undefined): readonly string[] {
  if (typeof stop === 'string') return [stop];
  return stop ?? [];
}

/**
 * An answer's `stop_reason` and `stop_sequence`. The matched sequence is believed only when it is
 * one the request asked for. A native `stop_sequence` without the string (OpenRouter does not
 * pass it on) is that sequence when the request had only one, else null: the stop reason still
 * says a sequence matched, which `end_turn` would hide.
 */
export function anthropicStop(
  f: Finish | undefined,
  stops: readonly string[],
): { stop_reason: string; stop_sequence: string | null } {
  const matched = f?.stop_sequence;
  if (typeof matched === 'string' && stops.includes(matched))
    return { stop_reason: 'stop_sequence', stop_sequence: matched };
  const native = f?.native_finish_reason;
  if (native === 'stop_sequence')
    return { stop_reason: native, stop_sequence: stops.length === 1 ? stops[0]! : null };
  if (typeof native === 'string' && ANTHROPIC_STOP_REASONS.has(native))
    return { stop_reason: native, stop_sequence: null };
  return { stop_reason: anthropicStopReason(f?.finish_reason), stop_sequence: null };
}

export function anthropicStopReason(finish: FinishReason | null | undefined): string {
  switch (finish) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/**
 * A Message's usage (Anthropic's `Usage`: the non-streamed answer and message_start), with the
 * cache writes by TTL in `cache_creation`: the one-hour ones (`cache_write_1h_tokens`, at most all
 * the writes) and the rest as five-minute ones, as the gateway bills them. An upstream that gave
 * no TTL split (OpenRouter's `cache_write_tokens`) has all its writes as five-minute ones.
 */
export function anthropicUsage(u: ChatUsage | undefined): Record<string, unknown> {
  const { server_tool_use, ...counts } = anthropicDeltaUsage(u);
  const write = counts.cache_creation_input_tokens;
  const write1h = Math.min(write, Math.max(0, int(u?.prompt_tokens_details?.cache_write_1h_tokens)));
  return {
    ...counts,
    cache_creation: { ephemeral_5m_input_tokens: write - write1h, ephemeral_1h_input_tokens: write1h },
    ...(server_tool_use ? { server_tool_use } : {}),
  };
}

/**
 * message_delta's usage (Anthropic's `MessageDeltaUsage`): the counts, without `cache_creation`,
 * and the server tool calls the upstream reported (`server_tool_use`), when it did.
 */
export function anthropicDeltaUsage(u: ChatUsage | undefined) {
  const read = int(u?.prompt_tokens_details?.cached_tokens);
  const write = int(u?.prompt_tokens_details?.cache_write_tokens);
  const s = u?.server_tool_use;
  return {
    input_tokens: Math.max(0, int(u?.prompt_tokens) - read - write),
    output_tokens: int(u?.completion_tokens),
    cache_creation_input_tokens: write,
    cache_read_input_tokens: read,
    ...(s && typeof s === 'object'
      ? {
          server_tool_use: {
            web_search_requests: int(s.web_search_requests),
            web_fetch_requests: int(s.web_fetch_requests),
          },
        }
      : {}),
  };
}

const int = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) ? Math.round(n) : 0);

export function encodeAnthropicMessage(
  id: string,
  model: string,
  result: ChatResult,
  usage: ChatUsage | undefined,
  stops: readonly string[] = [],
): string {
  const choice = result.choices[0];
  const m = choice?.message;
  let content: Block[] = [];
  // A Gemini answer: its thinking, text and calls in the order of its parts.
  const ordered = m?.content_order ? inUpstreamOrder(m, m.content_order) : undefined;
  // An Anthropic answer: its content as it came, every block in its place.
  if (m?.anthropic_content) content = m.anthropic_content;
  else if (ordered) content = withCarriedSignatures(ordered, m?.reasoning_details);
  else if (m) {
    const thinking = reasoningBlocksAt(detailItems(m.reasoning_details), true);
    const rest: Block[] = [];
    const text = (m.content ?? '') || (m.refusal ?? '');
    if (text) rest.push({ type: 'text', text });
    for (const call of m.tool_calls ?? [])
      rest.push({
        type: 'tool_use',
        id: call.id,
        name: call.function.name,
        input: argumentsObject(call.function.arguments),
      });
    // Interleaved thinking where the upstream answer had it: the client echoes this turn back.
    if (thinking.blocks.length > 0) content = withThinkingInPlace(thinking.blocks, thinking.at, rest);
    else if (m.reasoning) content = [{ type: 'thinking', thinking: m.reasoning, signature: '' }, ...rest];
    else content = rest;
    // Another upstream's signatures (Gemini's), for the client to send back (anthropic-signatures.ts).
    content = withCarriedSignatures(content, m.reasoning_details);
  }
  return JSON.stringify({
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    ...anthropicStop(choice, stops),
    usage: anthropicUsage(usage),
  });
}

/**
 * An answer's blocks in the upstream's order (`content_order`, Gemini's): consecutive reasoning
 * pieces one thinking block, consecutive text pieces one text block, each tool call the next of
 * the message's tool calls (with the id the gateway gave it). Thinking only while the message has
 * its reasoning (`reasoning.exclude` removes it), with an empty signature as for any non-Anthropic
 * reasoning. Undefined, so the canonical layout is written, when the pieces do not add up to the
 * message (a refusal, a call without its tool call): the canonical fields are what was billed and
 * logged.
 */
function inUpstreamOrder(m: AssistantMessage, pieces: ContentPiece[]): Block[] | undefined {
  if (m.refusal) return undefined;
  const calls = m.tool_calls ?? [];
  const thinks = m.reasoning != null;
  const out: Block[] = [];
  let last: Block | undefined;
  let call = 0;
  let text = '';
  let reasoning = '';
  for (const p of pieces) {
    if (p.type === 'tool_call') {
      const c = calls[call++];
      if (!c) return undefined;
      last = {
        type: 'tool_use',
        id: c.id,
        name: c.function.name,
        input: argumentsObject(c.function.arguments),
      };
      out.push(last);
    } else if (p.type === 'reasoning') {
      reasoning += p.text;
      if (!thinks) continue;
      if (last?.type === 'thinking') last.thinking = `${last.thinking}${p.text}`;
      else {
        last = { type: 'thinking', thinking: p.text, signature: '' };
        out.push(last);
      }
    } else {
      text += p.text;
      if (last?.type === 'text') last.text = `${last.text}${p.text}`;
      else {
        last = { type: 'text', text: p.text };
        out.push(last);
      }
    }
  }
  if (call !== calls.length || text !== (m.content ?? '') || (thinks && reasoning !== m.reasoning))
    return undefined;
  return out;
}

export const sseEvent = (type: string, data: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

export function anthropicErrorEvent(e: GatewayError, requestId: string | undefined): string {
  const body = anthropicErrorBody(e, requestId);
  return `event: error\ndata: ${JSON.stringify(body)}\n\n`;
}

/**
 * Writes one stream's deltas as Anthropic events. Blocks are opened as their kind of delta
 * arrives and closed when another kind (or another thinking block, by its upstream index, or
 * another tool call) begins, so indexes follow the order of the final content as Anthropic's do.
 */
export class AnthropicStreamEncoder {
  private started = false;
  private next = 0;
  /** The open block's index and kind (-1: none). */
  private openIndex = -1;
  private openKind: 'text' | 'thinking' | 'tool' | 'native' | undefined;
  /** The upstream index of the open thinking block's details. */
  private thinkingKey: number | undefined;
  /** Other upstreams' signed reasoning the open thinking block carries: its signature, at its close. */
  private carried: ReasoningDetail[] = [];
  /**
   * Such reasoning without a tool call's id that came while a text block was open (Gemini signs
   * the last part that still carries text): held until the next block boundary, so the text is
   * not cut in two (a thinking block between its halves, which comes back joined by a line break).
   */
  private held: ReasoningDetail[] = [];
  /** Tool call index -> its block's index. */
  private readonly tools = new Map<number, number>();
  /** Upstream index of a server tool block -> its block's index. */
  private readonly natives = new Map<number, number>();
  /** The finishing delta of choice 0 (its finish details ride on it). */
  private finish: Finish | undefined;

  constructor(
    private readonly id: string,
    private readonly model: string,
    private readonly requestId: string,
    /** The usage message_start reports (input counts; the final ones come in message_delta). */
    private readonly startUsage: ChatUsage | undefined,
    /** The request's stop sequences (see `anthropicStop`). */
    private readonly stops: readonly string[] = [],
  ) {}

  private start(): string {
    if (this.started) return '';
    this.started = true;
    return sseEvent('message_start', {
      message: {
        id: this.id,
        type: 'message',
        role: 'assistant',
        model: this.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: anthropicUsage(this.startUsage),
      },
    });
  }

  private close(): string {
    if (this.openIndex < 0) return '';
    let out = '';
    // As Anthropic sends a signature: one signature_delta, just before the block's stop.
    if (this.carried.length > 0) {
      out = this.delta({ type: 'signature_delta', signature: carryingSignature(this.carried) });
      this.carried = [];
    }
    out += sseEvent('content_block_stop', { index: this.openIndex });
    this.openIndex = -1;
    this.openKind = undefined;
    return out;
  }

  /**
   * Opens a block, closing the open one. What was `held` while a text block was open rides in the
   * block opening at this boundary when it `carries` (an unsigned thinking block of the gateway's
   * own), else in an empty thinking block of its own, before it.
   */
  private open(kind: 'text' | 'thinking' | 'tool' | 'native', block: Block, carries = false): string {
    let out = this.close();
    if (!carries) out += this.writeHeld();
    out += sseEvent('content_block_start', { index: this.next, content_block: block });
    this.openIndex = this.next++;
    this.openKind = kind;
    if (carries && this.held.length > 0) {
      this.carried.push(...this.held);
      this.held = [];
    }
    return out;
  }

  /** The held signatures (`held`) as an empty thinking block of their own, when there are any. */
  private writeHeld(): string {
    if (this.held.length === 0) return '';
    const index = this.next++;
    const out =
      sseEvent('content_block_start', {
        index,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      }) +
      this.delta({ type: 'signature_delta', signature: carryingSignature(this.held) }, index) +
      sseEvent('content_block_stop', { index });
    this.held = [];
    return out;
  }

  /** Opens a thinking block unless one is open for `key`; `carries`: see `open`. */
  private thinking(key: number | undefined, carries = false): string {
    if (this.openKind === 'thinking' && (key === undefined || key === this.thinkingKey)) return '';
    this.thinkingKey = key;
    return this.open('thinking', { type: 'thinking', thinking: '', signature: '' }, carries);
  }

  private delta(delta: Record<string, unknown>, index = this.openIndex): string {
    return sseEvent('content_block_delta', { index, delta });
  }

  /**
   * A server tool block's event (or a text block's citation) from an Anthropic upstream, in place:
   * its start opens a block of its own with the upstream's block as it is, its deltas
   * (input_json_delta) go to that block, its stop closes it. A citations_delta goes to the text
   * block open (one is opened when none is).
   */
  private native(ev: AnthropicBlockEvent): string {
    if (ev.type === 'start') {
      const out = this.open('native', ev.block);
      this.natives.set(ev.index, this.openIndex);
      return out;
    }
    const index = this.natives.get(ev.index);
    if (ev.type === 'stop') return index !== undefined && index === this.openIndex ? this.close() : '';
    if (index !== undefined) return this.delta(ev.delta, index);
    if (ev.delta.type !== 'citations_delta') return '';
    const open = this.openKind === 'text' ? '' : this.open('text', { type: 'text', text: '' });
    return open + this.delta(ev.delta);
  }

  chunk(choices: ChatDeltaChoice[]): string {
    let out = this.start();
    for (const c of choices) {
      if (c.index !== 0) continue;
      const d = c.delta;
      if (d.anthropic_event) out += this.native(d.anthropic_event);
      const details = detailItems(d.reasoning_details).filter(replayableByAnthropic);
      if (details.length > 0) {
        for (const r of details) {
          if (r.type === 'reasoning.text') {
            out += this.thinking(r.index);
            if (r.text) out += this.delta({ type: 'thinking_delta', thinking: r.text });
            if (r.signature) out += this.delta({ type: 'signature_delta', signature: r.signature });
          } else if (r.type === 'reasoning.encrypted' && r.data) {
            out += this.open('thinking', { type: 'redacted_thinking', data: r.data });
            out += this.close();
          }
        }
      } else if (d.reasoning) {
        out += this.thinking(undefined, true);
        out += this.delta({ type: 'thinking_delta', thinking: d.reasoning });
      }
      // Another upstream's signatures (Gemini's, on a thought, text or functionCall part) ride in
      // the thinking block open, else in an empty one of their own, which the part's text or
      // tool call, coming next, closes. One without a call's id while a text block is open waits
      // for that block's end (`held`): the text goes on in the same block.
      for (const r of carriedDetails(d.reasoning_details)) {
        if (this.openKind === 'text' && !r.id) {
          this.held.push(r);
          continue;
        }
        out += this.thinking(undefined, true);
        this.carried.push(r);
      }
      const text = d.content || d.refusal;
      if (text) {
        if (this.openKind !== 'text') out += this.open('text', { type: 'text', text: '' });
        out += this.delta({ type: 'text_delta', text });
      }
      if (d.tool_calls)
        for (const t of d.tool_calls) {
          let index = this.tools.get(t.index);
          if (index === undefined) {
            out += this.open('tool', {
              type: 'tool_use',
              id: t.id || `toolu_${this.id.slice(4)}_${t.index}`,
              name: t.function?.name ?? '',
              input: {},
            });
            index = this.openIndex;
            this.tools.set(t.index, index);
          }
          const args = t.function?.arguments;
          if (args) out += this.delta({ type: 'input_json_delta', partial_json: args }, index);
        }
      if (c.finish_reason) this.finish = c;
    }
    return out;
  }

  end(usage: ChatUsage | undefined, failure: GatewayError | undefined): string {
    if (failure !== undefined) return anthropicErrorEvent(failure, this.requestId);
    return (
      this.start() +
      this.close() +
      this.writeHeld() +
      sseEvent('message_delta', {
        delta: anthropicStop(this.finish, this.stops),
        usage: anthropicDeltaUsage(usage),
      }) +
      sseEvent('message_stop', {})
    );
  }
}
