/**
 * A canonical stream -> OpenAI Responses stream events (the `openai` SDK's ResponseStreamEvent):
 * response.created, response.in_progress, then per item output_item.added, its content_part /
 * reasoning_summary_part, deltas, their .done events and output_item.done (a custom tool's call:
 * its whole input as one custom_tool_call_input.delta when the call closes), and last
 * response.completed (or .incomplete / .failed) with the whole Response; every event has an
 * `event:` line and an increasing `sequence_number`. Shapes as in responses-encode.ts.
 */
import type { ChatDeltaChoice, ChatUsage, FinishReason, ReasoningDetail } from '../../gateway/chat/types.js';
import type { GatewayError } from '../../gateway/errors.js';
import {
  callStatus,
  customInput,
  errorCode,
  finishStatus,
  itemId,
  type Obj,
  type ResponseHead,
  responseObject,
  responsesUsage,
  textPart,
} from './responses-encode.js';
import { ReasoningDetailsMerger, wrapReasoning } from './responses-reasoning.js';

/** An item being streamed: its output index, the item as it stands, its text so far. */
interface OpenItem {
  index: number;
  item: Obj;
  text: string[];
}

/**
 * Writes one stream's deltas as Responses events. A reasoning or message item is closed when
 * another item begins; function calls stay open until the end (an upstream may interleave the
 * argument deltas of parallel calls), and are closed in order then. Each reasoning item carries
 * the reasoning details that came while it was open. Details alone that come while a message is
 * written (Gemini signs an answer's last text part) do not end the message: they go with the next
 * reasoning item, or in one of their own after everything else at the end.
 */
export class ResponsesStreamEncoder {
  private seq = 0;
  private started = false;
  private readonly output: Obj[] = [];
  private reasoning: OpenItem | undefined;
  private message: OpenItem | undefined;
  private readonly calls = new Map<number, OpenItem>();
  /** The details of the reasoning item open or to come (kept only when include asks for them). */
  private details = new ReasoningDetailsMerger();
  private finish: FinishReason | null | undefined;
  /**
   * The format each detail (type and index) named, for its later pieces that do not repeat it
   * (OpenRouter's signature piece): one in another reasoning item than its detail's first piece
   * still says whose it is (a piece without a format would be taken for Anthropic's).
   */
  private readonly formats = new Map<string, string>();

  constructor(private readonly head: ResponseHead) {}

  private event(type: string, data: Obj): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.seq++, ...data })}\n\n`;
  }

  private start(): string {
    if (this.started) return '';
    this.started = true;
    const response = responseObject(this.head, { status: 'in_progress' }, [], null);
    return this.event('response.created', { response }) + this.event('response.in_progress', { response });
  }

  private add(item: Obj): { out: string; open: OpenItem } {
    const open = { index: this.output.length, item, text: [] };
    this.output.push(item);
    return { out: this.event('response.output_item.added', { output_index: open.index, item }), open };
  }

  private done(open: OpenItem): string {
    return this.event('response.output_item.done', { output_index: open.index, item: open.item });
  }

  private closeReasoning(status: string): string {
    const r = this.reasoning;
    if (!r) return '';
    this.reasoning = undefined;
    const at = { item_id: r.item.id, output_index: r.index, summary_index: 0 };
    let out = '';
    if (r.text.length > 0) {
      const text = r.text.join('');
      const part = { type: 'summary_text', text };
      r.item.summary = [part];
      out += this.event('response.reasoning_summary_text.done', { ...at, text });
      out += this.event('response.reasoning_summary_part.done', { ...at, part });
    }
    const details = this.details.details;
    if (details.length > 0) r.item.encrypted_content = wrapReasoning(details);
    this.details = new ReasoningDetailsMerger();
    r.item.status = status;
    return out + this.done(r);
  }

  private closeMessage(status: string): string {
    const m = this.message;
    if (!m) return '';
    this.message = undefined;
    const text = m.text.join('');
    const part = textPart(text);
    m.item.content = [part];
    m.item.status = status;
    const at = { item_id: m.item.id, output_index: m.index, content_index: 0 };
    return (
      this.event('response.output_text.done', { ...at, text, logprobs: [] }) +
      this.event('response.content_part.done', { ...at, part }) +
      this.done(m)
    );
  }

  /**
   * `status` for every call, except that an answer the length limit cut inside its last call's
   * arguments has that call `incomplete` (`callStatus`), as the non-streamed answer has it.
   */
  private closeCalls(status: string): string {
    let out = '';
    let left = this.calls.size;
    for (const c of this.calls.values()) {
      const args = c.text.join('');
      c.item.status = status === 'completed' ? callStatus(this.finish, args, --left === 0) : status;
      if (c.item.type === 'custom_tool_call') {
        // The input is known once the arguments are whole (the string inside {"input": ...}): it
        // comes as one delta, then done.
        const input = customInput(args);
        c.item.input = input;
        const at = { item_id: c.item.id, output_index: c.index };
        if (input) out += this.event('response.custom_tool_call_input.delta', { ...at, delta: input });
        out += this.event('response.custom_tool_call_input.done', { ...at, input });
        out += this.done(c);
        continue;
      }
      c.item.arguments = args;
      out += this.event('response.function_call_arguments.done', {
        item_id: c.item.id,
        output_index: c.index,
        name: c.item.name,
        arguments: args,
      });
      out += this.done(c);
    }
    this.calls.clear();
    return out;
  }

  chunk(choices: ChatDeltaChoice[]): string {
    let out = this.start();
    for (const c of choices) {
      if (c.index !== 0) continue;
      const d = c.delta;
      const hasDetails = (d.reasoning_details?.length ?? 0) > 0;
      if (hasDetails && this.head.echo.encryptedReasoning)
        this.details.add(this.withFormats(d.reasoning_details!));
      if (d.reasoning || (hasDetails && !(this.message && !d.tool_calls?.length))) {
        out += this.closeMessage('completed');
        if (!this.reasoning) {
          const added = this.add({
            id: itemId(this.head, 'rs', this.output.length),
            type: 'reasoning',
            summary: [],
          });
          out += added.out;
          this.reasoning = added.open;
        }
        const r = this.reasoning;
        if (d.reasoning) {
          const at = { item_id: r.item.id, output_index: r.index, summary_index: 0 };
          if (r.text.length === 0)
            out += this.event('response.reasoning_summary_part.added', {
              ...at,
              part: { type: 'summary_text', text: '' },
            });
          r.text.push(d.reasoning);
          out += this.event('response.reasoning_summary_text.delta', { ...at, delta: d.reasoning });
        }
      }
      const text = d.content || d.refusal;
      if (text) {
        out += this.closeReasoning('completed');
        if (!this.message) {
          const added = this.add({
            id: itemId(this.head, 'msg', this.output.length),
            type: 'message',
            status: 'in_progress',
            role: 'assistant',
            content: [],
          });
          this.message = added.open;
          out +=
            added.out +
            this.event('response.content_part.added', {
              item_id: added.open.item.id,
              output_index: added.open.index,
              content_index: 0,
              part: textPart(''),
            });
        }
        const m = this.message;
        m.text.push(text);
        out += this.event('response.output_text.delta', {
          item_id: m.item.id,
          output_index: m.index,
          content_index: 0,
          delta: text,
          logprobs: [],
        });
      }
      for (const t of d.tool_calls ?? []) {
        out += this.closeReasoning('completed') + this.closeMessage('completed');
        let call = this.calls.get(t.index);
        if (!call) {
          const name = t.function?.name ?? '';
          const custom = this.head.echo.customTools.has(name);
          const id = itemId(this.head, custom ? 'ctc' : 'fc', this.output.length);
          const added = this.add({
            id,
            type: custom ? 'custom_tool_call' : 'function_call',
            status: 'in_progress',
            call_id: t.id || `call_${id.slice(id.indexOf('_') + 1)}`,
            name,
            ...(custom ? { input: '' } : { arguments: '' }),
          });
          out += added.out;
          call = added.open;
          this.calls.set(t.index, call);
        }
        const args = t.function?.arguments;
        if (args) call.text.push(args);
        if (args && call.item.type === 'function_call') {
          out += this.event('response.function_call_arguments.delta', {
            item_id: call.item.id,
            output_index: call.index,
            delta: args,
          });
        }
      }
      if (c.finish_reason) this.finish = c.finish_reason;
    }
    return out;
  }

  private withFormats(pieces: ReasoningDetail[]): ReasoningDetail[] {
    return pieces.map((p) => {
      if (p?.index === undefined) return p;
      const key = `${p.type}:${p.index}`;
      if (p.format) {
        this.formats.set(key, p.format);
        return p;
      }
      const format = this.formats.get(key);
      return format ? { ...p, format } : p;
    });
  }

  /** Details that came after the last reasoning item closed: a reasoning item of their own, last. */
  private trailingReasoning(): string {
    if (this.reasoning || this.details.details.length === 0) return '';
    const added = this.add({
      id: itemId(this.head, 'rs', this.output.length),
      type: 'reasoning',
      summary: [],
    });
    this.reasoning = added.open;
    return added.out + this.closeReasoning('completed');
  }

  end(usage: ChatUsage | undefined, failure: GatewayError | undefined): string {
    let out = this.start();
    if (failure !== undefined) {
      out +=
        this.closeReasoning('incomplete') + this.closeMessage('incomplete') + this.closeCalls('incomplete');
      const error = { code: errorCode(failure), message: failure.message };
      const response = responseObject(
        this.head,
        { status: 'failed', error },
        this.output,
        responsesUsage(usage),
      );
      return out + this.event('response.failed', { response });
    }
    const state = finishStatus(this.finish);
    const itemStatus = state.status === 'completed' ? 'completed' : 'incomplete';
    out += this.closeReasoning('completed') + this.closeMessage(itemStatus) + this.closeCalls('completed');
    out += this.trailingReasoning();
    const response = responseObject(this.head, state, this.output, responsesUsage(usage));
    return out + this.event(`response.${state.status}`, { response });
  }
}
