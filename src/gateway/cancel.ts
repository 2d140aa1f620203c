import { GatewayError } from './errors.js';

/**
 * What the request path needs of an abort signal: whether and why it fired, and one-shot
 * listeners. `AbortSignal` fits; so does `ClientGone`, which costs a plain object per request
 * instead of an AbortController and its EventTarget (about 2% of the gateway's CPU per request
 * in profiles). undici accepts either (it only calls add/removeEventListener).
 */
export interface CancelSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** Fires once, when the client that made the request goes away (or `abort` is called). */
export class ClientGone implements CancelSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | undefined;

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    this.listeners ??= [];
    this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const l = this.listeners;
    if (!l) return;
    const i = l.indexOf(listener);
    if (i >= 0) l.splice(i, 1);
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const l = this.listeners;
    this.listeners = undefined;
    if (l) for (const fn of l) fn();
  }
}

/**
 * The reason a request's signal fires when the server cut its connection because the shutdown
 * grace period ran out (`server.shutdown_grace_ms`): the server gave up on the request, not its
 * client. Logged as a 503 with error kind `shutdown`, and billed like a disconnect (for what was
 * generated). A GatewayError, so nothing turns it into an "internal error"; a request whose
 * answer had not begun gets it as its answer, with `Retry-After: 1` (another instance, or this
 * one restarted, may serve it), as a request that reaches a stopping server does.
 */
export class ShutdownCut extends GatewayError {
  constructor() {
    super(503, 'the gateway is shutting down: the request was cut when the shutdown grace period ran out', {
      retryAfter: 1,
    });
  }
}

/**
 * The reason a request's signal fires when its client closed the connection before the answer
 * was sent. Logged as a 499 (error kind `aborted`) and billed for what was generated. A
 * GatewayError, so the error handler does not log a client leaving as an "internal error".
 */
export class ClientLeft extends GatewayError {
  constructor() {
    // Its type is the error kind logged for it (`errorKindOf` reads a GatewayError's type).
    super(499, 'client disconnected', { type: 'aborted' });
  }
}

/** The status logged for a request its signal ended: 503 when the shutdown cut it, else 499. */
export function abortedStatus(signal: { readonly reason: unknown }): number {
  return signal.reason instanceof ShutdownCut ? 503 : 499;
}

/**
 * The outcome recorded for an upstream try the request's signal ended (its `error_kind` in the
 * attempt trail): `shutdown` when the server cut it, else `client_aborted` (the client left).
 */
export function abortedKind(signal: { readonly reason: unknown }): 'shutdown' | 'client_aborted' {
  return signal.reason instanceof ShutdownCut ? 'shutdown' : 'client_aborted';
}
