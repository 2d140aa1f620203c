import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../errors.js';
import { mapNetworkError } from './client-errors.js';

const codeError = (code: string, message = `${code} happened`) => Object.assign(new Error(message), { code });

describe('mapNetworkError', () => {
  it('says what a usual connection failure means, keeping the code for the logs', () => {
    const cases: Array<[string, string]> = [
      ['UND_ERR_SOCKET', 'upstream connection failed: the upstream closed the connection (UND_ERR_SOCKET)'],
      ['ECONNREFUSED', 'upstream connection failed: connection refused (ECONNREFUSED)'],
      ['ECONNRESET', 'upstream connection failed: the upstream reset the connection (ECONNRESET)'],
      ['ENOTFOUND', 'upstream connection failed: host not found (ENOTFOUND)'],
    ];
    for (const [code, message] of cases) {
      const e = mapNetworkError(codeError(code)) as UpstreamError;
      expect(e).toBeInstanceOf(UpstreamError);
      expect(e.kind).toBe('connection');
      expect(e.message).toBe(message);
    }
  });

  it('says an unlisted code as it is, and a message when there is no code', () => {
    expect((mapNetworkError(codeError('EWHATEVER')) as Error).message).toBe(
      'upstream connection failed: EWHATEVER',
    );
    expect((mapNetworkError(new Error('socket hang up')) as Error).message).toBe(
      'upstream connection failed: socket hang up',
    );
  });

  it('keeps timeouts as timeouts', () => {
    const e = mapNetworkError(codeError('UND_ERR_HEADERS_TIMEOUT')) as UpstreamError;
    expect(e.kind).toBe('timeout');
    expect(e.message).toBe('upstream first byte timeout');
  });
});
