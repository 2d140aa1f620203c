import type { Dispatcher } from 'undici';
import type { CancelSignal } from '../cancel.js';
import { declaredLength, mapNetworkError, tooLarge } from './client-errors.js';
import type { UpstreamResponse } from './upstream-client.js';

/**
 * `UpstreamClient.send`'s answer, over undici's `request()`: its body is read one way only
 * (chunks, text, or dumped).
 */
export class ReadOnceResponse implements UpstreamResponse {
  readonly status: number;
  readonly headers: UpstreamResponse['headers'];
  private consumed = false;

  constructor(
    private readonly res: Dispatcher.ResponseData,
    private readonly signal: CancelSignal | undefined,
    private readonly maxBody: number,
    private readonly maxErrorBody: number,
  ) {
    this.status = res.statusCode;
    this.headers = res.headers;
  }

  private take(): Dispatcher.ResponseData['body'] {
    if (this.consumed) throw new Error('upstream body already consumed');
    this.consumed = true;
    return this.res.body;
  }

  get body(): AsyncIterable<Uint8Array> {
    const raw = this.take();
    const signal = this.signal;
    return {
      async *[Symbol.asyncIterator]() {
        let finished = false;
        try {
          for await (const chunk of raw) yield chunk as Uint8Array;
          finished = true;
        } catch (err) {
          throw mapNetworkError(err, signal);
        } finally {
          // An early break must free the socket instead of leaving the upstream generating.
          if (!finished) raw.destroy();
        }
      },
    };
  }

  /** Size limits as `sendText`'s: past them the connection is closed without reading on. */
  async text(): Promise<string> {
    const raw = this.take();
    const error = this.status >= 300;
    const limit = error ? this.maxErrorBody : this.maxBody;
    const declared = declaredLength(this.headers);
    if (!error && declared > limit) {
      raw.destroy();
      throw tooLarge(this.status, limit);
    }
    try {
      // A length within the limit (undici holds the upstream to it): undici's own reader, with no
      // async generator turn per chunk and no Buffer.concat.
      if (declared <= limit) return await raw.text();
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of raw as AsyncIterable<Buffer>) {
        const room = limit - size;
        if (chunk.length > room) {
          // Leaving the loop destroys the body: the connection is closed, not read to its end.
          if (!error) throw tooLarge(this.status, limit);
          chunks.push(chunk.subarray(0, room));
          size = limit;
          break;
        }
        chunks.push(chunk);
        size += chunk.length;
      }
      return Buffer.concat(chunks, size).toString('utf8');
    } catch (err) {
      throw mapNetworkError(err, this.signal);
    }
  }

  async dump(): Promise<void> {
    if (this.consumed) return;
    this.consumed = true;
    try {
      await this.res.body.dump();
    } catch {
      // the connection is being discarded anyway
    }
  }
}
