import { describe, expect, it } from 'vitest';
import { countsWellFormed, isCount } from './usage-counts.js';

describe('isCount', () => {
  it('takes non-negative safe integers only', () => {
    for (const n of [0, 1, 12, 2 ** 53 - 1]) expect(isCount(n)).toBe(true);
    for (const x of ['12', -5, -0.5, 2.5, Number.NaN, Infinity, 2 ** 53, null, undefined, {}, true])
      expect(isCount(x)).toBe(false);
  });
});

describe('countsWellFormed', () => {
  it('needs counts for the prompt and the completion, and for the total when there is one', () => {
    expect(countsWellFormed({ prompt_tokens: 7, completion_tokens: 8, total_tokens: 15 })).toBe(true);
    expect(countsWellFormed({ prompt_tokens: 7, completion_tokens: 8 } as any)).toBe(true);
    expect(countsWellFormed({ prompt_tokens: 7, completion_tokens: Number.NaN, total_tokens: 7 })).toBe(
      false,
    );
    expect(countsWellFormed({ prompt_tokens: '7', completion_tokens: 8 } as any)).toBe(false);
    expect(countsWellFormed({ prompt_tokens: 7, completion_tokens: 8, total_tokens: null } as any)).toBe(
      false,
    );
  });
});
