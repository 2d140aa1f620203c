import { describe, expect, it } from 'vitest';
import { checkOneLine, checkProse } from './text-characters.js';

const message = (check: () => void): string | undefined => {
  try {
    check();
  } catch (err) {
    return (err as Error).message;
  }
  return undefined;
};
const oneLine = (text: string) => message(() => checkOneLine('name', text));

describe('one-line text', () => {
  it('refuses characters that display as nothing, naming the field and the first one found', () => {
    for (const [text, found] of [
      ['a\u2800b', 'U+2800'], // Braille pattern blank beside Latin letters
      ['\u2800', 'U+2800'], // alone: a name that looks empty
      ['\u2800\u2800', 'U+2800'],
      ['Oll\u034Fama', 'U+034F'], // combining grapheme joiner inside ASCII
      ['\u034F', 'U+034F'],
      ['a\u17B4b', 'U+17B4'], // Khmer inherent vowels: invisible, "not recommended" by Unicode
      ['a\u17B5b', 'U+17B5'],
      ['a\u180Eb', 'U+180E'], // Mongolian vowel separator
      ['a\u2062b', 'U+2062'], // invisible times
      ['a\u2064b', 'U+2064'], // invisible plus
      ['a\u206Ab', 'U+206A'], // deprecated format characters
      ['a\u206Fb', 'U+206F'],
      ['\uFEFFabc', 'U+FEFF'], // byte order mark / zero-width no-break space
      ['a\u061Cb', 'U+061C'], // Arabic letter mark
      ['a\u200Eb', 'U+200E'],
      ['a\u202Db', 'U+202D'],
      ['a\u2066b', 'U+2066'],
      ['a\u{1D159}b', 'U+1D159'], // musical null notehead
      ['a\u{1D173}b', 'U+1D173'], // musical begin beam
      ['a\u{1D17A}b', 'U+1D17A'],
      ['a\u2028b', 'U+2028'], // line separator
      ['a\u2029b', 'U+2029'], // paragraph separator
      ['\uFE0F', 'U+FE0F'], // variation selector with nothing to select
      ['Oll\uFE0Fama', 'U+FE0F'], // after an ASCII letter: an invisible look-alike
      ['a \uFE0E', 'U+FE0E'], // after a space
      ['\u{E0100}x', 'U+E0100'], // ideographic variation selector at the start
      ['\u6F22\uFE0F\uFE0F', 'U+FE0F'], // a second selector selects nothing
      ['a\u180Bb', 'U+180B'], // Mongolian free variation selector after Latin
    ] as const)
      expect(oneLine(text), JSON.stringify(text)).toBe(
        `name: must not contain control, invisible or bidi override characters (found ${found})`,
      );
  });

  it('keeps what scripts and emoji need', () => {
    for (const text of [
      '\u2813\u2811\u2807\u2807\u2815\u2800\u283A\u2815\u2817\u2807\u2819', // "hello world" in Braille
      '\u05D0\u05B8\u034F\u05B7', // Hebrew: a grapheme joiner keeps two vowel points in order
      '\u2764\uFE0F', // red heart, emoji presentation
      '1\uFE0F\u20E3 #\uFE0F\u20E3', // keycaps
      '\u{1F441}\uFE0F\u200D\u{1F5E8}\uFE0F', // eye in speech bubble: selectors and a joiner
      '\u8FBB\u{E0100}', // an ideographic variation sequence
      '\u1820\u180B', // Mongolian letter with a free variation selector
      '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}',
      'می\u200Cخواهم',
      'Ollama 3',
    ])
      expect(oneLine(text), JSON.stringify(text)).toBeUndefined();
  });

  it('prose keeps them: Braille blanks, joiners and selectors are text there', () => {
    expect(message(() => checkProse('description', 'a\u2800b \u034F \uFE0F\u2028'))).toBeUndefined();
  });
});
