/**
 * How the upstream client's failures become UpstreamErrors: undici and network errors by their
 * code ('timeout' or 'connection'), and answers past their size limit ('bad_response'), with
 * `declaredLength`, the first check of both readers of a whole body (`sendText`, `text()`).
 */
import type { CancelSignal } from '../cancel.js';
import { UpstreamError } from '../errors.js';
import type { UpstreamResponse } from './upstream-client.js';

const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

/** Maps an undici/network error; returns the abort reason untouched when the caller aborted. */
export function mapNetworkError(err: unknown, signal?: CancelSignal): unknown {
  if (signal?.aborted) return signal.reason ?? err;
  if (err instanceof UpstreamError) return err;
  const code = (err as { code?: string })?.code ?? '';
  const message = (err as Error)?.message ?? String(err);
  if (TIMEOUT_CODES.has(code)) {
    const what =
      code === 'UND_ERR_HEADERS_TIMEOUT'
        ? 'first byte'
        : code === 'UND_ERR_BODY_TIMEOUT'
          ? 'idle'
          : 'connect';
    return new UpstreamError('timeout', `upstream ${what} timeout`, { cause: err });
  }
  const words = CONNECTION_WORDS[code];
  const what = words ? `${words} (${code})` : code || message;
  return new UpstreamError('connection', `upstream connection failed: ${what}`, { cause: err });
}

/**
 * What the usual network and undici codes mean, for the error a client reads (an SDK shows it as
 * the exception's message): `UND_ERR_SOCKET` alone says nothing outside undici. The code stays,
 * in parentheses, for the operator searching logs; an unlisted code is said as it is.
 */
const CONNECTION_WORDS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'the upstream reset the connection',
  EPIPE: 'the upstream closed the connection',
  UND_ERR_SOCKET: 'the upstream closed the connection',
  UND_ERR_CLOSED: 'the connection was closed',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/** The answer's `content-length`, NaN when it has none (comparisons with NaN are false). */
export function declaredLength(headers: UpstreamResponse['headers']): number {
  const v = headers['content-length'];
  return typeof v === 'string' ? Number(v) : Number.NaN;
}

export function tooLarge(status: number, limit: number): UpstreamError {
  const message = `upstream answer larger than the gateway's limit (${limit} bytes)`;
  return new UpstreamError('bad_response', message, { upstreamStatus: status });
}
