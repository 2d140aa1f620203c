import { createRequire } from 'node:module';
import { mergePiece } from './tokenizer-merge.js';
import { lookup, readVocabulary, type Vocabulary } from './tokenizer-vocabulary.js';

/**
 * o200k byte-pair encoding (GPT-4o's tokenizer), loaded on first use. The tables are needed as
 * soon as a stream ends without usage (a client that disconnects mid-stream: in production
 * within minutes), middle-out runs, a tokens-per-minute limit counts a prompt, or an embeddings
 * upstream omits counts.
 *
 * The vocabulary comes from gpt-tokenizer's `data/o200k_base.tiktoken` and the pre-tokenizing
 * regex from the same package; the tables are our own, in typed arrays (~4 MB, outside the
 * JavaScript heap, never traced by the garbage collector). gpt-tokenizer's own encoder keeps the
 * vocabulary as 200,000 strings plus a Map over them (~15 MB of heap), and loading its
 * generated module made V8 parse 2.2 MB of array literals (~26 MB of parser memory left
 * resident). Encoding follows gpt-tokenizer's `encode` token for token, including its handling
 * of byte-order marks inside a piece (checked against it in tokenizer.test.ts). Decoding joins
 * the tokens' bytes and reads them as UTF-8, so a cut inside a character gives U+FFFD (where
 * gpt-tokenizer held the bytes back for its next call).
 *
 * The tables are read in tokenizer-vocabulary.ts, and a piece that is not a token as a whole is
 * merged in tokenizer-merge.ts; this module splits text into pieces and looks each up.
 */

const require = createRequire(import.meta.url);

/** In a `u` regex a surrogate class matches only unpaired surrogates. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

class Tokenizer {
  private readonly scratch = Buffer.allocUnsafe(4096);

  constructor(
    private readonly vocab: Vocabulary,
    private readonly split: RegExp,
  ) {}

  /** Appends the rank of each token of `text` to `out` (when given); returns how many. */
  private run(text: string, out: number[] | null): number {
    const v = this.vocab;
    const split = this.split;
    let count = 0;
    split.lastIndex = 0;
    for (let m = split.exec(text); m !== null; m = split.exec(text)) {
      const piece = m[0];
      // A piece longer than the scratch buffer (a long run of spaces) gets one of its own.
      const src =
        piece.length * 3 > this.scratch.length ? Buffer.allocUnsafe(piece.length * 3) : this.scratch;
      // Most pieces are ASCII: their bytes are their char codes.
      let n = 0;
      while (n < piece.length) {
        const c = piece.charCodeAt(n);
        if (c >= 0x80) break;
        src[n++] = c;
      }
      let whole: number;
      if (n === piece.length) whole = lookup(v, src, 0, n);
      else {
        n = src.write(piece, 0, 'utf8');
        // A piece with a lone surrogate never equals a token as a whole: its bytes carry U+FFFD.
        whole = LONE_SURROGATE.test(piece) ? -1 : lookup(v, src, 0, n);
      }
      if (whole >= 0) {
        out?.push(whole);
        count++;
      } else count += mergePiece(v, src, n, out);
    }
    return count;
  }

  count(text: string): number {
    return this.run(text, null);
  }

  encode(text: string): number[] {
    const out: number[] = [];
    this.run(text, out);
    return out;
  }

  /** The text of the tokens; bytes that do not form whole UTF-8 characters become U+FFFD. */
  decode(tokens: number[]): string {
    const { bytes, start } = this.vocab;
    let size = 0;
    for (const t of tokens) size += start[t + 1]! - start[t]!;
    const out = Buffer.allocUnsafe(size);
    let at = 0;
    for (const t of tokens) {
      if (!(t >= 0 && t < start.length - 1)) throw new Error(`tokenizer: no token ${t}`);
      out.set(bytes.subarray(start[t]!, start[t + 1]!), at);
      at += start[t + 1]! - start[t]!;
    }
    return out.toString('utf8');
  }
}

let tokenizer: Tokenizer | undefined;
const load = (): Tokenizer => {
  if (!tokenizer) {
    const { O200K_TOKEN_SPLIT_REGEX } = require('gpt-tokenizer/encodingParams/constants') as {
      O200K_TOKEN_SPLIT_REGEX: RegExp;
    };
    const vocab = readVocabulary(require.resolve('gpt-tokenizer/data/o200k_base.tiktoken'));
    tokenizer = new Tokenizer(vocab, O200K_TOKEN_SPLIT_REGEX);
  }
  return tokenizer;
};

// Special-token text typed by users (`<|endoftext|>`) is ordinary text here, as it was with
// gpt-tokenizer's `disallowedSpecial: new Set()`: counted, never rejected.
export const countTokens = (text: string): number => (text.length === 0 ? 0 : load().count(text));
export const encode = (text: string): number[] => load().encode(text);
export const decode = (tokens: number[]): string => load().decode(tokens);
