import { badRequest } from '../gateway/errors.js';
import { charLength } from '../store/column-bounds.js';
import { foldSearchText } from '../store/search-fold.js';

export const MAX_KEYWORD_LENGTH = 100;
const MAX_WORDS = 10;

export interface SearchTerms {
  /** The whole keyword folded like the stored text, words joined by one space (exact and prefix name matches). */
  phrase: string;
  /** Distinct folded words; every one must match somewhere. */
  words: string[];
}

export function parseKeyword(keyword: string | undefined): SearchTerms {
  if (keyword === undefined) throw badRequest('keyword: is required', 'keyword');
  if (charLength(keyword) > MAX_KEYWORD_LENGTH)
    throw badRequest(`keyword: must be at most ${MAX_KEYWORD_LENGTH} characters`, 'keyword');
  // The same fold as the stored text (it also collapses whitespace), so both sides compare alike.
  const phrase = foldSearchText(keyword);
  if (phrase === '') throw badRequest('keyword: must not be empty', 'keyword');
  const words = [...new Set(phrase.split(' '))];
  if (words.length > MAX_WORDS) throw badRequest(`keyword: at most ${MAX_WORDS} words`, 'keyword');
  return { phrase, words };
}
