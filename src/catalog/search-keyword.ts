import { badRequest } from '../gateway/errors.js';
import { charLength } from '../store/column-bounds.js';

export const MAX_KEYWORD_LENGTH = 100;
const MAX_WORDS = 10;

export interface SearchTerms {
  /** The whole keyword, lower-cased, words joined by one space (for exact and prefix name matches). */
  phrase: string;
  /** Distinct lower-cased words; every one must match somewhere. */
  words: string[];
}

export function parseKeyword(keyword: string | undefined): SearchTerms {
  if (keyword === undefined) throw badRequest('keyword: is required', 'keyword');
  if (charLength(keyword) > MAX_KEYWORD_LENGTH)
    throw badRequest(`keyword: must be at most ${MAX_KEYWORD_LENGTH} characters`, 'keyword');
  const all = keyword.toLowerCase().split(/\s+/).filter(Boolean);
  if (all.length === 0) throw badRequest('keyword: must not be empty', 'keyword');
  const words = [...new Set(all)];
  if (words.length > MAX_WORDS) throw badRequest(`keyword: at most ${MAX_WORDS} words`, 'keyword');
  return { phrase: all.join(' '), words };
}
