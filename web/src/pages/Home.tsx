import { api } from '../api';
import { AppGrid } from '../components/AppCard';
import { CategoryChips, SearchBox } from '../components/SearchBox';
import { Empty, ErrorBox, Spinner } from '../components/ui';
import { useAsync, useDocumentTitle } from '../hooks';
import { Link, navigate } from '../router';
import type { App } from '../types';

export function Home() {
  useDocumentTitle('App catalog');
  // Published apps only (status 1), also for a signed-in admin: the catalog pages show what the
  // public sees; hidden apps are managed under Admin → Apps.
  const featured = useAsync(() => api.page<App>('/app/featured', { p: 0, page_size: 8, status: 1 }), []);
  const popular = useAsync(
    () => api.page<App>('/app', { p: 0, page_size: 8, order: 'download_count desc', status: 1 }),
    [],
  );
  const newest = useAsync(
    () => api.page<App>('/app', { p: 0, page_size: 8, order: 'created_time desc', status: 1 }),
    [],
  );

  return (
    <>
      <section className="hero">
        <h1>Find apps for your AI models</h1>
        <p className="lead">Browse tools, assistants and integrations that run on this gateway.</p>
        <SearchBox large />
        <CategoryChips onPick={(c) => navigate(c ? `/apps?category=${c}` : '/apps')} />
      </section>

      <Section title="Featured" state={featured} emptyText="No featured apps yet." />
      <Section
        title="Most downloaded"
        state={popular}
        emptyText="The catalog is empty."
        more="/apps?order=download_count+desc"
      />
      <Section title="Newest" state={newest} emptyText="The catalog is empty." more="/apps" />
    </>
  );
}

function Section({
  title,
  state,
  emptyText,
  more,
}: {
  title: string;
  state: { data?: { items: App[] }; error: string | null; loading: boolean; reload(): void };
  emptyText: string;
  more?: string;
}) {
  const id = `sec-${title.toLowerCase().replace(/\s+/g, '-')}`;
  return (
    <section className="section" aria-labelledby={id}>
      <div className="section-head">
        <h2 id={id}>{title}</h2>
        {more && <Link to={more}>See all →</Link>}
      </div>
      {state.loading && !state.data ? (
        <Spinner />
      ) : state.error ? (
        <ErrorBox error={state.error} onRetry={state.reload} />
      ) : state.data && state.data.items.length > 0 ? (
        <AppGrid apps={state.data.items} />
      ) : (
        <Empty title={emptyText} />
      )}
    </section>
  );
}
