import { describe, expect, it } from 'vitest';
import { perObject } from './per-object.js';

describe('perObject', () => {
  it('derives once per key object and separately for another object', () => {
    let calls = 0;
    const lengthOf = perObject((k: { s: string }) => {
      calls++;
      return k.s.length;
    });
    const a = { s: 'abc' };
    expect(lengthOf(a)).toBe(3);
    expect(lengthOf(a)).toBe(3);
    expect(lengthOf({ s: 'abc' })).toBe(3);
    expect(calls).toBe(2);
  });
});
