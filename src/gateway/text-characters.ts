import { badRequest } from './errors.js';

/**
 * Bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069): they reorder what is
 * displayed after them, so "abc\u202Etxt.exe" shows as "abcexe.txt". Refused in every text field.
 */
const REORDERING = /[\u202A-\u202E\u2066-\u2069]/u;

/**
 * One-line fields (catalog name, version, author, each tag; user display names; channel names):
 * control characters (line breaks and tabs included, and the line and paragraph separators
 * U+2028/U+2029), lone surrogates, invisible format characters (zero-width spaces, bidi marks,
 * soft hyphens, word joiner and invisible operators, byte order mark, Mongolian vowel separator,
 * musical beam and slur controls, tag characters), and letters or marks that display as nothing:
 * the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), the Khmer inherent vowels U+17B4/U+17B5
 * (which Unicode advises against using at all) and the musical null notehead U+1D159. A name of
 * such characters alone looks empty, and one inside a name makes a look-alike of another.
 */
const ONE_LINE =
  /[\p{Cc}\p{Cs}\u2028\u2029\u115F\u1160\u3164\uFFA0\u17B4\u17B5\u{1D159}]|(?![\u200C\u200D])\p{Cf}/u;
/**
 * The joiners U+200C, U+200D and the combining grapheme joiner U+034F are the exception between
 * two non-ASCII characters, where emoji sequences, Persian or Indic spelling and Hebrew vowel
 * points need them; inside ASCII text they only make a look-alike of another name.
 */
const JOINERS = '\u200C\u200D\u034F';
const STRAY_JOINER = new RegExp(
  `(?<![^\\x00-\\x7F\\s${JOINERS}])[${JOINERS}]|[${JOINERS}](?![^\\x00-\\x7F\\s${JOINERS}])`,
  'u',
);
/**
 * Variation selectors (U+FE00-U+FE0F, U+E0100-U+E01EF, Mongolian U+180B-U+180D, U+180F) choose a
 * glyph for the character before them: an emoji, an ideograph, a Mongolian letter, or a digit,
 * `#` or `*` of a keycap. Anywhere else (at the start, after a space, an ASCII letter, a joiner
 * or another selector) they select nothing and display as nothing.
 */
const SELECTORS = '\uFE00-\uFE0F\u{E0100}-\u{E01EF}\u180B-\u180D\u180F';
const STRAY_SELECTOR = new RegExp(`(?<![0-9#*]|[^\\x00-\\x7F\\s${JOINERS}${SELECTORS}])[${SELECTORS}]`, 'u');
/**
 * The Braille blank U+2800 is the space of Braille text, so it stays between two other Braille
 * patterns; anywhere else it is a blank that passes for a letter.
 */
const STRAY_BLANK = /(?<![\u2801-\u28FF])\u2800|\u2800(?![\u2801-\u28FF])/u;

/**
 * Prose (descriptions): ordinary text with tabs and line breaks; no other controls, no lone
 * surrogates, and no tag characters (U+E0000-U+E007F): invisible copies of ASCII that a language
 * model reading the catalog still reads, so they can hide instructions to it in plain sight.
 */
const PROSE = /[\p{Cs}\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u{E0000}-\u{E007F}]/u;

const codePoint = (ch: string) => `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

function refuse(field: string, found: RegExpExecArray | null): void {
  if (found)
    throw badRequest(
      `${field}: must not contain control, invisible or bidi override characters (found ${codePoint(found[0])})`,
      field,
    );
}

/** The first character a one-line text must not hold (the rules above), or null. */
function oneLineFault(text: string): RegExpExecArray | null {
  return (
    ONE_LINE.exec(text) ?? STRAY_JOINER.exec(text) ?? STRAY_SELECTOR.exec(text) ?? STRAY_BLANK.exec(text)
  );
}

/** Throws a 400 naming `field` when a one-line text holds an invisible or reordering character. */
export function checkOneLine(field: string, text: string): void {
  refuse(field, oneLineFault(text));
}

/** Throws a 400 naming `field` when prose holds a reordering control, a control or tag character, or a lone surrogate. */
export function checkProse(field: string, text: string): void {
  refuse(field, REORDERING.exec(text) ?? PROSE.exec(text));
}
