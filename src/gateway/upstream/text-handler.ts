import type { Dispatcher } from 'undici';
import type { CancelSignal } from '../cancel.js';
import { declaredLength, mapNetworkError, tooLarge } from './client-errors.js';
import { SignalledHandler } from './signalled-handler.js';
import type { TextAnswer, UpstreamResponse } from './upstream-client.js';

/**
 * Collects one answer for `sendText`. Settles exactly once: with the body at its end, or with
 * the mapped error (the abort reason when the caller's signal fired). A 2xx body past
 * `maxBody` (declared, or counted as it arrives) is a 'bad_response'; a non-2xx body is answered
 * with its first `maxErrorBody` bytes. Either way the connection is closed at the limit, and
 * nothing past it is held.
 *
 * Once settled it lets go of everything it held (`release`): holding the controller (with its raw
 * header buffers) and the caller's promise (with the answer) past the end was 2 KB promoted to the
 * old generation per request instead of 0.2 (docs/performance.md, Session 11).
 */
export class TextHandler extends SignalledHandler {
  private status = 0;
  private headers: UpstreamResponse['headers'] | undefined;
  private first: Buffer | undefined;
  private rest: Buffer[] | undefined;
  /** Body bytes received, and the most this answer may have (set with the status). */
  private size = 0;
  private limit = 0;
  private waiting: { resolve: (a: TextAnswer) => void; reject: (err: unknown) => void } | undefined;

  constructor(
    resolve: (a: TextAnswer) => void,
    reject: (err: unknown) => void,
    signal: CancelSignal | undefined,
    private readonly maxBody: number,
    private readonly maxErrorBody: number,
  ) {
    super(signal);
    this.waiting = { resolve, reject };
  }

  onResponseStart(
    c: Dispatcher.DispatchController,
    status: number,
    headers: UpstreamResponse['headers'],
  ): void {
    SignalledHandler.dropRawHeaders(c);
    if (status < 200) return; // 1xx: informational, the answer follows
    this.status = status;
    this.headers = headers;
    if (status >= 300) this.limit = this.maxErrorBody;
    else {
      this.limit = this.maxBody;
      if (declaredLength(headers) > this.maxBody) this.overLimit(c);
    }
  }

  onResponseData(c: Dispatcher.DispatchController, chunk: Buffer): void {
    const room = this.limit - this.size;
    this.size += chunk.length;
    if (chunk.length > room) {
      // A non-2xx answer keeps what fits: enough for its message.
      if (this.status >= 300 && room > 0) this.keep(chunk.subarray(0, room));
      this.overLimit(c);
      return;
    }
    this.keep(chunk);
  }

  private keep(chunk: Buffer): void {
    if (this.first === undefined) this.first = chunk;
    else if (this.rest) this.rest.push(chunk);
    else this.rest = [this.first, chunk];
  }

  /** The answer reached its limit: settle now, and close the connection instead of reading on. */
  private overLimit(c: Dispatcher.DispatchController): void {
    if (this.status >= 300) this.onResponseEnd();
    else this.settle()?.reject(tooLarge(this.status, this.maxBody));
    c.abort(new Error('upstream answer over its size limit'));
  }

  onResponseEnd(): void {
    const body = this.rest ? Buffer.concat(this.rest) : this.first;
    const answer = {
      status: this.status,
      headers: this.headers ?? {},
      text: body ? body.toString('utf8') : '',
    };
    this.settle()?.resolve(answer);
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    this.settle()?.reject(mapNetworkError(err, this.signal));
  }

  protected abortedBeforeStart(reason: unknown): void {
    this.settle()?.reject(reason);
  }

  /** The caller's promise to settle, the first time only; drops what the handler held. */
  private settle(): TextHandler['waiting'] {
    const w = this.waiting;
    if (!w) return undefined;
    this.waiting = undefined;
    this.release();
    this.headers = this.first = this.rest = undefined;
    return w;
  }
}
