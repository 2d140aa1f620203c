/**
 * Anthropic SSE events -> canonical events.
 * - message_start: first delta `{role:'assistant', content:''}`; input and cache counts kept (with
 *   the cache writes by TTL, `cache_creation`).
 * - content blocks share one index space with text and thinking, so tool calls get their own
 *   counter (0, 1, ...) in order of appearance; a tool block that streamed no argument fragment gets
 *   `"{}"` at its content_block_stop.
 * - thinking_delta -> `reasoning` + a `reasoning.text` detail; signature_delta -> a detail carrying the
 *   signature; redacted_thinking -> `reasoning.encrypted`. Details carry the block index so a client
 *   that returns them lets `reasoningToBlocks` rebuild the blocks.
 * - message_delta counts are cumulative: the last wins, never summed. The finish delta (with the
 *   stop reason as the native one, and the matched stop sequence) and the usage event are emitted
 *   at message_stop.
 * - `event: error` after the 200 -> an error event classified by its type (overloaded_error -> 529).
 * - Blocks of server tools (server_tool_use, web_search_tool_result, ...) have no canonical form:
 *   their start (the block as sent), deltas (input_json_delta) and stop go out as deltas that carry
 *   only a hidden `anthropic_event` (types.ts), as do text blocks' citations_delta, for the
 *   Anthropic ingress to write in place; other encoders leave them out.
 */
import { setHidden } from '../../gateway/chat/hidden.js';
import type {
  AnthropicBlockEvent,
  ChatDelta,
  ChatDeltaChoice,
  ChatStreamEvent,
  FinishReason,
  ReportedUsage,
} from '../../gateway/chat/types.js';
import { UpstreamError } from '../../gateway/errors.js';
import { excerpt } from '../shared/classify-failure.js';
import { SseDataDecoder } from '../shared/sse-data-decoder.js';
import { ANTHROPIC_FORMAT } from './anthropic-messages.js';
import {
  type AnthropicUsage,
  classifyAnthropicError,
  mapStopReason,
  reasoningEstimate,
  setFinishDetails,
  toChatUsage,
} from './anthropic-response.js';

export class AnthropicStreamDecoder extends SseDataDecoder {
  private readonly toolIndex = new Map<number, number>();
  private readonly toolHasArgs = new Set<number>();
  /** A tool_use block's `input` from its start, when an Anthropic-format server put it there. */
  private readonly toolStartInput = new Map<number, string>();
  /** Upstream indexes of the server tool blocks (passed on as hidden events). */
  private readonly native = new Set<number>();
  private nextTool = 0;
  private usage: AnthropicUsage = {};
  /** Thinking text so far: Anthropic does not report thinking tokens, so they are counted here. */
  private readonly thoughts: string[] = [];
  /** A thinking block without readable text came (redacted, or omitted): see `reasoningEstimate`. */
  private hidden = false;
  /** Thinking blocks open, each with whether text came in it (one without is `hidden`). */
  private readonly thinkingHasText = new Map<number, boolean>();
  /** The visible answer's texts (text, tool names and arguments), for `reasoningEstimate`. */
  private readonly visible: string[] = [];
  private sawUsage = false;
  private finish: FinishReason | null = null;
  /** message_delta's stop_reason and stop_sequence, as Anthropic sent them. */
  private stopReason: string | undefined;
  private stopSequence: string | null | undefined;
  private ended = false;
  /** message_stop came (`ended` is also set by an error event). */
  private stopped = false;

  protected bodyEnded(out: ChatStreamEvent[]): void {
    if (this.ended) return;
    this.ended = true;
    out.push({
      type: 'error',
      error: new UpstreamError('connection', 'upstream stream ended before message_stop'),
    });
  }

  private delta(out: ChatStreamEvent[], delta: ChatDelta): void {
    out.push({
      type: 'delta',
      choices: [{ index: 0, delta, finish_reason: null, native_finish_reason: null }],
    });
  }

  /** A delta with nothing but a hidden block event (ChatDelta's `anthropic_event`). */
  private event(out: ChatStreamEvent[], ev: AnthropicBlockEvent): void {
    this.delta(out, setHidden({}, 'anthropic_event', ev));
  }

  protected handle(data: string, out: ChatStreamEvent[]): void {
    if (this.ended) return;
    let ev: any;
    try {
      ev = JSON.parse(data);
    } catch (cause) {
      this.ended = true;
      out.push({
        type: 'error',
        error: new UpstreamError('bad_response', `unparseable event: ${excerpt(data)}`, { cause }),
      });
      return;
    }
    switch (ev.type) {
      case 'message_start':
        this.takeUsage(ev.message?.usage);
        this.delta(out, { role: 'assistant', content: '' });
        break;
      case 'content_block_start': {
        const b = ev.content_block ?? {};
        if (b.type === 'tool_use') {
          const idx = this.nextTool++;
          this.toolIndex.set(ev.index, idx);
          // Anthropic starts every call with `input: {}` and streams the arguments; some servers
          // that speak its format put the whole input here and send no input_json_delta.
          if (b.input && typeof b.input === 'object' && Object.keys(b.input).length > 0)
            this.toolStartInput.set(ev.index, JSON.stringify(b.input));
          if (typeof b.name === 'string') this.visible.push(b.name);
          this.delta(out, {
            tool_calls: [
              { index: idx, id: b.id, type: 'function', function: { name: b.name, arguments: '' } },
            ],
          });
        } else if (b.type === 'text' && b.text) {
          this.visible.push(b.text);
          this.delta(out, { content: b.text });
        } else if (b.type === 'thinking') {
          this.thinkingHasText.set(ev.index, false);
          if (b.thinking) this.thinking(out, ev.index, b.thinking);
        } else if (b.type === 'redacted_thinking') {
          this.hidden = true;
          this.delta(out, {
            reasoning_details: [
              { type: 'reasoning.encrypted', data: b.data, format: ANTHROPIC_FORMAT, index: ev.index },
            ],
          });
        } else if (typeof b.type === 'string' && b.type !== 'text' && b.type !== 'thinking') {
          this.native.add(ev.index);
          this.event(out, { type: 'start', index: ev.index, block: b });
        }
        break;
      }
      case 'content_block_delta': {
        const d = ev.delta ?? {};
        if (this.native.has(ev.index) || d.type === 'citations_delta') {
          if (typeof d.type === 'string') this.event(out, { type: 'delta', index: ev.index, delta: d });
        } else if (d.type === 'text_delta') {
          if (typeof d.text === 'string') this.visible.push(d.text);
          this.delta(out, { content: d.text });
        } else if (d.type === 'input_json_delta') {
          const idx = this.toolIndex.get(ev.index);
          if (idx !== undefined && d.partial_json) {
            this.toolHasArgs.add(ev.index);
            this.visible.push(d.partial_json);
            this.delta(out, { tool_calls: [{ index: idx, function: { arguments: d.partial_json } }] });
          }
        } else if (d.type === 'thinking_delta') this.thinking(out, ev.index, d.thinking);
        else if (d.type === 'signature_delta') {
          this.delta(out, {
            reasoning_details: [
              {
                type: 'reasoning.text',
                text: '',
                signature: d.signature,
                format: ANTHROPIC_FORMAT,
                index: ev.index,
              },
            ],
          });
        }
        break;
      }
      case 'content_block_stop': {
        if (this.thinkingHasText.get(ev.index) === false) this.hidden = true;
        this.thinkingHasText.delete(ev.index);
        if (this.native.has(ev.index)) {
          this.event(out, { type: 'stop', index: ev.index });
          break;
        }
        const idx = this.toolIndex.get(ev.index);
        if (idx !== undefined && !this.toolHasArgs.has(ev.index)) {
          const args = this.toolStartInput.get(ev.index) ?? '{}';
          this.visible.push(args);
          this.delta(out, { tool_calls: [{ index: idx, function: { arguments: args } }] });
        }
        break;
      }
      case 'message_delta':
        if (ev.delta?.stop_reason) {
          this.finish = mapStopReason(ev.delta.stop_reason);
          this.stopReason = ev.delta.stop_reason;
          this.stopSequence = ev.delta.stop_sequence;
        }
        this.takeUsage(ev.usage);
        break;
      case 'message_stop':
        this.stop(out);
        break;
      case 'error':
        this.ended = true;
        out.push({ type: 'error', error: classifyAnthropicError(200, data, {}) });
        break;
      default:
        // ping, and event types added later
        break;
    }
  }

  /** The finish delta and the usage event, at message_stop. */
  private stop(out: ChatStreamEvent[]): void {
    this.ended = true;
    this.stopped = true;
    const last: ChatDeltaChoice = {
      index: 0,
      delta: {},
      finish_reason: this.finish ?? 'stop',
      native_finish_reason: null,
    };
    setFinishDetails(last, this.stopReason, this.stopSequence);
    out.push({ type: 'delta', choices: [last] });
    if (this.sawUsage) {
      out.push({ type: 'usage', usage: toChatUsage(this.usage, this.reasoning()) });
    }
  }

  /**
   * Whole once message_delta brought the stop reason (with the final output count): the cut
   * lost only message_stop, whose finish delta and usage go out as it would have sent them.
   */
  endOnCut(): ChatStreamEvent[] | undefined {
    if (this.stopped) return [];
    if (!this.whole()) return undefined;
    const out: ChatStreamEvent[] = [];
    this.stop(out);
    return out;
  }

  whole(): boolean {
    return this.stopped || (!this.ended && this.finish !== null);
  }

  /** The reasoning tokens of the answer so far (`reasoningEstimate`). */
  private reasoning(): number | undefined {
    return reasoningEstimate(this.thoughts, this.hidden, this.visible, this.usage.output_tokens);
  }

  private thinking(out: ChatStreamEvent[], index: number, text: string): void {
    if (text && this.thinkingHasText.has(index)) this.thinkingHasText.set(index, true);
    this.thoughts.push(text);
    this.delta(out, {
      reasoning: text,
      reasoning_details: [{ type: 'reasoning.text', text, format: ANTHROPIC_FORMAT, index }],
    });
  }

  private takeUsage(u: AnthropicUsage | undefined): void {
    if (!u) return;
    this.sawUsage = true;
    for (const k of [
      'input_tokens',
      'output_tokens',
      'cache_read_input_tokens',
      'cache_creation_input_tokens',
    ] as const) {
      if (typeof u[k] === 'number') this.usage[k] = u[k];
    }
    // Cumulative too: the last reported wins.
    if (u.server_tool_use && typeof u.server_tool_use === 'object')
      this.usage.server_tool_use = u.server_tool_use;
    // The writes by TTL, in message_start and (cumulative) in message_delta: each count the last.
    const c = u.cache_creation;
    if (c && typeof c === 'object') {
      const kept = { ...this.usage.cache_creation };
      for (const k of ['ephemeral_5m_input_tokens', 'ephemeral_1h_input_tokens'] as const) {
        if (typeof c[k] === 'number') kept[k] = c[k];
      }
      this.usage.cache_creation = kept;
    }
  }

  /**
   * For a stream cut before message_stop: the input and cache counts of message_start, and the
   * output count, final once the message_delta carrying the stop reason came (else message_start's
   * count so far).
   */
  reported(): ReportedUsage | undefined {
    if (typeof this.usage.input_tokens !== 'number') return undefined;
    const final = this.finish !== null;
    return { usage: toChatUsage(this.usage, final ? this.reasoning() : undefined), completionFinal: final };
  }
}
