import type { UpstreamHeaders } from '../../providers/types.js';
import type { ChatStreamEvent, ReportedUsage } from '../chat/types.js';

/**
 * A streamed upstream answer, read a batch at a time: each `next()` returns every event decoded
 * since the last one. One promise per batch, and none at all when events are already waiting,
 * where an async-iterator chain (undici's body iterator, then a generator per layer) allocated a
 * promise, an iterator result and a generator step per event per layer, and kept all of it alive
 * for the whole stream.
 */
export interface ChatEventStream extends AsyncIterable<ChatStreamEvent> {
  /**
   * The next events (never an empty array), or null once the stream is over. A failure of the
   * upstream (cut, idle timeout, a stream that ends without its terminator, an error chunk) is a
   * final `{type:'error'}` event, after the events decoded before it, except a cut after the
   * whole answer (every choice finished: `StreamDecoder.endOnCut`), which ends like a clean
   * close; the promise rejects only with the abort reason when the caller's signal aborted.
   */
  next(): Promise<ChatStreamEvent[] | null>;
  /** Stops reading and frees the connection (idempotent). */
  cancel(): void;
  /**
   * Usage the upstream reported in the events read so far (the decoder's `reported`), for a
   * stream that ended without its usage event; also after `cancel`.
   */
  reported(): ReportedUsage | undefined;
}

/**
 * What `openEvents` resolves with: the events of a 2xx answer, or the body of any other (its
 * first `maxErrorBodyBytes`: enough for the message).
 */
export type OpenedEvents =
  | { status: number; headers: UpstreamHeaders; events: ChatEventStream; text?: undefined }
  | { status: number; headers: UpstreamHeaders; events?: undefined; text: string };
