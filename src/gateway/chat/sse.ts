import { UpstreamError } from '../errors.js';

/**
 * Server-Sent Events decoder (WHATWG event-stream rules) that tolerates any chunk boundary: a
 * line, a CRLF pair or a multi-byte UTF-8 character may be split across pushes. Comments
 * (`: keep-alive`) are counted but not returned; `retry:` is ignored.
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

export class SseDecoder {
  /**
   * The line still arriving, as the pieces it came in (none holds a line end). Only text that
   * arrived in a push is searched for line ends, once: appending each chunk to one buffer and
   * searching all of it again made a long line quadratic (an 8 MB line in 64 KiB reads took
   * 300 ms, 200 MB took minutes); the pieces are joined once, when the line ends.
   */
  private partial: string[] = [];
  private partialChars = 0;
  private dataLines: string[] = [];
  /** Characters of `dataLines`. */
  private dataChars = 0;
  /** The event being read outgrew the limit: every later push or end throws this. */
  private failure: UpstreamError | undefined;
  private hasData = false;
  private eventName: string | undefined;
  private lastId: string | undefined;
  /** A chunk ended with CR: a leading LF in the next chunk belongs to the same line break. */
  private skipLeadingLf = false;
  private bomChecked = false;
  private readonly utf8 = new TextDecoder('utf-8');
  /** Comment lines seen so far (keep-alives). */
  comments = 0;

  /**
   * @param maxEventChars the most characters one event's data, or one line still arriving, may
   * hold (characters of the decoded text: at most its bytes). Past it the decoder lets go of the
   * event and throws an UpstreamError 'bad_response', so what it holds stays bounded by about
   * this however long the line the upstream sends. Events decoded before it in the same push are
   * returned first, and the next push (or `end`) throws.
   */
  constructor(private readonly maxEventChars = DEFAULT_MAX_EVENT_CHARS) {}

  push(chunk: string | Uint8Array): SseEvent[] {
    if (this.failure !== undefined) throw this.failure;
    let text = typeof chunk === 'string' ? chunk : this.utf8.decode(chunk, STREAM);
    if (text.length === 0) return [];
    if (this.skipLeadingLf) {
      this.skipLeadingLf = false;
      if (text.charCodeAt(0) === 10) text = text.slice(1);
    }
    if (!this.bomChecked && text.length > 0) {
      this.bomChecked = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    const out: SseEvent[] = [];
    let start = 0;
    // Most streams use LF only; scanning for CR is skipped entirely when none is present.
    let nextCr = text.indexOf('\r');
    let nextLf = text.indexOf('\n');
    while (true) {
      if (nextCr !== -1 && nextCr < start) nextCr = text.indexOf('\r', start);
      if (nextLf !== -1 && nextLf < start) nextLf = text.indexOf('\n', start);
      let end: number;
      let next: number;
      if (nextCr !== -1 && (nextLf === -1 || nextCr < nextLf)) {
        end = nextCr;
        if (end + 1 < text.length) next = text.charCodeAt(end + 1) === 10 ? end + 2 : end + 1;
        else {
          next = end + 1;
          this.skipLeadingLf = true;
        }
      } else if (nextLf !== -1) {
        end = nextLf;
        next = end + 1;
      } else break;
      if (this.partial.length === 0) this.line(text, start, end, out);
      else {
        // Only the first line of a push can have begun in an earlier one.
        const line = this.takePartial(text.slice(0, end));
        this.line(line, 0, line.length, out);
      }
      if (this.failure !== undefined) return this.failed(out);
      start = next;
    }
    if (start < text.length) {
      this.partial.push(start === 0 ? text : text.slice(start));
      this.partialChars += text.length - start;
      if (this.partialChars + this.dataChars > this.maxEventChars) {
        this.failure = this.tooLarge();
        return this.failed(out);
      }
    }
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
    this.partial = [];
    this.partialChars = 0;
    this.dataLines = [];
    this.dataChars = 0;
    this.hasData = false;
    this.eventName = undefined;
    return out;
  }

  private line(buf: string, start: number, end: number, out: SseEvent[]): void {
    if (start === end) {
      this.dispatch(out);
      return;
    }
    const first = buf.charCodeAt(start);
    if (first === 58 /* : */) {
      this.comments++;
      return;
    }
    // Searched within the line only: indexOf would run on to the next colon, past the line's
    // end, for every line that has none (quadratic for a chunk of such lines).
    let colon = start + 1;
    while (colon < end && buf.charCodeAt(colon) !== 58) colon++;
    let field: string;
    let value: string;
    if (colon === end) {
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
        this.hasData = true;
        this.dataChars += value.length;
        if (this.dataChars > this.maxEventChars) this.failure = this.tooLarge();
        break;
      case 'event':
        this.eventName = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
      default:
        break;
    }
  }

  /** The line begun in earlier pushes, ended by `tail`; the pieces are let go. */
  private takePartial(tail: string): string {
    const p = this.partial;
    const line = p.length === 1 ? p[0] + tail : p.join('') + tail;
    p.length = 0;
    this.partialChars = 0;
    return line;
  }

  private tooLarge(): UpstreamError {
    return new UpstreamError(
      'bad_response',
      `upstream stream event larger than the gateway's limit (${this.maxEventChars} bytes)`,
    );
  }

  /** Lets go of the event that outgrew the limit; throws now unless events came before it. */
  private failed(out: SseEvent[]): SseEvent[] {
    this.partial = [];
    this.partialChars = 0;
    this.dataLines = [];
    this.dataChars = 0;
    if (out.length === 0) throw this.failure;
    return out;
  }

  private dispatch(out: SseEvent[]): void {
    if (this.hasData) {
      const data = this.dataLines.length === 1 ? this.dataLines[0] : this.dataLines.join('\n');
      out.push({ event: this.eventName, data, id: this.lastId });
    }
    this.dataLines = [];
    this.dataChars = 0;
    this.hasData = false;
    this.eventName = undefined;
  }
}
