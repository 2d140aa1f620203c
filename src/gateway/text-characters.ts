import { badRequest } from './errors.js';

/**
 * Bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069): they reorder what is
 * displayed after them, so "abc\u202Etxt.exe" shows as "abcexe.txt". Refused in every text field.
 */
const REORDERING = /[\u202A-\u202E\u2066-\u2069]/u;

/**
 * One-line fields (name, version, author, each tag): control characters (line breaks and tabs
 * included), lone surrogates, invisible format characters (zero-width spaces, bidi marks, soft
 * hyphens, tag characters), and the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0): letters
 * that display as nothing, so a name of fillers alone looks empty. The zero-width joiners
 * U+200C and U+200D are the exception between two non-ASCII characters, where emoji sequences
 * and Persian or Indic spelling need them; inside ASCII text they only make a look-alike of
 * another name.
 */
const ONE_LINE = /[\p{Cc}\p{Cs}\u115F\u1160\u3164\uFFA0]|(?![\u200C\u200D])\p{Cf}/u;
const STRAY_JOINER =
  /(?<![^\x00-\x7F\s\u200C\u200D])[\u200C\u200D]|[\u200C\u200D](?![^\x00-\x7F\s\u200C\u200D])/u;

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

/** Throws a 400 naming `field` when a one-line text holds an invisible or reordering character. */
export function checkOneLine(field: string, text: string): void {
  refuse(field, ONE_LINE.exec(text) ?? STRAY_JOINER.exec(text));
}

/** Throws a 400 naming `field` when prose holds a reordering control, a control or tag character, or a lone surrogate. */
export function checkProse(field: string, text: string): void {
  refuse(field, REORDERING.exec(text) ?? PROSE.exec(text));
}
