import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * The o200k tokenizer, loaded on first use: its tables hold ~15 MB, and most requests never
 * need them (upstreams report usage; quota reservations use a cheap bound). They are needed as
 * soon as a stream ends without usage (a client that disconnects mid-stream), middle-out runs,
 * or an embeddings upstream omits counts.
 *
 * The ranks are read from gpt-tokenizer's `.tiktoken` data file rather than its generated
 * module (`gpt-tokenizer/encoding/o200k_base`): that module is 2.2 MB of JavaScript array
 * literals, and V8 parsing it left ~26 MB of malloc'd parser memory resident and kept its
 * source text alive, on top of the tables themselves. The table built here is the same, entry
 * for entry (checked in tokenizer.test.ts), and goes through the library's own `GptEncoding`.
 */
interface Encoding {
  countTokens(text: string, opts?: { disallowedSpecial?: Set<string> }): number;
  encode(text: string, opts?: { disallowedSpecial?: Set<string> }): number[];
  decode(tokens: number[]): string;
  setMergeCacheSize(size: number): void;
}

/**
 * gpt-tokenizer memoizes the merge of each distinct piece of text (roughly a word), up to
 * 100,000 entries by default: ~35 MB once a varied stream of prompts has gone through it, a
 * slow climb of a long-running process's memory. Counting this repository's docs and sources is
 * as fast with 5,000 entries as with 100,000 (and twice as slow with none); 10,000 hold ~3.5 MB.
 */
const MERGE_CACHE_ENTRIES = 10_000;

interface GptEncodingModule {
  GptEncoding: {
    getEncodingApi(name: string, ranks: () => Array<string | number[]>): Encoding;
  };
}

const require = createRequire(import.meta.url);

/** base64 alphabet -> 6-bit value; -1 for anything else ('=' padding ends a token). */
const BASE64 = new Int8Array(256).fill(-1);
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries())
  BASE64[c.charCodeAt(0)] = i;
const SPACE = 32;
const LF = 10;

/**
 * A tiktoken rank file (`<base64 token> <rank>` per line) as gpt-tokenizer's rank table: at each
 * rank the token's text when its bytes are valid UTF-8 that round-trips, else its bytes. Parsed
 * straight from the file's bytes through two scratch buffers: the only objects made are the
 * 200,000 kept entries (per-token Buffers would leave ~40 MB of garbage behind at load).
 */
export function readTiktokenRanks(file: string): Array<string | number[]> {
  const data = readFileSync(file);
  // The longest o200k token is 128 bytes; a longer one would be a different file format.
  const bytes = Buffer.allocUnsafe(1024);
  const check = Buffer.allocUnsafe(4096);
  const ranks: Array<string | number[]> = [];
  let i = 0;
  while (i < data.length) {
    // base64 token up to the space
    let n = 0;
    let acc = 0;
    let bits = 0;
    for (; i < data.length && data[i] !== SPACE && data[i] !== LF; i++) {
      const v = BASE64[data[i]!]!;
      if (v < 0) continue;
      acc = (acc << 6) | v;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        if (n === bytes.length) throw new Error(`${file}: token longer than ${bytes.length} bytes`);
        bytes[n++] = (acc >> bits) & 0xff;
      }
    }
    // decimal rank up to the end of the line
    let rank = 0;
    let digits = 0;
    if (data[i] === SPACE) i++;
    for (; i < data.length && data[i] !== LF; i++) {
      const d = data[i]! - 48;
      if (d >= 0 && d <= 9) {
        rank = rank * 10 + d;
        digits++;
      }
    }
    i++;
    if (n === 0 || digits === 0) continue;
    ranks[rank] = asText(bytes, n, check) ?? [...bytes.subarray(0, n)];
  }
  return ranks;
}

/** The token's text when its `n` bytes are UTF-8 that decodes and re-encodes to the same bytes. */
function asText(bytes: Buffer, n: number, check: Buffer): string | undefined {
  // gpt-tokenizer keeps tokens that start with a byte-order mark as bytes (a decoder drops it).
  if (n >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return undefined;
  // toString replaces invalid sequences with U+FFFD, so they fail the round trip below.
  const s = bytes.toString('utf8', 0, n);
  if (check.write(s, 0, 'utf8') !== n) return undefined;
  return check.compare(bytes, 0, n, 0, n) === 0 ? s : undefined;
}

let encoding: Encoding | undefined;
const load = (): Encoding => {
  if (!encoding) {
    const { GptEncoding } = require('gpt-tokenizer/GptEncoding') as GptEncodingModule;
    const ranks = readTiktokenRanks(require.resolve('gpt-tokenizer/data/o200k_base.tiktoken'));
    encoding = GptEncoding.getEncodingApi('o200k_base', () => ranks);
    encoding.setMergeCacheSize(MERGE_CACHE_ENTRIES);
  }
  return encoding;
};

// Special-token text typed by users is ordinary text for counting purposes; never throw on it.
const PLAIN = { disallowedSpecial: new Set<string>() };

export const countTokens = (text: string): number =>
  text.length === 0 ? 0 : load().countTokens(text, PLAIN);
export const encode = (text: string): number[] => load().encode(text, PLAIN);
export const decode = (tokens: number[]): string => load().decode(tokens);
