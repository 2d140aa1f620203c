/**
 * The one fold of catalog search, applied by the application to the stored text (the `search_*`
 * columns of `apps`) and to the keyword alike, so SQLite and PostgreSQL compare the same strings
 * with a plain substring test. The databases' own lower() disagreed: PostgreSQL's follows the
 * database's collation, SQLite's trigram index folds by its own table, and JavaScript's
 * toLowerCase() turns a final Σ into ς and İ into i + U+0307, so a name was not found by itself.
 *
 * - compatibility forms become their plain letters (NFKD: ＡＢＣ → ABC, ﬁ → fi);
 * - case is folded per character: upper-cased then lower-cased, so ß → ss, and ς → σ;
 * - the accents (combining marks) of Latin and Greek letters are dropped: é → e, ό → ο,
 *   İ → i. Other scripts keep theirs, where a mark can make another letter (Cyrillic й, и);
 * - default-ignorable characters are dropped (soft hyphen, zero-width spaces and joiners,
 *   variation selectors, the BOM...): they display as nothing, come along when a name is copied
 *   from a web page, and a keyword carrying one matched nothing;
 * - what is left is recomposed (NFC) and runs of whitespace become one space.
 *
 * Changing this fold changes what the stored columns must hold: it needs a migration that
 * re-folds every row (as 0008-search-fold and 0012-search-ignorable do).
 */
export function foldSearchText(text: string): string {
  // ASCII (most catalog text) folds by lower-casing alone: a bulk insert pays 5x less.
  if (!NON_ASCII.test(text)) return text.toLowerCase().replace(/\s+/g, ' ').trim();
  return text
    .normalize('NFKD')
    .replace(IGNORABLE, '')
    .toUpperCase()
    .toLowerCase()
    .replace(/ß/g, 'ss')
    .replace(/ς/g, 'σ')
    .normalize('NFKD')
    .replace(LATIN_GREEK_MARKS, '$1')
    .normalize('NFC')
    .replace(/\s+/g, ' ')
    .trim();
}

const NON_ASCII = /[^\x00-\x7F]/;
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;
const LATIN_GREEK_MARKS = /([\p{Script=Latin}\p{Script=Greek}])\p{M}+/gu;

/** The text columns search reads, each the fold of its column. */
export const SEARCH_COLUMNS = {
  name: 'search_name',
  short_description: 'search_short_description',
  description: 'search_description',
  tags: 'search_tags',
  author: 'search_author',
} as const;

export type SearchedField = keyof typeof SEARCH_COLUMNS;
export type SearchColumn = (typeof SEARCH_COLUMNS)[SearchedField];

/** The `search_*` values for the searched fields present in `row` (absent fields stay absent). */
export function searchColumnsOf(
  row: Partial<Record<SearchedField, string>>,
): Partial<Record<SearchColumn, string>> {
  const out: Partial<Record<SearchColumn, string>> = {};
  for (const [field, column] of Object.entries(SEARCH_COLUMNS) as Array<[SearchedField, SearchColumn]>) {
    const v = row[field];
    if (v !== undefined) out[column] = foldSearchText(v);
  }
  return out;
}
