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

export class SseDecoder {
  private buf = '';
  private dataLines: string[] = [];
  private hasData = false;
  private eventName: string | undefined;
  private lastId: string | undefined;
  /** A chunk ended with CR: a leading LF in the next chunk belongs to the same line break. */
  private skipLeadingLf = false;
  private bomChecked = false;
  private readonly utf8 = new TextDecoder('utf-8');
  /** Comment lines seen so far (keep-alives). */
  comments = 0;

  push(chunk: string | Uint8Array): SseEvent[] {
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
    const buf = this.buf.length > 0 ? this.buf + text : text;
    const out: SseEvent[] = [];
    let start = 0;
    // Most streams use LF only; scanning for CR is skipped entirely when none is present.
    let nextCr = buf.indexOf('\r');
    let nextLf = buf.indexOf('\n');
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
      start = next;
    }
    this.buf = start === 0 ? buf : buf.slice(start);
    return out;
  }

  /**
   * The body ended. As the SSE spec says, an event not closed by a blank line is incomplete and
   * discarded: a cut stream must not deliver half a JSON payload as if it were whole.
   */
  end(): SseEvent[] {
    const tail = this.utf8.decode();
    const out = tail ? this.push(tail) : [];
    this.buf = '';
    this.dataLines = [];
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
    const colon = buf.indexOf(':', start);
    let field: string;
    let value: string;
    if (colon === -1 || colon >= end) {
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

  private dispatch(out: SseEvent[]): void {
    if (this.hasData) {
      const data = this.dataLines.length === 1 ? this.dataLines[0] : this.dataLines.join('\n');
      out.push({ event: this.eventName, data, id: this.lastId });
    }
    this.dataLines = [];
    this.hasData = false;
    this.eventName = undefined;
  }
}
