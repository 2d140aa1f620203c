/**
 * A canonical answer's stream -> Anthropic Messages events (reference/providers.md §2.6), one
 * `AnthropicStreamEncoder` per streamed /v1/messages call; the whole answer, not streamed, is
 * anthropic-encode.ts, whose content rules this follows delta by delta.
 *
 * - message_start, then content_block_start / _delta / _stop per block (text_delta,
 *   thinking_delta, signature_delta, input_json_delta), message_delta (stop reason and the final
 *   usage, input counts included since message_start cannot know them: anthropic-stop.ts,
 *   anthropic-usage.ts), message_stop. A failure is one `error` event, as Anthropic sends it
 *   (anthropic-errors.ts), and ends the stream.
 * - An Anthropic upstream's server tool events (`anthropic_event`, hidden) become blocks of their
 *   own at their place, with the upstream's deltas (input_json_delta), and text blocks'
 *   citations_delta are passed on.
 * - Another upstream's signed reasoning (Gemini's thought signatures, in `reasoning_details`)
 *   rides in thinking blocks' signatures (anthropic-signatures.ts), as one signature_delta at the
 *   block's close, and never in the middle of a text: one that comes while a text block is open
 *   waits for that block's end. What rides is the whole detail: OpenRouter streams one in pieces
 *   under its type and index (its text, then its signature in a later chunk), which are merged
 *   (`ReasoningDetailsMerger`) until the signature is written, and a piece that does not repeat
 *   the format is read as its detail's. A piece that comes after its detail's signature was
 *   written rides on its own in the next thinking block's signature (`late`), and the decoder
 *   joins it to its detail again.
 * - Blocks run one at a time (start, deltas, stop), as Anthropic's do: a block once stopped takes
 *   no more deltas. An OpenAI-compatible upstream may interleave parallel tool calls (both
 *   started, then their argument fragments in turns) or send text between a call's fragments.
 *   So while the open tool call's arguments are not one whole JSON value yet (`JsonEnd`, a
 *   scanner fed fragment by fragment), what comes for another block (another call, text,
 *   reasoning, signatures) waits in arrival order (`waiting`), and the call's own fragments go on
 *   to it live. Once they are whole, its block stops and what waited is written as it would have
 *   been (a call among it may hold in its turn); at the end, what still waits is written after
 *   the call as it came. Calls that come one after the other never wait.
 *
 * `chunk` runs once per upstream chunk: the hot path of every streamed answer (nothing more is
 * allocated unless something has to wait).
 */
import type {
  AnthropicBlockEvent,
  ChatDelta,
  ChatDeltaChoice,
  ChatUsage,
  ReasoningDetail,
  ToolCallDelta,
} from '../../gateway/chat/types.js';
import type { GatewayError } from '../../gateway/errors.js';
import { replayableByAnthropic } from '../../providers/anthropic/anthropic-messages.js';
import { anthropicErrorEvent } from './anthropic-errors.js';
import { carryingSignature, detailItems } from './anthropic-signatures.js';
import { anthropicStop, type Finish } from './anthropic-stop.js';
import { anthropicDeltaUsage, anthropicUsage } from './anthropic-usage.js';
import { isSigned, ReasoningDetailsMerger } from './responses-reasoning.js';

type Block = Record<string, unknown> & { type: string };

export const sseEvent = (type: string, data: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/**
 * Writes one stream's deltas as Anthropic events. Blocks are opened as their kind of delta
 * arrives and closed when another kind (or another thinking block, by its upstream index, or
 * another tool call) begins, so indexes follow the order of the final content as Anthropic's do;
 * but not a tool call's block whose arguments are not whole yet (what comes meanwhile waits).
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
  /**
   * Other upstreams' details so far, their pieces merged. Anthropic's own pieces are written as
   * they come (thinking and signature deltas) and never kept here.
   */
  private readonly foreign = new ReasoningDetailsMerger();
  /** Merged details put in `carried` or `held` (their signature written, or to be). */
  private readonly riding = new Set<ReasoningDetail>();
  /** Those of `riding` whose signature is written: a later piece of one rides on its own (`late`). */
  private readonly written = new Set<ReasoningDetail>();
  /** Tool call index -> its block's index. */
  private readonly tools = new Map<number, number>();
  /** Where the open tool block's arguments so far end (`JsonEnd`): whole or not. */
  private readonly toolArgs = new JsonEnd();
  /**
   * What came for other blocks while the open tool block's arguments were not whole (`holds`), in
   * arrival order: written once they are (or at the end). Undefined: nothing waits.
   */
  private waiting: ChatDelta[] | undefined;
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
      out = this.delta({ type: 'signature_delta', signature: this.sign(this.carried) });
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
      this.delta({ type: 'signature_delta', signature: this.sign(this.held) }, index) +
      sseEvent('content_block_stop', { index });
    this.held = [];
    return out;
  }

  /** The signature carrying `details`, which are written from now on. */
  private sign(details: readonly ReasoningDetail[]): string {
    for (const d of details) this.written.add(d);
    return carryingSignature(details);
  }

  /**
   * What a piece of another upstream's detail (`foreign`) adds to the signatures to write: its
   * whole detail once it is signed (a signature or encrypted data), else nothing (the text of an
   * unsigned one is the thinking shown, from `reasoning`). A piece of a detail already riding
   * joins it there until its signature is written; after that, the piece rides on its own (`late`).
   */
  private carriedBy(piece: ReasoningDetail): ReasoningDetail | undefined {
    const whole = this.foreign.merge(piece);
    if (this.written.has(whole)) return late(piece, whole);
    if (this.riding.has(whole) || !isSigned(whole)) return undefined;
    this.riding.add(whole);
    return whole;
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
      out += this.write(c.delta);
      if (c.finish_reason) this.finish = c;
    }
    return out;
  }

  /**
   * Whether the open block is a tool call whose arguments are not whole JSON yet: then what comes
   * for another block waits (`waiting`), as closing the call now would leave its later fragments
   * nowhere to go (a block once stopped takes no more deltas).
   */
  private holds(): boolean {
    return this.openKind === 'tool' && !this.toolArgs.whole();
  }

  /** One delta of choice 0, in order: server tool events, reasoning, text, tool calls. */
  private write(d: ChatDelta): string {
    if (this.holds()) return this.hold(d);
    let out = '';
    if (d.anthropic_event) out += this.native(d.anthropic_event);
    let own = false;
    const carry: ReasoningDetail[] = [];
    for (const r of detailItems(d.reasoning_details)) {
      // A piece without a format is its detail's (an earlier piece of it named one).
      const foreign = r.format ? !replayableByAnthropic(r) : this.foreign.of(r) !== undefined;
      if (foreign) {
        const whole = this.carriedBy(r);
        if (whole) carry.push(whole);
        continue;
      }
      own = true;
      if (r.type === 'reasoning.text') {
        out += this.thinking(r.index);
        if (r.text) out += this.delta({ type: 'thinking_delta', thinking: r.text });
        if (r.signature) out += this.delta({ type: 'signature_delta', signature: r.signature });
      } else if (r.type === 'reasoning.encrypted' && r.data) {
        out += this.open('thinking', { type: 'redacted_thinking', data: r.data });
        out += this.close();
      }
    }
    if (!own && d.reasoning) {
      out += this.thinking(undefined, true);
      out += this.delta({ type: 'thinking_delta', thinking: d.reasoning });
    }
    // Another upstream's signatures (Gemini's, on a thought, text or functionCall part) ride in
    // the thinking block open, else in an empty one of their own, which the part's text or
    // tool call, coming next, closes. One without a call's id while a text block is open waits
    // for that block's end (`held`): the text goes on in the same block.
    for (const r of carry) {
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
    if (d.tool_calls) for (const t of d.tool_calls) out += this.tool(t);
    return out;
  }

  /**
   * A delta while the open tool call's arguments are not whole: its own fragments go on to it,
   * the rest (another call's start or fragments, text, reasoning, signatures, server tool events)
   * waits, in order. Only a delta that has something else costs an object.
   */
  private hold(d: ChatDelta): string {
    if (d.anthropic_event || d.reasoning_details || d.reasoning || d.content || d.refusal)
      this.wait(d.tool_calls ? withoutToolCalls(d) : d);
    let out = '';
    if (d.tool_calls) for (const t of d.tool_calls) out += this.tool(t);
    return out;
  }

  /**
   * A tool call's fragment: its start opens its block (closing the open one), its arguments go to
   * that block. Another call's fragment waits while the open call `holds`; the open call's
   * arguments becoming whole then close its block and write what waited (`release`). A fragment
   * of a call whose block is stopped has nowhere to go and is left out (its arguments were whole:
   * only spaces, or an upstream's garbage, can follow).
   */
  private tool(t: ToolCallDelta): string {
    let index = this.tools.get(t.index);
    if (index !== this.openIndex) {
      if (this.holds()) {
        this.wait({ tool_calls: [t] });
        return '';
      }
      if (index !== undefined) return '';
    }
    let out = '';
    if (index === undefined) {
      out += this.open('tool', {
        type: 'tool_use',
        id: t.id || `toolu_${this.id.slice(4)}_${t.index}`,
        name: t.function?.name ?? '',
        input: {},
      });
      index = this.openIndex;
      this.tools.set(t.index, index);
      this.toolArgs.reset();
    }
    const args = t.function?.arguments;
    if (args) {
      out += this.delta({ type: 'input_json_delta', partial_json: args }, index);
      this.toolArgs.scan(args);
      if (this.waiting !== undefined && this.toolArgs.whole()) out += this.release();
    }
    return out;
  }

  private wait(d: ChatDelta): void {
    if (this.waiting === undefined) this.waiting = [d];
    else this.waiting.push(d);
  }

  /**
   * Closes the open block and writes what `waiting` holds, in order, as it would have been written
   * when it came: a call among it may hold again, and what follows it waits again behind it.
   */
  private release(): string {
    let out = this.close();
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting !== undefined) for (const d of waiting) out += this.write(d);
    return out;
  }

  end(usage: ChatUsage | undefined, failure: GatewayError | undefined): string {
    // A failure ends the stream where it is, as Anthropic's `error` event does: what waited goes
    // with the call cut short before it.
    if (failure !== undefined) return anthropicErrorEvent(failure, this.requestId);
    let out = this.start();
    // A call whose arguments never became whole is written as it came, then what waited behind it.
    while (this.waiting !== undefined) out += this.release();
    return (
      out +
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

/**
 * A piece of a detail whose signature is already written (its thinking block closed, as a
 * signature_delta ends one): it cannot join it there, so it rides as it is, with its detail's type,
 * index and format, in the next signature written (a thinking block after the one closed, showing
 * the piece's thinking). Back, the thinking blocks' pieces are joined again by type and index
 * (anthropic-assistant-decode.ts), so the upstream gets its detail whole. Undefined for a piece
 * that adds nothing (an empty text).
 */
function late(piece: ReasoningDetail, whole: ReasoningDetail): ReasoningDetail | undefined {
  if (!piece.text && !piece.summary && !piece.data && !piece.signature && !piece.id) return undefined;
  return whole.format && !piece.format ? { ...piece, format: whole.format } : piece;
}

/** A delta's parts but its tool calls (a server tool's event, hidden, carries nothing else). */
function withoutToolCalls(d: ChatDelta): ChatDelta {
  const { tool_calls: _, ...rest } = d;
  if (d.anthropic_event) rest.anthropic_event = d.anthropic_event;
  return rest;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * Where a tool call's arguments, fed fragment by fragment, end: whether they are one whole JSON
 * value so far. A tiny scanner (the depth of objects and arrays outside strings, in a string or
 * not, after a backslash or not), no parse per fragment. Whole: an object, array or string began
 * and closed. A bare number, `true`, `false` or `null` is never whole (it could go on: a call's
 * arguments are an object, so such a call only holds what comes after it until the end).
 */
class JsonEnd {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private began = false;

  reset(): void {
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
    this.began = false;
  }

  scan(text: string): void {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === BACKSLASH) this.escaped = true;
        else if (c === QUOTE) this.inString = false;
      } else if (c === QUOTE) {
        this.inString = true;
        this.began = true;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        this.depth++;
        this.began = true;
      } else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && this.depth > 0) this.depth--;
    }
  }

  whole(): boolean {
    return this.began && this.depth === 0 && !this.inString;
  }
}
