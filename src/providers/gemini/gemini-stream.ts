/**
 * Gemini `streamGenerateContent?alt=sse` -> canonical events. Each SSE event is a whole
 * GenerateContentResponse with only the new parts; there is no `[DONE]`, the body just ends.
 * - The first delta carries `role`. Function calls arrive complete: one tool-call delta each with a
 *   per-candidate counter as index (never the part position, which restarts in every chunk); so
 *   do `reasoning_details` (`DetailNumbering`): a client joining their pieces by type and index
 *   gets the details of the answer not streamed.
 * - `usageMetadata` is cumulative and repeated: the last one is reported once, at the end; a stream
 *   cut before it ends still has the prompt's count (`reported`).
 * - A finishReason emits the finish delta at once; a stream that ends without one is an error.
 * - A prompt blocked by safety (promptFeedback.blockReason, no candidates) -> content_filter error.
 */
import type { ChatDeltaChoice, ChatStreamEvent, ReportedUsage } from '../../gateway/chat/types.js';
import { UpstreamError } from '../../gateway/errors.js';
import { excerpt } from '../shared/classify-failure.js';
import { SseDataDecoder } from '../shared/sse-data-decoder.js';
import {
  classifyGeminiError,
  convertParts,
  DetailNumbering,
  type GeminiUsage,
  mapFinishReason,
  promptBlocked,
  toChatUsage,
} from './gemini-response.js';

export class GeminiStreamDecoder extends SseDataDecoder {
  private sawRole = false;
  private readonly toolCount = new Map<number, number>();
  /** Each candidate's reasoning_details indexes, over the whole stream. */
  private readonly numbering = new Map<number, DetailNumbering>();
  private readonly finished = new Set<number>();
  private usage: GeminiUsage | undefined;
  private failed = false;

  protected bodyEnded(out: ChatStreamEvent[]): void {
    if (this.failed) return;
    if (this.finished.size === 0) {
      out.push({
        type: 'error',
        error: new UpstreamError('connection', 'upstream stream ended without a finish reason'),
      });
      return;
    }
    if (this.usage) out.push({ type: 'usage', usage: toChatUsage(this.usage) });
  }

  /**
   * Whole once its candidate finished (`n` is at most 1): the body's end is Gemini's only
   * terminator, so a cut after the finish loses nothing but the usage `end()` reports, reported here.
   */
  endOnCut(): ChatStreamEvent[] | undefined {
    if (!this.whole()) return undefined;
    return this.usage ? [{ type: 'usage', usage: toChatUsage(this.usage) }] : [];
  }

  whole(): boolean {
    return !this.failed && this.finished.size > 0;
  }

  protected handle(data: string, out: ChatStreamEvent[]): void {
    if (this.failed) return;
    let chunk: Record<string, any>;
    try {
      chunk = JSON.parse(data);
    } catch (cause) {
      this.fail(
        out,
        new UpstreamError('bad_response', `unparseable stream chunk: ${excerpt(data)}`, { cause }),
      );
      return;
    }
    if (chunk.error) {
      this.fail(out, classifyGeminiError(200, data, {}));
      return;
    }
    if (chunk.usageMetadata) this.usage = chunk.usageMetadata;
    const candidates: Array<Record<string, any>> = chunk.candidates ?? [];
    if (candidates.length === 0) {
      if (chunk.promptFeedback?.blockReason) this.fail(out, promptBlocked(chunk));
      return;
    }
    const choices: ChatDeltaChoice[] = [];
    for (const [i, c] of candidates.entries()) {
      const index = c.index ?? i;
      let numbering = this.numbering.get(index);
      if (!numbering) {
        numbering = new DetailNumbering();
        this.numbering.set(index, numbering);
      }
      const { text, reasoning, details, calls } = convertParts(c.content?.parts ?? [], numbering);
      const delta: ChatDeltaChoice['delta'] = {};
      if (!this.sawRole) delta.role = 'assistant';
      if (text !== null) delta.content = text;
      if (reasoning !== null) delta.reasoning = reasoning;
      if (details.length > 0) delta.reasoning_details = details;
      if (calls.length > 0) {
        let n = this.toolCount.get(index) ?? 0;
        delta.tool_calls = calls.map((call) => ({ index: n++, ...call }));
        this.toolCount.set(index, n);
      }
      const finish = c.finishReason
        ? mapFinishReason(c.finishReason, (this.toolCount.get(index) ?? 0) > 0)
        : null;
      if (finish) this.finished.add(index);
      choices.push({ index, delta, finish_reason: finish, native_finish_reason: c.finishReason || null });
    }
    this.sawRole = true;
    out.push({ type: 'delta', choices });
  }

  /**
   * For a stream cut before its end: the prompt's count (on every chunk), and the completion's
   * so far, final once a candidate finished (its chunk carries the final counts).
   */
  reported(): ReportedUsage | undefined {
    if (typeof this.usage?.promptTokenCount !== 'number') return undefined;
    return { usage: toChatUsage(this.usage), completionFinal: this.finished.size > 0 };
  }

  private fail(out: ChatStreamEvent[], error: UpstreamError): void {
    this.failed = true;
    out.push({ type: 'error', error });
  }
}
