/**
 * Byte-pair merging of one piece that is not a token as a whole, as gpt-tokenizer's `encode`
 * merges it: by scanning for a short piece, through a heap a window at a time for a long one.
 */
import { lookup, type Vocabulary } from './tokenizer-vocabulary.js';

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
export function mergePiece(v: Vocabulary, src: Uint8Array, n: number, out: number[] | null): number {
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
