import { describe, expect, it } from 'vitest';
import { foldSearchText, searchColumnsOf } from './search-fold.js';

describe('foldSearchText', () => {
  it('folds case per character, final sigma, dotted I and sharp s included', () => {
    expect(foldSearchText('ΟΔΟΣ Navigator')).toBe('οδοσ navigator');
    expect(foldSearchText('οδος')).toBe('οδοσ');
    expect(foldSearchText('İSTANBUL ıspanak')).toBe('istanbul ispanak');
    expect(foldSearchText('Straße STRASSE ẞ')).toBe('strasse strasse ss');
  });

  it('drops the accents of Latin and Greek letters only, and compatibility forms', () => {
    expect(foldSearchText('Café Cafe\u0301 Οδός ΐ')).toBe('cafe cafe οδοσ ι');
    expect(foldSearchText('Мой Ёлка')).toBe('мой ёлка');
    expect(foldSearchText('ＡＢＣ ﬁle ²')).toBe('abc file 2');
    expect(foldSearchText('が')).toBe('が');
  });

  it('drops default-ignorable characters (soft hyphen, zero-width characters, selectors, BOM)', () => {
    expect(foldSearchText('oll\u00ADama\u200B \uFEFFtool\u2060s')).toBe('ollama tools');
    expect(foldSearchText('\u0645\u06CC\u200C\u062E\u0648\u0627\u0645')).toBe(
      foldSearchText('\u0645\u06CC\u062E\u0648\u0627\u0645'),
    );
    expect(foldSearchText('\u2764\uFE0F')).toBe('\u2764');
    expect(foldSearchText('\u200B\u00AD')).toBe('');
  });

  it('collapses whitespace and is idempotent', () => {
    expect(foldSearchText('  a\t\nB \u00A0 c  ')).toBe('a b c');
    for (const s of ['ΟΔΟΣ', 'İ', 'ß', 'ᾳ', 'Ǆ', 'ŉ', '\u1E9E', 'ﷺ', '👨‍👩‍👧'])
      expect(foldSearchText(foldSearchText(s)), s).toBe(foldSearchText(s));
  });

  it('folds ASCII text (its fast path) as the full fold does', () => {
    for (let c = 0; c < 128; c++) {
      const s = `x${String.fromCharCode(c)}Y`;
      // A non-ASCII letter in front takes the full path; it folds to "e" and changes nothing else.
      expect(foldSearchText(`É${s}`), `U+${c.toString(16)}`).toBe(`e${foldSearchText(s)}`);
    }
  });
});

describe('searchColumnsOf', () => {
  it('folds only the searched fields present', () => {
    expect(searchColumnsOf({ name: 'ΟΔΟΣ', tags: 'A,B' })).toEqual({
      search_name: 'οδοσ',
      search_tags: 'a,b',
    });
    expect(searchColumnsOf({})).toEqual({});
  });
});
