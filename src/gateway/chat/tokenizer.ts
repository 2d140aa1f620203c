import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { TextDecoder } from 'node:util';

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

/**
 * A tiktoken rank file (`<base64 token> <rank>` per line) as gpt-tokenizer's rank table: at each
 * rank the token's text when its bytes are valid UTF-8 that round-trips, else its bytes.
 */
export function readTiktokenRanks(file: string): Array<string | number[]> {
  const text = readFileSync(file, 'latin1');
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const ranks: Array<string | number[]> = [];
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const space = text.indexOf(' ', start);
    if (space > start && space < end) {
      const bytes = Buffer.from(text.slice(start, space), 'base64');
      ranks[Number(text.slice(space + 1, end))] = asText(bytes, utf8) ?? [...bytes];
    }
    start = end + 1;
  }
  return ranks;
}

function asText(bytes: Buffer, utf8: TextDecoder): string | undefined {
  try {
    const s = utf8.decode(bytes);
    // The decoder drops a leading byte-order mark; such tokens stay bytes.
    return Buffer.byteLength(s, 'utf8') === bytes.length && Buffer.from(s, 'utf8').equals(bytes)
      ? s
      : undefined;
  } catch {
    return undefined;
  }
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
