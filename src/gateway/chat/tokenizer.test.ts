import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { countTokens, decode, encode } from './tokenizer.js';

const require = createRequire(import.meta.url);

interface GptTokenizer {
  encode(t: string, o?: object): number[];
  countTokens(t: string, o?: object): number;
  decode(t: number[]): string;
}
/** The reference: gpt-tokenizer's own o200k encoder, special tokens as plain text. */
const reference = require('gpt-tokenizer/encoding/o200k_base') as GptTokenizer;
const PLAIN = { disallowedSpecial: new Set<string>() };

/** This repository's sources and docs: ~1 MB of English, code, JSON, YAML and markdown. */
function corpus(): string[] {
  const root = join(import.meta.dirname, '../../..');
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|md|json|yaml|tsx|css)$/.test(name)) out.push(readFileSync(p, 'utf8'));
    }
  };
  for (const d of ['src', 'docs', 'test', 'web/src', 'deploy']) walk(join(root, d));
  out.push(readFileSync(join(root, 'README.md'), 'utf8'));
  return out;
}

/** Text chosen to hit the odd paths: scripts, emoji, marks, byte-order marks, lone surrogates. */
const EDGES = [
  'hello world',
  'Ünïcödé — 日本語のテキスト, emoji 🎉🧪👩‍👩‍👧 and combining e\u0301 marks',
  'Здравствуйте, как дела? مرحبا بالعالم שלום עולם नमस्ते दुनिया',
  'function f(x) {\n\treturn x * 2; // double\n}\n\r\n\r\n   \t  trailing   ',
  '<|endoftext|> is plain text here, so is <|im_start|>',
  '\ufeffusing a byte-order mark \ufeff\ufeff twice and \ufeffnamespace x;\n\ufeff\n\n',
  'lone \ud800 high and \udc00 low surrogates, \ud83d',
  '\uFFFD replacement \uFFFD\uFFFD',
  'a'.repeat(5000),
  ' '.repeat(300) + 'x',
  '0123456789'.repeat(50),
  "it's they're we'VE I'LL don'T",
  '\u0000\u0001\u001f control characters \u007f\u0080\u009f',
];

describe('o200k tokenizer', () => {
  it('encodes exactly like gpt-tokenizer: the repository corpus and edge cases', () => {
    let tokens = 0;
    for (const text of [...corpus(), ...EDGES]) {
      const want = reference.encode(text, PLAIN);
      const got = encode(text);
      if (got.length !== want.length || got.some((t, i) => t !== want[i])) expect(got).toEqual(want);
      expect(countTokens(text)).toBe(want.length);
      tokens += want.length;
    }
    expect(tokens).toBeGreaterThan(100_000);
  });

  it('encodes random mixes of awkward characters like gpt-tokenizer', () => {
    const alphabet = [
      ...'aZé ß\t\n\r  0 7 .,;:!?\'"`-_/\\()[]{}<>|@#$%^&*+=~',
      '\ufeff',
      '\ud800',
      '\udfff',
      '\ud83d\ude00',
      '\u0301',
      '\u200d',
      '\u00a0',
      '\u3000',
      '日',
      'ж',
      'ع',
      '\ufffd',
      '\u0000',
      "'s",
      "'LL",
      ' the',
      'ing',
      '\r\n',
    ];
    let seed = 42;
    const rnd = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    for (let k = 0; k < 3000; k++) {
      let text = '';
      for (let n = 1 + rnd(40); n > 0; n--) text += alphabet[rnd(alphabet.length)];
      expect(encode(text), JSON.stringify(text)).toEqual(reference.encode(text, PLAIN));
    }
  });

  it('merges long pieces (no space for hundreds of bytes) like gpt-tokenizer', () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const texts = [
      'x'.repeat(5000),
      'ab'.repeat(1500),
      'aaab'.repeat(700),
      'é'.repeat(900),
      '日本語'.repeat(400),
    ];
    for (let k = 0; k < 40; k++) {
      const letters = ['a', 'b', 'z', 'Q', 'é', 'ж', '日', 'in', 'the', '́'].slice(0, 2 + rnd(8));
      let text = '';
      for (let n = 300 + rnd(3000); n > 0; n--) text += letters[rnd(letters.length)];
      texts.push(text);
    }
    // A base64 blob pasted as text: letters with digits and / + in between.
    texts.push(Buffer.from(Array.from({ length: 6000 }, () => rnd(256))).toString('base64'));
    for (const text of texts) expect(encode(text), text.slice(0, 40)).toEqual(reference.encode(text, PLAIN));
  });

  it('counts a megabyte-long piece without quadratic work, windows of 64 KiB each merged alone', () => {
    // The scanning merge needed ~10^12 steps for this (the test would time out).
    const text = 'x'.repeat(1 << 20);
    const n = countTokens(text);
    const window = countTokens('x'.repeat(64 * 1024));
    expect(n).toBe(window * 16);
    expect(window).toBe(reference.encode('x'.repeat(64 * 1024), PLAIN).length);
    expect(decode(encode(text))).toBe(text);
  });

  it('decodes to the original text', () => {
    // Every edge case but lone surrogates (not valid UTF-16, so not representable in UTF-8).
    // Byte-order marks survive too (gpt-tokenizer's own decode drops a leading one).
    for (const text of EDGES.filter((t) => !/[\ud800-\udfff]/u.test(t)))
      expect(decode(encode(text))).toBe(text);
    for (const text of corpus().slice(0, 50)) expect(decode(encode(text))).toBe(text);
    // Cut inside a character: the partial bytes decode to U+FFFD.
    const ids = encode('日本');
    expect(decode(ids.slice(0, 1)).length).toBeGreaterThan(0);
  });

  it('counts empty text as zero tokens', () => {
    expect(countTokens('')).toBe(0);
    expect(encode('')).toEqual([]);
    expect(decode([])).toBe('');
  });
});
