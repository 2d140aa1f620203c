import type { Dispatcher } from 'undici';
import type { CancelSignal } from '../cancel.js';

/**
 * What every handler given to `UpstreamClient.dispatch` shares: the caller's signal aborts the
 * request, and `release` drops the listener and the controller once undici is done.
 *
 * An abort before undici started the request (it waits in the queue for a connection: the
 * origin's pool is at `connectionsPerOrigin`, or the connection is still being made) settles
 * the caller at once through `abortedBeforeStart`, instead of when a connection frees or the
 * connect times out; undici then tears the request down as it starts it, before a byte is
 * written, and what it reports after that is ignored.
 */
export abstract class SignalledHandler implements Dispatcher.DispatchHandler {
  protected controller: Dispatcher.DispatchController | undefined;
  private readonly onAbort: (() => void) | undefined;

  constructor(protected readonly signal: CancelSignal | undefined) {
    if (signal) {
      this.onAbort = () => {
        const c = this.controller;
        if (c) c.abort(abortReason(signal));
        else this.abortedBeforeStart(abortReason(signal));
      };
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.signal?.aborted) {
      // Settled already (abortedBeforeStart): the controller is not kept.
      controller.abort(abortReason(this.signal));
      return;
    }
    this.controller = controller;
  }

  /** The caller's signal fired while undici had not started the request: settle the caller now. */
  protected abstract abortedBeforeStart(reason: unknown): void;

  /**
   * Once undici will call nothing more: detaches from the signal and lets go of the controller.
   * undici keeps a finished request's handler referenced for a while, longer than a request
   * lasts, so whatever the handler still holds then is promoted to the old generation.
   */
  protected release(): void {
    if (this.onAbort) this.signal!.removeEventListener('abort', this.onAbort);
    this.controller = undefined;
  }

  /**
   * Drops the controller's raw header buffers: views of the socket read they arrived in, which
   * they keep alive for as long as the request is. We use the parsed headers only.
   */
  protected static dropRawHeaders(c: Dispatcher.DispatchController): void {
    c.rawHeaders = null;
  }
}

/** What an aborted signal rejects with: its reason, or a plain Error when it gave none. */
export function abortReason(signal: CancelSignal): Error {
  return (signal.reason as Error) ?? new Error('aborted');
}
