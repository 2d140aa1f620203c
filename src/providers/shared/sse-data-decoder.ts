import { SseDecoder } from '../../gateway/chat/sse.js';
import type { ChatStreamEvent } from '../../gateway/chat/types.js';
import type { StreamDecoder } from '../types.js';

/**
 * A stream decoder over Server-Sent Events read one by one by their data (Anthropic's and
 * Gemini's streams): `handle` turns one event into canonical events, and `bodyEnded`, once the body
 * ended and its last events were handled, adds what ends the stream (the final usage, or the
 * error of a stream that ended before its terminator).
 */
export abstract class SseDataDecoder implements StreamDecoder {
  private readonly sse: SseDecoder;

  /** @param maxEventBytes the largest single event; see `SseDecoder`. */
  constructor(maxEventBytes?: number) {
    this.sse = new SseDecoder(maxEventBytes);
  }

  push(chunk: string | Uint8Array): ChatStreamEvent[] {
    const out: ChatStreamEvent[] = [];
    for (const ev of this.sse.push(chunk)) this.handle(ev.data, out);
    return out;
  }

  end(): ChatStreamEvent[] {
    const out: ChatStreamEvent[] = [];
    for (const ev of this.sse.end()) this.handle(ev.data, out);
    this.bodyEnded(out);
    return out;
  }

  protected abstract handle(data: string, out: ChatStreamEvent[]): void;
  protected abstract bodyEnded(out: ChatStreamEvent[]): void;
}
