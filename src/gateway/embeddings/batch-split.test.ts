import { describe, expect, it } from 'vitest';
import { runInBatches, splitIntoBatches } from './batch-split.js';

describe('splitIntoBatches', () => {
  it('slices consecutively', () => {
    expect(splitIntoBatches([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(splitIntoBatches([], 3)).toEqual([]);
    expect(() => splitIntoBatches([1], 0)).toThrow(RangeError);
  });

  it('cuts by summed weight too; an item over the limit on its own goes alone', () => {
    const limit = { weights: [4, 4, 3, 12, 1, 1, 1], max: 10 };
    expect(splitIntoBatches([0, 1, 2, 3, 4, 5, 6], 5, limit)).toEqual([[0, 1], [2], [3], [4, 5, 6]]);
    expect(splitIntoBatches([0, 1, 2, 3, 4, 5, 6], 2, limit)).toEqual([[0, 1], [2], [3], [4, 5], [6]]);
  });
});

describe('runInBatches', () => {
  it('reassembles in input order even when later batches finish first, and sums usage', async () => {
    const items = Array.from({ length: 10 }, (_, i) => i);
    const seen: number[][] = [];
    const out = await runInBatches(items, 3, async (batch, offset) => {
      seen.push(batch);
      expect(batch[0]).toBe(offset);
      // Reverse completion order: the first batch resolves last.
      await new Promise((r) => setTimeout(r, (10 - offset) * 2));
      return { vectors: batch.map((x) => [x, x * 10]), usage: { totalTokens: batch.length, textTokens: 1 } };
    });
    expect(seen.map((b) => b.length).sort()).toEqual([1, 3, 3, 3]);
    expect(out.vectors).toEqual(items.map((x) => [x, x * 10]));
    expect(out.usage).toEqual({ totalTokens: 10, textTokens: 4 });
  });

  it('passes each weight-cut batch its real offset', async () => {
    const offsets: number[] = [];
    const out = await runInBatches(
      [0, 1, 2, 3, 4],
      10,
      async (batch, offset) => {
        expect(batch[0]).toBe(offset);
        offsets.push(offset);
        return { vectors: batch.map((x) => [x]), usage: { totalTokens: batch.length } };
      },
      4,
      { weights: [6, 5, 1, 1, 9], max: 10 },
    );
    expect(offsets.sort()).toEqual([0, 1, 4]);
    expect(out.vectors).toEqual([[0], [1], [2], [3], [4]]);
    expect(out.usage).toEqual({ totalTokens: 5 });
  });

  it('drops a usage field that some batch did not report', async () => {
    const out = await runInBatches([1, 2, 3], 2, async (batch, offset) => ({
      vectors: batch.map(() => [0]),
      usage: offset === 0 ? { totalTokens: 5 } : {},
    }));
    expect(out.usage).toBeUndefined();
  });
});
