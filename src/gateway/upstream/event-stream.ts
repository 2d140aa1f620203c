import type { Readable } from 'node:stream';
import type { StreamDecoder } from '../../providers/types.js';
import type { CancelSignal } from '../cancel.js';
import type { ChatStreamEvent } from '../chat/types.js';
import { UpstreamError } from '../errors.js';
import { mapNetworkError } from './upstream-client.js';

/**
 * A streamed upstream answer, read a batch at a time: each `next()` decodes everything the
 * socket has delivered so far. One promise per upstream read, and none at all when data is
 * already buffered, where an async-iterator chain (undici's body iterator, then a generator per
 * layer) allocated a promise, an iterator result and a generator step per event per layer, and
 * kept all of it alive for the whole stream.
 */
export interface ChatEventStream extends AsyncIterable<ChatStreamEvent> {
  /**
   * The next events (never an empty array), or null once the stream is over. A failure of the
   * upstream (cut, idle timeout, a stream that ends without its terminator, an error chunk) is a
   * final `{type:'error'}` event; the promise rejects only with the abort reason when the
   * caller's signal aborted.
   */
  next(): Promise<ChatStreamEvent[] | null>;
  /** Stops reading and frees the connection (idempotent). */
  cancel(): void;
}

/** Reads `body` (an undici response body) through `decoder`. The body must not have been read yet. */
export function readEvents(body: Readable, decoder: StreamDecoder, signal?: CancelSignal): ChatEventStream {
  return new BodyEvents(body, decoder, signal);
}

class BodyEvents implements ChatEventStream {
  /** The last batch was returned (terminal error event, or the decoder's end). */
  private over = false;
  private failure: unknown;
  private waiter: { resolve(v: ChatStreamEvent[] | null): void; reject(e: unknown): void } | undefined;
  private readonly wake = () => this.settle();

  constructor(
    private readonly body: Readable,
    private readonly decoder: StreamDecoder,
    private readonly signal: CancelSignal | undefined,
  ) {
    body.on('readable', this.wake);
    body.on('end', this.wake);
    body.on('error', (err: unknown) => {
      this.failure ??= err;
      this.settle();
    });
    body.on('close', () => {
      // Destroyed without an error and before its end: the connection went away.
      if (!body.readableEnded) this.failure ??= new Error('upstream body closed before its end');
      this.settle();
    });
  }

  next(): Promise<ChatStreamEvent[] | null> {
    if (this.waiter) return Promise.reject(new Error('ChatEventStream.next() called while one is pending'));
    try {
      const batch = this.pull();
      if (batch !== undefined) return Promise.resolve(batch);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  cancel(): void {
    this.over = true;
    if (!this.body.destroyed) this.body.destroy();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ChatStreamEvent> {
    let finished = false;
    try {
      for (let b = await this.next(); b !== null; b = await this.next()) yield* b;
      finished = true;
    } finally {
      if (!finished) this.cancel();
    }
  }

  private settle(): void {
    const w = this.waiter;
    if (!w) return;
    let batch: ChatStreamEvent[] | null | undefined;
    try {
      batch = this.pull();
    } catch (err) {
      this.waiter = undefined;
      w.reject(err);
      return;
    }
    if (batch === undefined) return;
    this.waiter = undefined;
    w.resolve(batch);
  }

  /** Events available now, null when over, undefined when the body has nothing yet. */
  private pull(): ChatStreamEvent[] | null | undefined {
    if (this.over) return null;
    if (this.failure !== undefined) {
      this.over = true;
      const err = mapNetworkError(this.failure, this.signal);
      if (err instanceof UpstreamError) return [{ type: 'error', error: err }];
      throw err;
    }
    for (let chunk = this.body.read(); chunk !== null; chunk = this.body.read()) {
      const events = this.decoder.push(chunk as Uint8Array);
      if (events.length > 0) return this.deliver(events);
    }
    if (!this.body.readableEnded) return undefined;
    this.over = true;
    const tail = this.decoder.end();
    return tail.length > 0 ? tail : null;
  }

  /** Events up to and including an error event; the stream is over after one. */
  private deliver(events: ChatStreamEvent[]): ChatStreamEvent[] {
    for (let i = 0; i < events.length; i++) {
      if (events[i]!.type !== 'error') continue;
      this.cancel();
      return i === events.length - 1 ? events : events.slice(0, i + 1);
    }
    return events;
  }
}
