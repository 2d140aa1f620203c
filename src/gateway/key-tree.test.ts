import { describe, expect, it } from 'vitest';
import { KeyTree } from './key-tree.js';

describe('KeyTree', () => {
  it('keeps one leaf per path of three or four keys, counting leaves', () => {
    const t = new KeyTree<string>();
    expect(t.get('a', 'b', 1)).toBeUndefined();
    t.set('x', 'a', 'b', 1);
    t.set('y', 'a', 'b', 2);
    t.set('z', 'a', 'b', 'c', 'd');
    t.set('x2', 'a', 'b', 1);
    expect([t.get('a', 'b', 1), t.get('a', 'b', 2), t.get('a', 'b', 'c', 'd')]).toEqual(['x2', 'y', 'z']);
    expect(t.get('a', 'b', 'c', 'e')).toBeUndefined();
    expect(t.get('a', 'c', 1)).toBeUndefined();
    expect(t.size).toBe(3);
  });

  it('tells keys apart that a joined string would not (a separator inside a key)', () => {
    const t = new KeyTree<number>();
    t.set(1, 'a b', 'c', 'd');
    t.set(2, 'a', 'b c', 'd');
    expect([t.get('a b', 'c', 'd'), t.get('a', 'b c', 'd')]).toEqual([1, 2]);
  });

  it('take makes a value once per path and, past its limit, makes it without keeping it', () => {
    const t = new KeyTree<string>(2);
    let made = 0;
    const make = (a: string, b: string) => {
      made++;
      return `${a}/${b}`;
    };
    expect([t.take(make, 'p', 'm', true), t.take(make, 'p', 'm', true)]).toEqual(['p/m', 'p/m']);
    expect(made).toBe(1);
    t.take(make, 'p', 'n', true);
    expect(t.take(make, 'q', 'm', true)).toBe('q/m'); // third path: over the limit
    t.take(make, 'q', 'm', true);
    expect([made, t.size]).toEqual([4, 2]);
  });
});
