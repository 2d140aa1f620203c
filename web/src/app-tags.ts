import { MAX_TAG_LENGTH, MAX_TAGS } from '../../src/catalog/app-fields.js';
import { foldSearchText } from '../../src/store/search-fold.js';
import { charLength } from './format.js';

/**
 * Why an app's tags (the form's comma-separated text) would be refused, or null: counted as the
 * catalog counts them (src/catalog/normalize-app.ts: trimmed, blanks dropped, one tag per
 * spelling that search folds alike), against the catalog's own limits. Said under Tags before
 * sending: the server's 400 came only after a save, as the form's error.
 */
export function tagsProblem(text: string): string | null {
  const seen = new Set<string>();
  for (const raw of text.split(',')) {
    const tag = raw.trim().replace(/\s+/g, ' ');
    if (!tag) continue;
    const length = charLength(tag);
    if (length > MAX_TAG_LENGTH)
      return `Each tag can be at most ${MAX_TAG_LENGTH} characters; “${tag}” has ${length}.`;
    seen.add(foldSearchText(tag));
  }
  if (seen.size > MAX_TAGS)
    return `At most ${MAX_TAGS} tags; this has ${seen.size}. Remove ${seen.size - MAX_TAGS}.`;
  return null;
}
