/** Texts for tests of token counting: seeded, never repeating, and a metered exact counter. */
import { countTextTokens } from '../../src/gateway/chat/tokens.js';

/** An exact counter that records how many characters it was given. */
export function metered() {
  const m = {
    chars: 0,
    count: (t: string) => {
      m.chars += t.length;
      return countTextTokens(t);
    },
  };
  return m;
}

/** A seeded uniform [0, 1) generator (mulberry32), so sampled estimates are the same every run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Text that never repeats: English-like words, or (`symbols`) printable symbols (~0.7 tokens a character). */
export function text(chars: number, symbols: boolean, seed = 1): string {
  const words = ['gateway', 'token', 'the', 'upstream', 'counts', 'a', 'model', 'request', 'of', 'billing'];
  const r = seeded(seed);
  const out: string[] = [];
  let n = 0;
  while (n < chars) {
    const piece = symbols
      ? String.fromCharCode(33 + Math.floor(r() * 90))
      : `${words[Math.floor(r() * words.length)]}${r() < 0.1 ? '.\n' : ' '}`;
    out.push(piece);
    n += piece.length;
  }
  return out.join('').slice(0, chars);
}
