/**
 * Gives every streamed tool-call delta of one choice the `index` of the call it belongs to.
 *
 * OpenAI numbers a choice's calls 0, 1, ... and sends the `id` on a call's first fragment only;
 * clients (the openai SDK's stream helper, the Anthropic and Responses encoders) put fragments
 * together by `index` alone. Some OpenAI-compatible servers send no `index` (older Ollama, LM
 * Studio, some vLLM tool parsers), or one complete call per chunk each with index 0 and its own
 * `id`: matched by index, two calls would become one. So:
 * - an `id` not seen before starts a call, at the upstream's index unless another call has it,
 *   else at the next free one; but without a function name, at an upstream index a call was
 *   started at, it continues that call, and is left out (servers that change the id on every
 *   fragment: the call keeps its first id, as OpenAI sends it);
 * - a known `id` continues its call;
 * - no `id`: the call the upstream last started at that index (else the call that has it), or,
 *   without an index, the call of the previous delta; when there is no such call (a server that
 *   sends no ids), it starts one. It also starts one when it names a function and that call is
 *   named already (servers that send no ids, and the same index or none for every call: a name
 *   is what marks their next call; OpenAI sends it on a call's first fragment only): another
 *   function's name, or the same one once that call's arguments are whole JSON (two calls of
 *   one function). The same name before that is a server that repeats it on every fragment: the
 *   fragment goes on with its call, and the repeated name is left out (clients that append
 *   names would double it). Arguments are kept for that test only for calls that came without
 *   an id, so an OpenAI stream costs no more.
 * A stream with consistent indexes keeps them as they are.
 */
import type { ToolCallDelta } from '../../gateway/chat/types.js';
import { newCallId } from '../shared/tools.js';

export class ToolCallIndexes {
  /** Our index of each call by id. */
  private readonly byId = new Map<string, number>();
  /** Our index of the call the upstream last started at each of its indexes. */
  private readonly byUpstream = new Map<number, number>();
  /** Indexes given so far (a call's index never moves). */
  private readonly used = new Set<number>();
  private next = 0;
  /** The call the last delta belonged to (-1: none yet). */
  private latest = -1;
  /** Each call's function name, once it got one. */
  private readonly names = new Map<number, string>();
  /** The arguments so far of each call that came without an id (`nextCall`). */
  private args: Map<number, string> | undefined;

  /** Sets `index` on each delta (in place). */
  apply(deltas: ToolCallDelta[]): void {
    for (const t of deltas) {
      if (t === null || typeof t !== 'object') continue;
      const up: unknown = t.index;
      const upIndex = typeof up === 'number' && Number.isInteger(up) && up >= 0 ? up : undefined;
      const id = typeof t.id === 'string' && t.id !== '' ? t.id : undefined;
      const name = t.function?.name;
      const named = typeof name === 'string' && name !== '';
      const calls = this.used.size;
      let index: number | undefined;
      if (id !== undefined) {
        index = this.byId.get(id);
        if (index === undefined) {
          // A new id without a name at an upstream index already started is that call going on:
          // a call's first delta names its function, and some servers change the id on every
          // fragment (Poolside, mlx-openai-server). The call keeps its first id.
          const going = named || upIndex === undefined ? undefined : this.byUpstream.get(upIndex);
          if (going !== undefined) delete t.id;
          index = going ?? this.start(upIndex);
          this.byId.set(id, index);
        }
      } else {
        const going =
          upIndex === undefined
            ? this.latest < 0
              ? undefined
              : this.latest
            : (this.byUpstream.get(upIndex) ?? (this.used.has(upIndex) ? upIndex : undefined));
        index = going === undefined || (named && this.nextCall(going, name, t)) ? this.start(upIndex) : going;
      }
      // A call's first delta names its type (the openai SDK's stream helper throws "tool call
      // snapshot missing `type`" otherwise); some servers leave it out.
      // And its id, which a client answers the call by (tool_call_id): servers that send none
      // (older Ollama) get one made, `call_<24 hex>` as for non-streamed calls.
      if (this.used.size !== calls) {
        if (t.type === undefined) t.type = 'function';
        if (id === undefined) {
          t.id = newCallId();
          this.args ??= new Map();
          this.args.set(index, '');
        }
      }
      this.latest = index;
      if (named && !this.names.has(index)) this.names.set(index, name);
      if (this.args !== undefined) {
        const had = this.args.get(index);
        const more = t.function?.arguments;
        if (had !== undefined && typeof more === 'string' && more !== '') this.args.set(index, had + more);
      }
      if (t.index !== index) t.index = index;
    }
  }

  /**
   * Whether a delta without an id that names `name` starts a call after `going`, the call it
   * would go on with: yes when that call has another name, or the same one and its arguments
   * are whole already. When it goes on with it, the repeated name is taken off the delta.
   */
  private nextCall(going: number, name: string, t: ToolCallDelta): boolean {
    const had = this.names.get(going);
    if (had === undefined) return false;
    if (had !== name) return true;
    const args = this.args?.get(going);
    if (args !== undefined && wholeJson(args)) return true;
    delete t.function!.name;
    return false;
  }

  private start(upIndex: number | undefined): number {
    const index = upIndex !== undefined && !this.used.has(upIndex) ? upIndex : this.next;
    this.used.add(index);
    if (index >= this.next) this.next = index + 1;
    if (upIndex !== undefined) this.byUpstream.set(upIndex, index);
    return index;
  }
}

/** Whether `text` is a whole JSON object (a call's arguments once the last fragment came). */
function wholeJson(text: string): boolean {
  // Parsed only when it could be whole: a server that repeats the name on every fragment would
  // otherwise have all of a long call's arguments parsed again (and fail) on each one.
  let end = text.length - 1;
  while (end >= 0 && (text[end] === ' ' || text[end] === '\n' || text[end] === '\r' || text[end] === '\t'))
    end--;
  if (end < 0 || text[end] !== '}') return false;
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object';
  } catch {
    return false;
  }
}
