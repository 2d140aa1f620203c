import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { lookup, readVocabulary } from './tokenizer-vocabulary.js';

const require = createRequire(import.meta.url);

describe('o200k vocabulary', () => {
  it('reads the vocabulary byte for byte as gpt-tokenizer ships it', () => {
    const shipped = (require('gpt-tokenizer/bpeRanks/o200k_base') as { default: Array<string | number[]> })
      .default;
    const v = readVocabulary(require.resolve('gpt-tokenizer/data/o200k_base.tiktoken'));
    expect(v.start.length - 1).toBe(shipped.length);
    let mismatches = 0;
    let unfindable = 0;
    for (let r = 0; r < shipped.length; r++) {
      const want =
        typeof shipped[r] === 'string'
          ? Buffer.from(shipped[r] as string)
          : Buffer.from(shipped[r] as number[]);
      const got = Buffer.from(v.bytes.subarray(v.start[r]!, v.start[r + 1]!));
      if (!got.equals(want)) mismatches++;
      else if (want.length > 0 && lookup(v, v.bytes, v.start[r]!, v.start[r + 1]!) !== r) unfindable++;
    }
    expect(mismatches).toBe(0);
    // Only the tokens that start with a byte-order mark are left out of the index (9 of them).
    expect(unfindable).toBe(9);
  });
});
