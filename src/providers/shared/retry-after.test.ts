import { describe, expect, it } from 'vitest';
import { GatewayError, UpstreamError, upstreamToGateway } from '../../gateway/errors.js';
import { parseRetryAfter } from './retry-after.js';

const NOW = Date.parse('Sun, 06 Nov 1994 08:49:37 GMT');
const ra = (value: string) => parseRetryAfter({ 'retry-after': value }, NOW);

describe('Retry-After from an upstream', () => {
  it('reads delta-seconds and HTTP dates (IMF-fixdate, RFC 850, asctime); a past date is 0', () => {
    expect(ra('7')).toBe(7000);
    expect(ra(' 1.5 ')).toBe(1500);
    expect(ra('0')).toBe(0);
    expect(ra('Sun, 06 Nov 1994 08:49:47 GMT')).toBe(10_000);
    expect(ra('Sunday, 06-Nov-94 08:49:47 GMT')).toBe(10_000);
    expect(ra('Sun Nov  6 08:49:47 1994')).toBe(10_000);
    expect(ra('Sun, 06 Nov 1994 08:00:00 GMT')).toBe(0);
    expect(parseRetryAfter({ 'retry-after-ms': '250', 'retry-after': '9' }, NOW)).toBe(250);
  });

  it('ignores negative and garbage values, as if absent (Date.parse would read "-5" or "1 2" as past dates)', () => {
    for (const v of ['-5', '-0.5', 'soon', '1 2', '1e3', '0x10', 'NaN', 'Infinity', ''])
      expect(ra(v), v).toBeUndefined();
    expect(parseRetryAfter({ 'retry-after-ms': '-1' }, NOW)).toBeUndefined();
  });
});

describe('Retry-After to a client', () => {
  it('is whole seconds and at least 1: an upstream 0 is never passed on as "retry at once"', () => {
    const limited = (ms: number | undefined) =>
      upstreamToGateway(new UpstreamError('rate_limited', 'x', { upstreamStatus: 429, retryAfterMs: ms }));
    expect(limited(0).retryAfter).toBe(1);
    expect(limited(1).retryAfter).toBe(1);
    expect(limited(1500).retryAfter).toBe(2);
    expect(limited(30_000).retryAfter).toBe(30);
    expect(limited(undefined).retryAfter).toBe(1);
    const overloaded = (ms: number | undefined) =>
      upstreamToGateway(new UpstreamError('overloaded', 'x', { upstreamStatus: 503, retryAfterMs: ms }));
    expect(overloaded(0).retryAfter).toBe(1);
    expect(overloaded(undefined).retryAfter).toBeUndefined();
    expect(new GatewayError(429, 'x', { retryAfter: 0 }).retryAfter).toBe(1);
    expect(new GatewayError(429, 'x', { retryAfter: Number.NaN }).retryAfter).toBeUndefined();
  });
});
