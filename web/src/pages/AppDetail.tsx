import { useEffect, useRef, useState } from 'react';
import { ApiError, api, errorText } from '../api';
import { isAdmin, useAuth } from '../auth';
import { Thumb } from '../components/AppCard';
import { Empty, ErrorBox, Spinner } from '../components/ui';
import { categoryLabel, formatDate, formatNumber } from '../format';
import { useAsync, useDocumentTitle } from '../hooks';
import { Link } from '../router';
import type { App } from '../types';

function ExternalLink({ href, children }: { href: string; children: string }) {
  if (!href) return null;
  return (
    <li>
      <a href={href} target="_blank" rel="noopener noreferrer">
        {children} <span aria-hidden="true">↗</span>
        <span className="sr-only"> (opens in a new tab)</span>
      </a>
    </li>
  );
}

/** App ids are database rows: 1 to 2^31 - 1, written as plain decimals. */
function isAppId(id: string): boolean {
  return /^[1-9][0-9]{0,9}$/.test(id) && Number(id) <= 2_147_483_647;
}

export function AppDetail({ id }: { id: string }) {
  const { user } = useAuth();
  // null: no such app. An id that cannot be one (`/app/abc`, `/app/0`) is not asked for; the
  // gateway's 404 (missing, or hidden from this visitor) and 400 mean the same to a reader.
  const state = useAsync(
    () =>
      isAppId(id)
        ? api.get<App>(`/app/${id}`).catch((e: unknown) => {
            if (e instanceof ApiError && (e.status === 404 || e.status === 400)) return null;
            throw e;
          })
        : Promise.resolve(null),
    [id],
  );
  const app = state.data;
  useDocumentTitle(app ? app.name : app === null ? 'App not found' : 'App');

  const [downloading, setDownloading] = useState(false);
  const [download, setDownload] = useState<{ download_url: string; download_count: number } | null>(null);
  const [downloadError, setDownloadError] = useState<string | null>(null);
  const linkRef = useRef<HTMLAnchorElement>(null);

  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when another app is shown
  useEffect(() => {
    setDownload(null);
    setDownloadError(null);
  }, [id]);

  useEffect(() => {
    if (download) linkRef.current?.focus();
  }, [download]);

  async function onDownload() {
    if (!app) return;
    setDownloading(true);
    setDownloadError(null);
    try {
      setDownload(
        await api.post<{ download_url: string; download_count: number }>(`/app/download/${app.id}`),
      );
    } catch (e) {
      setDownloadError(
        e instanceof ApiError && e.status === 409
          ? 'This app has no download available.'
          : e instanceof ApiError && e.status === 404
            ? 'This app is no longer published, so it cannot be downloaded.'
            : errorText(e),
      );
    } finally {
      setDownloading(false);
    }
  }

  if (state.loading) return <Spinner label="Loading app…" />;
  if (state.error) return <ErrorBox error={state.error} onRetry={state.reload} />;
  if (!app) {
    return (
      <Empty title="App not found">
        <p>
          It may have been removed or hidden. <Link to="/apps">Browse the catalog</Link>
        </p>
      </Empty>
    );
  }

  const tags = (app.tags || '')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  const count = download?.download_count ?? app.download_count;
  // Why Download cannot work, said before anyone clicks (the gateway would answer 404 or 409).
  const noDownload =
    app.status !== 1
      ? 'Hidden apps cannot be downloaded. Publish the app to offer its download.'
      : !app.download_url
        ? 'No download is offered for this app yet.'
        : null;

  return (
    <article className="detail">
      <nav aria-label="Breadcrumb" className="breadcrumb">
        <Link to="/">Catalog</Link> /{' '}
        <Link to={`/apps?category=${app.category}`}>{categoryLabel(app.category)}</Link> /{' '}
        <span aria-current="page">{app.name}</span>
      </nav>
      <header className="detail-head">
        <Thumb app={app} size={96} />
        <div>
          <h1>
            {app.name} {app.version && <span className="version">v{app.version}</span>}
          </h1>
          <p className="lead">{app.short_description}</p>
          <p className="meta">
            {app.author && (
              <span>
                by{' '}
                {app.author_url ? (
                  <a href={app.author_url} target="_blank" rel="noopener noreferrer">
                    {app.author}
                  </a>
                ) : (
                  app.author
                )}
              </span>
            )}
            <span className="badge">{categoryLabel(app.category)}</span>
            {app.featured && <span className="badge badge-accent">★ Featured</span>}
            {app.status === 2 && <span className="badge badge-warn">Hidden</span>}
          </p>
        </div>
      </header>

      <div className="detail-grid">
        <section className="card detail-main" aria-labelledby="about">
          <h2 id="about">About</h2>
          {app.description ? (
            <p className="prose">{app.description}</p>
          ) : (
            <p className="meta">No description.</p>
          )}
          {tags.length > 0 && (
            <ul className="tags" aria-label="Tags">
              {tags.map((t) => (
                <li key={t}>
                  <Link to={`/apps?keyword=${encodeURIComponent(t)}`} className="chip">
                    #{t}
                  </Link>
                </li>
              ))}
            </ul>
          )}
        </section>

        <aside className="card detail-side" aria-label="Download and links">
          <p className="count" aria-live="polite">
            <strong data-testid="download-count">{formatNumber(count)}</strong>{' '}
            {count === 1 ? 'download' : 'downloads'}
          </p>
          <button
            type="button"
            className="btn btn-primary btn-block"
            onClick={onDownload}
            disabled={downloading || noDownload !== null}
            aria-describedby={noDownload ? 'no-download' : undefined}
          >
            {downloading ? 'Preparing…' : 'Download'}
          </button>
          {noDownload && (
            <p id="no-download" className="meta">
              {noDownload}
            </p>
          )}
          <ErrorBox error={downloadError} />
          {download && (
            <div className="alert alert-ok" role="status">
              Your download is ready:{' '}
              <a
                ref={linkRef}
                href={download.download_url}
                target="_blank"
                rel="noopener noreferrer"
                className="break"
              >
                {download.download_url}
              </a>
            </div>
          )}
          <ul className="links">
            <ExternalLink href={app.source_url}>Source code</ExternalLink>
            <ExternalLink href={app.documentation_url}>Documentation</ExternalLink>
            <ExternalLink href={app.author_url}>Author website</ExternalLink>
          </ul>
          <dl className="facts">
            <dt>Version</dt>
            <dd>{app.version || '—'}</dd>
            <dt>Added</dt>
            <dd>{formatDate(app.created_time)}</dd>
            <dt>Updated</dt>
            <dd>{formatDate(app.updated_time)}</dd>
          </dl>
          {isAdmin(user) && (
            <Link to={`/admin/apps?edit=${app.id}`} className="btn btn-block">
              Edit this app
            </Link>
          )}
        </aside>
      </div>
    </article>
  );
}
