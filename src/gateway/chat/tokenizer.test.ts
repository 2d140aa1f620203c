import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { countTokens, decode, encode, readTiktokenRanks } from './tokenizer.js';

const require = createRequire(import.meta.url);

describe('o200k tokenizer from the tiktoken data file', () => {
  it('builds the same rank table as gpt-tokenizer ships as a module, entry for entry', () => {
    for (const name of ['o200k_base', 'cl100k_base']) {
      const shipped = (require(`gpt-tokenizer/bpeRanks/${name}`) as { default: Array<string | number[]> })
        .default;
      const read = readTiktokenRanks(require.resolve(`gpt-tokenizer/data/${name}.tiktoken`));
      expect(read.length).toBe(shipped.length);
      let mismatches = 0;
      for (let i = 0; i < shipped.length; i++) {
        const a = shipped[i];
        const b = read[i];
        if (
          i in shipped !== i in read ||
          (typeof a === 'string' ? a !== b : JSON.stringify(a) !== JSON.stringify(b))
        )
          mismatches++;
      }
      expect(mismatches).toBe(0);
    }
  });

  it('encodes, counts and decodes like gpt-tokenizer/encoding/o200k_base', () => {
    const lib = require('gpt-tokenizer/encoding/o200k_base') as {
      encode(t: string, o?: object): number[];
      countTokens(t: string, o?: object): number;
    };
    const plain = { disallowedSpecial: new Set<string>() };
    const texts = [
      'hello world',
      'Ünïcödé — 日本語のテキスト, emoji 🎉🧪 and \ufeffa byte-order mark',
      'function f(x) {\n\treturn x * 2; // double\n}\n',
      '<|endoftext|> is plain text here',
      'a'.repeat(5000),
    ];
    for (const t of texts) {
      expect(encode(t)).toEqual(lib.encode(t, plain));
      expect(countTokens(t)).toBe(lib.countTokens(t, plain));
      expect(decode(encode(t))).toBe(t);
    }
  });
});
