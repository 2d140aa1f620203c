import { ApiError, api, fieldMessage } from '../api';
import { CATALOG_SORTS } from '../app-sorts';
import { AppGrid } from '../components/AppCard';
import { CategoryChips, MAX_KEYWORD, SearchBox } from '../components/SearchBox';
import { Empty, ErrorBox, Pager, Spinner } from '../components/ui';
import { categoryLabel, charLength } from '../format';
import { useAsync, useDocumentTitle } from '../hooks';
import { navigate, useLocation } from '../router';
import { type App, CATEGORIES } from '../types';

const PAGE_SIZE = 12;
const SORTS = CATALOG_SORTS;

const MAX_WORDS = 10;
const MAX_PAGE = 1_000_000;

/** Why the catalog would refuse this search, in words for a visitor; null when it is fine. */
function keywordProblem(keyword: string): string | null {
  const length = charLength(keyword);
  if (length > MAX_KEYWORD)
    return `A search can be at most ${MAX_KEYWORD} characters long; this one has ${length}. Shorten it and search again.`;
  const words = new Set(keyword.toLowerCase().split(/\s+/).filter(Boolean));
  if (words.size > MAX_WORDS)
    return `A search can have at most ${MAX_WORDS} different words; this one has ${words.size}. Leave some out and search again.`;
  return null;
}

export function SearchPage() {
  const { query } = useLocation();
  const keyword = query.get('keyword') ?? '';
  const rawCategory = query.get('category') ?? '';
  // A link with a category or order the catalog does not know shows everything, newest first.
  const category = (CATEGORIES as readonly string[]).includes(rawCategory) ? rawCategory : '';
  const rawOrder = query.get('order') ?? '';
  const order = SORTS.some(([v]) => v === rawOrder) ? rawOrder : 'created_time desc';
  const page = Math.min(MAX_PAGE, Math.max(0, Math.floor(Number(query.get('p') ?? 0)) || 0));
  const problem = keyword ? keywordProblem(keyword) : null;
  // The tab names the category as the heading does (`Tools apps`, not the API's `tools`).
  useDocumentTitle(
    keyword ? `Search: ${keyword}` : category ? `${categoryLabel(category)} apps` : 'Browse apps',
  );

  // status 1: what the public sees, also for a signed-in admin (see Home).
  const result = useAsync(
    () =>
      problem
        ? Promise.resolve({ items: [] as App[], total: 0 })
        : keyword
          ? api.page<App>('/app/search', { keyword, p: page, page_size: PAGE_SIZE, status: 1 })
          : api.page<App>('/app', { category, order, p: page, page_size: PAGE_SIZE, status: 1 }),
    [keyword, category, order, page, problem],
  );
  // A search the catalog refused (400) cannot succeed by trying again: say why, without a retry.
  const refused =
    result.error && result.failure instanceof ApiError && result.failure.status === 400
      ? `This search cannot be run: ${fieldMessage(result.error)}`
      : null;

  function go(next: Record<string, string | number>) {
    const params = new URLSearchParams({ keyword, category, order, p: String(page), ...next } as Record<
      string,
      string
    >);
    for (const [k, v] of [...params.entries()]) {
      if (!v || (k === 'p' && v === '0') || (k === 'order' && v === 'created_time desc')) params.delete(k);
    }
    const qs = params.toString();
    navigate(`/apps${qs ? `?${qs}` : ''}`);
  }

  const heading = problem
    ? 'Search'
    : keyword
      ? `Results for “${keyword}”`
      : category
        ? `${categoryLabel(category)} apps`
        : 'All apps';

  return (
    <>
      <h1>{heading}</h1>
      <div className="toolbar">
        <SearchBox initial={keyword} />
        {!keyword && (
          <div className="field field-inline">
            <label htmlFor="sort">Sort by</label>
            <select id="sort" value={order} onChange={(e) => go({ order: e.target.value, p: 0 })}>
              {SORTS.map(([v, l]) => (
                <option key={v} value={v}>
                  {l}
                </option>
              ))}
            </select>
          </div>
        )}
      </div>
      <CategoryChips
        active={keyword ? undefined : category}
        onPick={(c) => go({ category: c, keyword: '', p: 0 })}
      />
      {keyword && <p className="meta">Sorted by relevance. Choosing a category clears the search.</p>}

      <div aria-live="polite" aria-busy={result.loading}>
        {problem && <Empty title="This search is too long">{problem}</Empty>}
        {result.loading && <Spinner label="Searching…" />}
        {!result.loading && refused && <Empty title="No results">{refused}</Empty>}
        {!result.loading && result.error && !refused && (
          <ErrorBox error={result.error} onRetry={result.reload} />
        )}
        {!problem && !result.loading && !result.error && result.data && (
          <>
            <p className="meta">
              {result.data.total} {result.data.total === 1 ? 'app' : 'apps'}
            </p>
            {result.data.items.length ? (
              <AppGrid apps={result.data.items} level={2} />
            ) : result.data.total === 0 && page === 0 ? (
              <Empty title="No apps match">Try another word or category.</Empty>
            ) : null}
            <Pager page={page} pageSize={PAGE_SIZE} total={result.data.total} onPage={(p) => go({ p })} />
          </>
        )}
      </div>
    </>
  );
}
