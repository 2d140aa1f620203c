import { describe, expect, it } from 'vitest';
import { formatUsd, perMillion } from '../../web/src/format.js';

// The console's one rule for money: at least two decimals, more only for what they carry
// (three significant digits below a cent), never trailing zeros past the second decimal.
describe('console money format', () => {
  it('shows dollars with two decimals and small amounts without trailing zeros', () => {
    expect(formatUsd(0)).toBe('$0.00');
    expect(formatUsd(1.5)).toBe('$1.50');
    expect(formatUsd(12)).toBe('$12.00');
    expect(formatUsd('2.25')).toBe('$2.25');
    expect(formatUsd(0.0123)).toBe('$0.0123');
    expect(formatUsd(1234.567)).toBe('$1234.57');
    expect(formatUsd(0.005)).toBe('$0.005');
    expect(formatUsd(0.000001)).toBe('$0.000001');
    expect(formatUsd(0.00123456)).toBe('$0.00123');
    expect(formatUsd(0.0099999)).toBe('$0.01');
    expect(formatUsd(1e-9)).toBe('$0.000000001');
    expect(formatUsd(-1.5)).toBe('-$1.50');
  });

  it('says a dash for no amount', () => {
    expect(formatUsd(null)).toBe('—');
    expect(formatUsd(undefined)).toBe('—');
    expect(formatUsd('')).toBe('—');
    expect(formatUsd('abc')).toBe('—');
  });

  it('prices per million tokens by the same rule', () => {
    expect(perMillion('0.0000008')).toBe('$0.80/M');
    expect(perMillion('0.000000075')).toBe('$0.075/M');
    expect(perMillion('0.000015')).toBe('$15.00/M');
    expect(perMillion('0')).toBe('$0.00/M');
    expect(perMillion(undefined)).toBe('—');
  });
});
