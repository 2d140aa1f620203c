import { describe, expect, it } from 'vitest';
import { sendInBatches, splitIntoBatches } from './batch-split.js';

describe('splitIntoBatches', () => {
  it('slices consecutively', () => {
    expect(splitIntoBatches([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(splitIntoBatches([], 3)).toEqual([]);
    expect(() => splitIntoBatches([1], 0)).toThrow(RangeError);
  });

  it('cuts by summed weight too; an item over the limit on its own goes alone', () => {
    const limit = { weights: [4, 4, 3, 12, 1, 1, 1], max: 10 };
    expect(splitIntoBatches([0, 1, 2, 3, 4, 5, 6], 5, [limit])).toEqual([[0, 1], [2], [3], [4, 5, 6]]);
    expect(splitIntoBatches([0, 1, 2, 3, 4, 5, 6], 2, [limit])).toEqual([[0, 1], [2], [3], [4, 5], [6]]);
  });

  it('keeps every batch under each of several limits', () => {
    const tokens = { weights: [1, 1, 1, 1, 1, 1], max: 3 };
    const bytes = { weights: [1, 4, 1, 1, 1, 1], max: 5 };
    expect(splitIntoBatches([0, 1, 2, 3, 4, 5], 5, [tokens])).toEqual([
      [0, 1, 2],
      [3, 4, 5],
    ]);
    expect(splitIntoBatches([0, 1, 2, 3, 4, 5], 5, [bytes])).toEqual([
      [0, 1],
      [2, 3, 4, 5],
    ]);
    expect(splitIntoBatches([0, 1, 2, 3, 4, 5], 5, [tokens, bytes])).toEqual([[0, 1], [2, 3, 4], [5]]);
  });
});

describe('sendInBatches', () => {
  it('sends every batch, a few at a time, cut by count and weight', async () => {
    const seen: number[][] = [];
    let inFlight = 0;
    let most = 0;
    await sendInBatches(
      [0, 1, 2, 3, 4, 5, 6],
      2,
      async (batch) => {
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setTimeout(r, 5));
        seen.push(batch);
        inFlight--;
      },
      2,
      [{ weights: [6, 5, 1, 1, 9, 1, 1], max: 10 }],
    );
    expect(seen.sort((a, b) => a[0]! - b[0]!)).toEqual([[0], [1, 2], [3, 4], [5, 6]]);
    expect(most).toBe(2);
  });

  it('starts no batch after one failed', async () => {
    const seen: number[][] = [];
    const run = sendInBatches(
      [0, 1, 2, 3],
      1,
      async (batch) => {
        seen.push(batch);
        if (batch[0] === 1) throw new Error('refused');
      },
      1,
    );
    await expect(run).rejects.toThrow('refused');
    expect(seen).toEqual([[0], [1]]);
  });
});
