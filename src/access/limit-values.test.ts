import { describe, expect, it } from 'vitest';
import { toMicros } from './limit-values.js';

describe('toMicros', () => {
  it('reads -0 (JSON "-0", or a form\'s "-0") as the limit 0, not as -0', () => {
    // -0 passed the "not negative" check and came back as -0, which is not 0 to Object.is (and
    // so to a cache key or a test's toBe), and divides to -Infinity.
    expect(Object.is(toMicros(-0), 0)).toBe(true);
    expect(Object.is(toMicros(JSON.parse('-0') as number), 0)).toBe(true);
    expect(Object.is(toMicros(0), 0)).toBe(true);
    expect(toMicros(0.000001)).toBe(1);
    expect(toMicros(null)).toBeNull();
    expect(() => toMicros(-0.000001)).toThrow(/quota_limit/);
  });
});
