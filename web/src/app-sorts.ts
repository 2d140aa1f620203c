/**
 * The orders of an app list, as `GET /api/app`'s `order` takes them (decisions.md), each named by
 * what it sorts by and which way: "Newest" or "Most downloaded" did not say which field, and
 * the Apps page and the catalog named the same order alike only by chance.
 */
export const APP_SORTS: [order: string, label: string][] = [
  ['created_time desc', 'Created, newest first'],
  ['created_time asc', 'Created, oldest first'],
  ['updated_time desc', 'Updated, newest first'],
  ['name asc', 'Name, A to Z'],
  ['name desc', 'Name, Z to A'],
  ['download_count desc', 'Downloads, most first'],
  ['download_count asc', 'Downloads, fewest first'],
];

export const DEFAULT_APP_ORDER = 'created_time desc';

/** The orders the public catalog offers (a visitor browses newest, popular or by name). */
export const CATALOG_SORTS = APP_SORTS.filter(([o]) =>
  ['created_time desc', 'download_count desc', 'name asc', 'updated_time desc'].includes(o),
);
