import { UpstreamError } from '../errors.js';

/**
 * Server-Sent Events decoder (WHATWG event-stream rules) that tolerates any chunk boundary: a
 * line, a CRLF pair or a multi-byte UTF-8 character may be split across pushes. Comments
 * (`: keep-alive`) are counted but not returned; `retry:` is ignored.
 *
 * One departure from the spec, which ignores unknown field names: an `error:` field is read as
 * an event of type `error` with that value as its data (after the event's own data, if it had
 * any). Older llama.cpp servers (`server_sent_event(sink, "error", ...)`) report a failure
 * mid-stream so, as `error: {"code": 500, "message": ..., "type": ...}`, then `data: [DONE]`:
 * ignored, the failure read as a normal end.
 */
export interface SseEvent {
  /** `event:` field, undefined when absent (the spec's default type is "message"). */
  event: string | undefined;
  /** `data:` lines joined with "\n". */
  data: string;
  id: string | undefined;
}

/** TextDecoder's options for a chunk of a longer text, made once. */
const STREAM = { stream: true } as const;

/**
 * The default for `maxEventChars` (`gateway.max_stream_event_bytes`): far above a token's chunk,
 * and above an inline image in one event (image models stream a whole PNG as base64).
 */
export const DEFAULT_MAX_EVENT_CHARS = 16 * 1024 * 1024;

/** What a piece of a line arriving in many pushes costs beyond its characters (a string's head). */
const PIECE_OVERHEAD = 64;

export class SseDecoder {
  /**
   * The line still arriving (it holds no line end). Only text that arrived in a push is searched
   * for line ends, once: appending each chunk to one buffer and searching all of it again made a
   * long line quadratic (an 8 MB line in 64 KiB reads took 300 ms, 200 MB took minutes). Pieces
   * are appended as a rope (V8 joins two strings without copying them), copied into one string
   * once, when the line ends.
   */
  private carried = '';
  /**
   * What `carried` holds: its characters plus an overhead for each piece it came in, so a line
   * arriving a byte at a time is bounded too.
   */
  private carriedCost = 0;
  /** The event's `data:` lines so far; none: it has no data (yet), and is not dispatched. */
  private dataLines: string[] = [];
  /** Characters of `dataLines`. */
  private dataChars = 0;
  /** Where `line` found the next colon of the text being read (-1: not searched yet). */
  private colonAt = -1;
  /** The event being read outgrew the limit: every later push or end throws this. */
  private failure: UpstreamError | undefined;
  private eventName: string | undefined;
  /** The event's `error:` field (non-standard, see above), when it had one. */
  private errorData: string | undefined;
  private lastId: string | undefined;
  /** A chunk ended with CR: a leading LF in the next chunk belongs to the same line break. */
  private skipLeadingLf = false;
  private bomChecked = false;
  private readonly utf8 = new TextDecoder('utf-8');
  /** Comment lines seen so far (keep-alives). */
  comments = 0;

  /**
   * @param maxEventChars the most characters one event's data, or one line still arriving (with
   * an overhead for each push it came in), may hold: characters of the decoded text, at most its
   * bytes. Past it the decoder lets go of the event and throws an UpstreamError 'bad_response', so
   * what it holds stays bounded by about this however long the line the upstream sends. Events
   * decoded before it in the same push are returned first, and the next push (or `end`) throws.
   */
  constructor(private readonly maxEventChars = DEFAULT_MAX_EVENT_CHARS) {}

  push(chunk: string | Uint8Array): SseEvent[] {
    if (this.failure !== undefined) throw this.failure;
    let text = typeof chunk === 'string' ? chunk : this.utf8.decode(chunk, STREAM);
    if (this.skipLeadingLf || !this.bomChecked) text = this.skipLeading(text);
    if (text.length === 0) return [];
    const out: SseEvent[] = [];
    // Only a push longer than the room left can complete an event past the limit: the lines of
    // any other push are read without a check each.
    const checked = text.length > this.maxEventChars - this.carriedCost - this.dataChars;
    if (!this.read(text, out, checked) || this.carriedCost + this.dataChars > this.maxEventChars)
      return this.failed(out);
    return out;
  }

  /**
   * The body ended. As the SSE spec says, an event not closed by a blank line is incomplete and
   * discarded: a cut stream must not deliver half a JSON payload as if it were whole.
   */
  end(): SseEvent[] {
    if (this.failure !== undefined) throw this.failure;
    const tail = this.utf8.decode();
    const out = tail ? this.push(tail) : [];
    this.carried = '';
    this.carriedCost = 0;
    this.dataLines = [];
    this.dataChars = 0;
    this.eventName = undefined;
    this.errorData = undefined;
    return out;
  }

  private line(buf: string, start: number, end: number, out: SseEvent[]): void {
    if (start === end) {
      this.dispatch(out);
      return;
    }
    // The next colon is searched for from this line on only when the last one found lies
    // before it: searching again for every line would run past each line without a colon to the
    // next one, quadratic for a push of such lines. Past the last colon it is `buf.length`.
    let colon = this.colonAt;
    if (colon < start) {
      colon = buf.indexOf(':', start);
      if (colon === -1) colon = buf.length;
      this.colonAt = colon;
    }
    if (colon === start) {
      this.comments++;
      return;
    }
    let field: string;
    let value: string;
    if (colon >= end) {
      field = buf.slice(start, end);
      value = '';
    } else {
      field = buf.slice(start, colon);
      const vs = buf.charCodeAt(colon + 1) === 32 && colon + 1 < end ? colon + 2 : colon + 1;
      value = buf.slice(vs, end);
    }
    switch (field) {
      case 'data':
        this.dataLines.push(value);
        this.dataChars += value.length;
        break;
      case 'event':
        this.eventName = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
      case 'error':
        this.errorData = this.errorData === undefined ? value : `${this.errorData}\n${value}`;
        this.dataChars += value.length;
        break;
      default:
        break;
    }
  }

  /** Reads the lines of `text` into `out`; false when `checked` and an event passed the limit. */
  private read(text: string, out: SseEvent[], checked: boolean): boolean {
    // Most streams use LF only; scanning for CR is skipped entirely when none is present.
    let nextCr = text.indexOf('\r');
    let nextLf = text.indexOf('\n');
    if (nextLf === -1 && nextCr === -1) {
      this.carry(text);
      return true;
    }
    // A line begun in earlier pushes ends here: it is read from one string with the new text,
    // copied once, but only the new text is searched for line ends.
    let buf = text;
    const before = this.carried.length;
    if (before !== 0) {
      buf = this.carried + text;
      this.carried = '';
      this.carriedCost = 0;
      if (nextCr !== -1) nextCr += before;
      if (nextLf !== -1) nextLf += before;
    }
    let start = 0;
    this.colonAt = -1;
    while (true) {
      if (nextCr !== -1 && nextCr < start) nextCr = buf.indexOf('\r', start);
      if (nextLf !== -1 && nextLf < start) nextLf = buf.indexOf('\n', start);
      let end: number;
      let next: number;
      if (nextCr !== -1 && (nextLf === -1 || nextCr < nextLf)) {
        end = nextCr;
        if (end + 1 < buf.length) next = buf.charCodeAt(end + 1) === 10 ? end + 2 : end + 1;
        else {
          next = end + 1;
          this.skipLeadingLf = true;
        }
      } else if (nextLf !== -1) {
        end = nextLf;
        next = end + 1;
      } else break;
      this.line(buf, start, end, out);
      if (checked && this.dataChars > this.maxEventChars) return false;
      start = next;
    }
    if (start < buf.length) this.carry(buf.slice(start));
    return true;
  }

  /**
   * Drops the LF of a CRLF split across two pushes, and a BOM opening the stream. Out of `push`,
   * which is then small enough (bytecode) for V8 to inline into its caller.
   */
  private skipLeading(text: string): string {
    if (text.length === 0) return text;
    if (this.skipLeadingLf) {
      this.skipLeadingLf = false;
      if (text.charCodeAt(0) === 10) text = text.slice(1);
    }
    if (!this.bomChecked && text.length > 0) {
      this.bomChecked = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    return text;
  }

  /** Keeps the line not ended yet for the next push. */
  private carry(piece: string): void {
    this.carried = this.carried.length === 0 ? piece : this.carried + piece;
    this.carriedCost += piece.length + PIECE_OVERHEAD;
  }

  /**
   * Lets go of the event that outgrew the limit, and fails from now on: throws now unless events
   * came before it in this push (they are returned first).
   */
  private failed(out: SseEvent[]): SseEvent[] {
    this.failure = new UpstreamError(
      'bad_response',
      `upstream stream event larger than the gateway's limit (${this.maxEventChars} bytes)`,
    );
    this.carried = '';
    this.carriedCost = 0;
    this.dataLines = [];
    this.dataChars = 0;
    this.errorData = undefined;
    if (out.length === 0) throw this.failure;
    return out;
  }

  private dispatch(out: SseEvent[]): void {
    const lines = this.dataLines.length;
    if (lines !== 0) {
      const data = lines === 1 ? this.dataLines[0] : this.dataLines.join('\n');
      out.push({ event: this.eventName, data, id: this.lastId });
    }
    if (this.errorData !== undefined) {
      out.push({ event: 'error', data: this.errorData, id: this.lastId });
      this.errorData = undefined;
    }
    this.dataLines = [];
    this.dataChars = 0;
    this.eventName = undefined;
  }
}
