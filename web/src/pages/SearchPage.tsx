import { api } from '../api';
import { AppGrid } from '../components/AppCard';
import { CategoryChips, SearchBox } from '../components/SearchBox';
import { Empty, ErrorBox, Pager, Spinner } from '../components/ui';
import { useAsync, useDocumentTitle } from '../hooks';
import { navigate, useLocation } from '../router';
import type { App } from '../types';

const PAGE_SIZE = 12;
const SORTS: [string, string][] = [
  ['created_time desc', 'Newest'],
  ['download_count desc', 'Most downloaded'],
  ['name asc', 'Name A–Z'],
  ['updated_time desc', 'Recently updated'],
];

export function SearchPage() {
  const { query } = useLocation();
  const keyword = query.get('keyword') ?? '';
  const category = query.get('category') ?? '';
  const order = query.get('order') ?? 'created_time desc';
  const page = Math.max(0, Number(query.get('p') ?? 0) || 0);
  useDocumentTitle(keyword ? `Search: ${keyword}` : category ? `${category} apps` : 'Browse apps');

  // status 1: what the public sees, also for a signed-in admin (see Home).
  const result = useAsync(
    () =>
      keyword
        ? api.page<App>('/app/search', { keyword, p: page, page_size: PAGE_SIZE, status: 1 })
        : api.page<App>('/app', { category, order, p: page, page_size: PAGE_SIZE, status: 1 }),
    [keyword, category, order, page],
  );

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

  const heading = keyword
    ? `Results for “${keyword}”`
    : category
      ? `${category[0].toUpperCase()}${category.slice(1)} apps`
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
        {result.loading && <Spinner label="Searching…" />}
        {!result.loading && result.error && <ErrorBox error={result.error} onRetry={result.reload} />}
        {!result.loading && !result.error && result.data && (
          <>
            <p className="meta">
              {result.data.total} {result.data.total === 1 ? 'app' : 'apps'}
            </p>
            {result.data.items.length ? (
              <AppGrid apps={result.data.items} />
            ) : (
              <Empty title="No apps match">Try another word or category.</Empty>
            )}
            <Pager page={page} pageSize={PAGE_SIZE} total={result.data.total} onPage={(p) => go({ p })} />
          </>
        )}
      </div>
    </>
  );
}
