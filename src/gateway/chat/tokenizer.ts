import { closeSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';

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
 */

const require = createRequire(import.meta.url);

/** A tiktoken vocabulary: the bytes of every rank, and a hash index from bytes to rank. */
export interface Vocabulary {
  /** Every token's bytes, concatenated in rank order. */
  readonly bytes: Uint8Array;
  /** Rank r spans bytes[start[r] .. start[r + 1]); an unused rank spans nothing. */
  readonly start: Uint32Array;
  /** Open addressing: (rank + 1) of the token whose bytes hash there, 0 for empty. */
  readonly index: Int32Array;
}

/** base64 alphabet -> 6-bit value; -1 for anything else (the '=' padding is skipped). */
const BASE64 = new Int8Array(256).fill(-1);
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries())
  BASE64[c.charCodeAt(0)] = i;
const SPACE = 32;
const LF = 10;

/**
 * Calls `line` with each line of a file, read in 64 KB chunks: a whole-file buffer of a few MB
 * would be malloc'd, mmap-ed by glibc and, once freed, raise glibc's mmap threshold to its size,
 * after which the next allocations of that size stay in the heap for good.
 */
function eachLine(file: string, line: (buf: Buffer, from: number, to: number) => void): void {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(64 * 1024);
    let have = 0;
    for (;;) {
      const got = readSync(fd, buf, have, buf.length - have, null);
      const end = have + got;
      let from = 0;
      for (let i = 0; i < end; i++) {
        if (buf[i] !== LF) continue;
        line(buf, from, i);
        from = i + 1;
      }
      if (got === 0) {
        if (from < end) line(buf, from, end);
        return;
      }
      if (from === 0 && end === buf.length) throw new Error(`${file}: line longer than ${buf.length} bytes`);
      buf.copy(buf, 0, from, end);
      have = end - from;
    }
  } finally {
    closeSync(fd);
  }
}

/** The token's base64 text in buf[from..space) and its decimal rank after the space, or null. */
function parseLine(buf: Buffer, from: number, to: number): { space: number; rank: number } | null {
  let space = from;
  while (space < to && buf[space] !== SPACE) space++;
  if (space === from || space >= to - 1) return null;
  let rank = 0;
  for (let i = space + 1; i < to; i++) {
    const d = buf[i]! - 48;
    if (d < 0 || d > 9) {
      if (buf[i] === 13 && i === to - 1) break; // CRLF
      return null;
    }
    rank = rank * 10 + d;
  }
  return { space, rank };
}

/** Decodes the base64 in buf[from..to) into out at `at`; returns the number of bytes. */
function decodeBase64(buf: Buffer, from: number, to: number, out: Uint8Array | null, at: number): number {
  let n = 0;
  let acc = 0;
  let bits = 0;
  for (let i = from; i < to; i++) {
    const v = BASE64[buf[i]!]!;
    if (v < 0) continue;
    acc = ((acc << 6) | v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (out) out[at + n] = (acc >> bits) & 0xff;
      n++;
    }
  }
  return n;
}

/**
 * Reads a tiktoken rank file (`<base64 token> <rank>` per line) into a Vocabulary, in two passes
 * over the file (sizes, then bytes) so the only large allocations are the tables it keeps.
 */
export function readVocabulary(file: string): Vocabulary {
  const lengths: number[] = [];
  let total = 0;
  eachLine(file, (buf, from, to) => {
    const p = parseLine(buf, from, to);
    if (!p) return;
    const n = decodeBase64(buf, from, p.space, null, 0);
    total += n - (lengths[p.rank] ?? 0);
    lengths[p.rank] = n;
  });
  const start = new Uint32Array(lengths.length + 1);
  for (let r = 0; r < lengths.length; r++) start[r + 1] = start[r]! + (lengths[r] ?? 0);
  const bytes = new Uint8Array(total);
  eachLine(file, (buf, from, to) => {
    const p = parseLine(buf, from, to);
    if (p) decodeBase64(buf, from, p.space, bytes, start[p.rank]!);
  });
  const vocab = { bytes, start, index: new Int32Array(tableSize(lengths.length)) };
  for (let r = 0; r < lengths.length; r++) {
    const s = start[r]!;
    const e = start[r + 1]!;
    // Tokens that start with a byte-order mark are never matched (see lookupPair).
    if (e > s && !(e - s >= 3 && bytes[s] === 0xef && bytes[s + 1] === 0xbb && bytes[s + 2] === 0xbf))
      insert(vocab, r);
  }
  return vocab;
}

function tableSize(n: number): number {
  let size = 1;
  while (size < n * 2.5) size <<= 1;
  return size;
}

/** FNV-1a over bytes[from..to). */
function hash(bytes: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

function insert(v: Vocabulary, rank: number): void {
  const mask = v.index.length - 1;
  let slot = hash(v.bytes, v.start[rank]!, v.start[rank + 1]!) & mask;
  while (v.index[slot] !== 0) slot = (slot + 1) & mask;
  v.index[slot] = rank + 1;
}

/** The rank of the token whose bytes are exactly src[from..to), or -1. */
export function lookup(v: Vocabulary, src: Uint8Array, from: number, to: number): number {
  const n = to - from;
  const mask = v.index.length - 1;
  for (let slot = hash(src, from, to) & mask; ; slot = (slot + 1) & mask) {
    const entry = v.index[slot]!;
    if (entry === 0) return -1;
    const s = v.start[entry - 1]!;
    if (v.start[entry]! - s !== n) continue;
    let k = 0;
    while (k < n && v.bytes[s + k] === src[from + k]) k++;
    if (k === n) return entry - 1;
  }
}

/**
 * The rank gpt-tokenizer finds for a run of bytes inside a piece: valid UTF-8 is decoded with a
 * decoder that drops a leading byte-order mark and then looked up as text, so such a run maps to
 * the token without the mark (and tokens that start with one are never found); other bytes are
 * looked up as they are.
 */
function lookupPair(v: Vocabulary, src: Uint8Array, from: number, to: number): number {
  if (to - from >= 3 && src[from] === 0xef && src[from + 1] === 0xbb && src[from + 2] === 0xbf) {
    if (validUtf8(src, from, to)) return to - from === 3 ? -1 : lookup(v, src, from + 3, to);
  }
  return lookup(v, src, from, to);
}

/** Strict UTF-8: no overlong forms, surrogates or code points above U+10FFFF. */
function validUtf8(b: Uint8Array, from: number, to: number): boolean {
  let i = from;
  while (i < to) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    let n: number;
    let cp: number;
    if (c >= 0xc2 && c <= 0xdf) {
      n = 1;
      cp = c & 0x1f;
    } else if ((c & 0xf0) === 0xe0) {
      n = 2;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      cp = c & 0x07;
    } else return false;
    if (i + n >= to) return false;
    for (let k = 1; k <= n; k++) {
      const d = b[i + k]!;
      if ((d & 0xc0) !== 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    if (
      (n === 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
      (n === 3 && (cp < 0x10000 || cp > 0x10ffff))
    )
      return false;
    i += n + 1;
  }
  return true;
}

/** Pieces up to this many bytes merge by scanning (quadratic, fastest when short). */
const SHORT_PIECE = 256;
/**
 * Longer pieces (a run of letters without a space: base64, a minified line, a repeated
 * character) merge through a heap, a window of this many bytes at a time, so that neither time
 * nor scratch memory depends on the square of a piece's length: a megabyte of `x` typed into a
 * prompt took the scanning merge hours (10^12 steps), blocking the event loop of every request.
 * Tokens never span a window boundary (placed at a character start), so a count can differ
 * from the exact one by about one token per 64 KiB of such a piece.
 */
const WINDOW = 64 * 1024;

/**
 * Byte-pair merging of one piece (src[0..n)) that is not a token as a whole: start from single
 * bytes and keep merging the adjacent pair whose concatenation has the lowest rank (the leftmost
 * on a tie) until no pair is a token. Appends the resulting ranks to `out` (when given) and
 * returns how many there are.
 */
function mergePiece(v: Vocabulary, src: Uint8Array, n: number, out: number[] | null): number {
  if (n <= SHORT_PIECE) return mergeShort(v, src, n, out);
  let count = 0;
  for (let from = 0; from < n; ) {
    let to = Math.min(n, from + WINDOW);
    // Not inside a UTF-8 character: back up over continuation bytes.
    while (to < n && to > from + 1 && (src[to]! & 0xc0) === 0x80) to--;
    count += mergeLong(v, src, from, to, out);
    from = to;
  }
  return count;
}

function mergeShort(v: Vocabulary, src: Uint8Array, n: number, out: number[] | null): number {
  const starts: number[] = [];
  const ranks: number[] = [];
  const pairRank = (i: number): number => {
    const end = starts[i + 2];
    if (end === undefined) return Number.POSITIVE_INFINITY;
    const r = lookupPair(v, src, starts[i]!, end);
    return r < 0 ? Number.POSITIVE_INFINITY : r;
  };
  for (let i = 0; i <= n; i++) starts.push(i);
  for (let i = 0; i <= n; i++) ranks.push(i < n - 1 ? pairRank(i) : Number.POSITIVE_INFINITY);
  while (starts.length > 1) {
    let lowest = Number.POSITIVE_INFINITY;
    let at = -1;
    for (let i = 0; i < ranks.length - 1; i++) {
      if (ranks[i]! < lowest) {
        lowest = ranks[i]!;
        at = i;
      }
    }
    if (at === -1) break;
    starts.splice(at + 1, 1);
    ranks.splice(at, 1);
    ranks[at] = pairRank(at);
    if (at > 0) ranks[at - 1] = pairRank(at - 1);
  }
  if (out)
    for (let i = 0; i < starts.length - 1; i++) {
      const r = lookupPair(v, src, starts[i]!, starts[i + 1]!);
      if (r < 0) throw new Error('tokenizer: a byte has no token');
      out.push(r);
    }
  return starts.length - 1;
}

/**
 * The same merge over src[from..to) (at most WINDOW bytes) in O(n log n): the parts form a linked
 * list (a part is named by its first byte's offset), and a binary heap holds candidate pairs keyed by (rank, offset),
 * so the lowest rank, leftmost on a tie, comes first. Entries are not removed when a merge
 * changes a pair: a popped entry counts only if its left part is still alive and its pair still
 * has the rank it was pushed with (a token's rank names its bytes, so a changed pair cannot).
 */
function mergeLong(v: Vocabulary, src: Uint8Array, from: number, to: number, out: number[] | null): number {
  const n = to - from;
  const next = new Int32Array(n);
  const prev = new Int32Array(n);
  const dead = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    next[i] = i + 1;
    prev[i] = i - 1;
  }
  // Entries are rank * WINDOW + offset (exact in a double: ranks < 2^18, offsets < 2^16), so one
  // comparison orders by rank, then leftmost. Every merge pushes at most two: < 3n in all.
  const heap = new Float64Array(3 * n);
  let size = 0;
  const push = (rank: number, at: number) => {
    const key = rank * WINDOW + at;
    let i = size++;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (heap[up]! <= key) break;
      heap[i] = heap[up]!;
      i = up;
    }
    heap[i] = key;
  };
  const pop = (): number => {
    const top = heap[0]!;
    const key = heap[--size]!;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= size) break;
      if (c + 1 < size && heap[c + 1]! < heap[c]!) c++;
      if (heap[c]! >= key) break;
      heap[i] = heap[c]!;
      i = c;
    }
    heap[i] = key;
    return top;
  };
  /** Rank of the pair starting at part `i` (its part and the next), or -1. */
  const pair = (i: number): number => {
    const j = next[i]!;
    if (j >= n) return -1;
    return lookupPair(v, src, from + i, from + next[j]!);
  };
  for (let i = 0; i < n - 1; i++) {
    const r = pair(i);
    if (r >= 0) push(r, i);
  }
  let parts = n;
  while (size > 0) {
    const key = pop();
    const r = Math.floor(key / WINDOW);
    const i = key - r * WINDOW;
    if (dead[i] || pair(i) !== r) continue;
    const j = next[i]!;
    dead[j] = 1;
    next[i] = next[j]!;
    if (next[i]! < n) prev[next[i]!] = i;
    parts--;
    const left = prev[i]!;
    if (left >= 0) {
      const lr = pair(left);
      if (lr >= 0) push(lr, left);
    }
    const rr = pair(i);
    if (rr >= 0) push(rr, i);
  }
  if (out)
    for (let i = 0; i < n; i = next[i]!) {
      const r = lookupPair(v, src, from + i, from + next[i]!);
      if (r < 0) throw new Error('tokenizer: a byte has no token');
      out.push(r);
    }
  return parts;
}

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
