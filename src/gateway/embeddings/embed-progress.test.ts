import { describe, expect, it } from 'vitest';
import { EmbedProgress } from './embed-progress.js';

const answer = (indices: number[], usage?: Record<string, number>) => ({
  vectors: indices.map((i) => [i, i * 10]),
  usage,
});

describe('EmbedProgress', () => {
  it('puts vectors back in input order whatever order calls were served in, and sums usage', () => {
    const p = new EmbedProgress(7);
    const t = p.begin();
    p.add(t, [4, 5, 6], answer([4, 5, 6], { totalTokens: 3, textTokens: 1 }), 100);
    p.add(t, [0, 1], answer([0, 1], { totalTokens: 2, textTokens: 1 }), 100);
    expect(p.missing()).toEqual([2, 3]);
    expect(p.complete).toBe(false);
    expect(() => p.result()).toThrow('2 inputs were not served');
    p.add(t, [3, 2], answer([3, 2], { totalTokens: 2, textTokens: 1 }), 100);
    expect(p.complete).toBe(true);
    expect(p.result()).toEqual({
      vectors: [0, 1, 2, 3, 4, 5, 6].map((i) => [i, i * 10]),
      usage: { totalTokens: 7, textTokens: 3 },
    });
  });

  it('keeps what an earlier try served for the next one, and sums each call once', () => {
    const p = new EmbedProgress(4);
    const first = p.begin();
    p.add(first, [0, 1], answer([0, 1], { totalTokens: 2 }), 100);
    const second = p.begin();
    expect(p.missing()).toEqual([2, 3]);
    p.add(second, [2, 3], answer([2, 3], { totalTokens: 2 }), 100);
    expect(p.result().usage).toEqual({ totalTokens: 4 });
  });

  it('drops a slice of an earlier try that lands once the next began: its inputs may be sent again', () => {
    const p = new EmbedProgress(4);
    const first = p.begin();
    const second = p.begin();
    p.add(second, [0, 1, 2, 3], answer([0, 1, 2, 3], { totalTokens: 4 }), 100);
    p.add(first, [2, 3], answer([2, 3], { totalTokens: 2 }), 100);
    expect(p.result().usage).toEqual({ totalTokens: 4 });
  });

  it('proves the largest body served below the smallest refused', () => {
    const p = new EmbedProgress(4);
    const t = p.begin();
    p.add(t, [0], answer([0]), 300);
    p.refused(900);
    p.add(t, [1, 2], answer([1, 2]), 700);
    p.refused(650);
    p.add(t, [3], answer([3]), 500);
    expect(p.provenBodyBytes()).toBe(500);
    const q = new EmbedProgress(1);
    q.refused(100);
    q.add(q.begin(), [0], answer([0]), 200);
    expect(q.provenBodyBytes()).toBeUndefined();
  });

  it('leaves out a usage field that some call did not report', () => {
    const p = new EmbedProgress(3);
    const t = p.begin();
    p.add(t, [0, 1], answer([0, 1], { totalTokens: 5, textTokens: 5 }), 100);
    p.add(t, [2], answer([2], { textTokens: 1 }), 100);
    expect(p.result().usage).toEqual({ textTokens: 6 });
    const q = new EmbedProgress(1);
    q.add(q.begin(), [0], answer([0]), 100);
    expect(q.result().usage).toBeUndefined();
  });
});
