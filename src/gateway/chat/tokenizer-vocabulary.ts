/**
 * A tiktoken vocabulary (gpt-tokenizer's `data/o200k_base.tiktoken`) in typed arrays: the bytes
 * of every rank and an open-addressing hash index from bytes to rank (~4 MB, outside the
 * JavaScript heap, never traced by the garbage collector), read from the rank file without
 * holding it whole.
 */
import { closeSync, openSync, readSync } from 'node:fs';

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
    // Tokens that start with a byte-order mark are never matched (see lookupPair, tokenizer-merge.ts).
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
