import { describe, expect, it } from 'vitest';
import { TtlCache } from './ttl-cache.js';

describe('TtlCache', () => {
  it('a full cache evicts the least recently written key; rewriting a key evicts nothing', () => {
    const c = new TtlCache<string, number>(60_000, 3);
    c.set('a', 1);
    c.set('b', 2);
    c.set('c', 3);
    c.set('a', 10); // rewritten: now the newest, and nothing is evicted
    expect([c.get('a'), c.get('b'), c.get('c')]).toEqual([10, 2, 3]);
    c.set('d', 4); // evicts b, the least recently written
    expect([c.get('a'), c.get('b'), c.get('c'), c.get('d')]).toEqual([10, undefined, 3, 4]);
  });

  it('entries expire after the TTL; a TTL of 0 caches nothing', async () => {
    const c = new TtlCache<string, number>(30);
    c.set('a', 1);
    expect(c.entry('a')?.value).toBe(1);
    await new Promise((r) => setTimeout(r, 40));
    expect(c.get('a')).toBeUndefined();
    const off = new TtlCache<string, number>(0);
    off.set('a', 1);
    expect(off.get('a')).toBeUndefined();
  });
});
