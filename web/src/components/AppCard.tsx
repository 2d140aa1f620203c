import { useState } from 'react';
import { categoryLabel, formatNumber } from '../format';
import { Link } from '../router';
import type { App } from '../types';

/**
 * The first character a reader sees in a name: a whole emoji or accented letter (one grapheme),
 * never half of a UTF-16 surrogate pair.
 */
export function firstLetter(name: string): string {
  const text = name.trim();
  if (!text) return '?';
  if (typeof Intl.Segmenter === 'function') {
    const first = new Intl.Segmenter(undefined, { granularity: 'grapheme' })
      .segment(text)
      [Symbol.iterator]()
      .next();
    if (!first.done) return first.value.segment.toUpperCase();
  }
  return Array.from(text)[0].toUpperCase();
}

/**
 * The app's thumbnail, or the first letter of its name when it has none or its link cannot be
 * loaded (a thumbnail is a link to another host, which may be gone: the browser showed its
 * broken-image icon). A new link is tried again.
 */
export function Thumb({ app, size = 56 }: { app: Pick<App, 'name' | 'thumbnail_url'>; size?: number }) {
  const [failed, setFailed] = useState<string | null>(null);
  const url = app.thumbnail_url;
  if (url && url !== failed) {
    return (
      <img
        className="thumb"
        src={url}
        alt=""
        width={size}
        height={size}
        loading="lazy"
        referrerPolicy="no-referrer"
        onError={() => setFailed(url)}
      />
    );
  }
  return (
    <span className="thumb thumb-letter" style={{ width: size, height: size }} aria-hidden="true">
      {firstLetter(app.name ?? '')}
    </span>
  );
}

/**
 * An app in a list. Its name is a heading one level below the section holding the list: h3 under
 * a page's h2 sections (the home page), h2 straight under the page's h1 (the search page).
 */
export function AppCard({ app, level = 3 }: { app: App; level?: 2 | 3 }) {
  const Heading = level === 2 ? 'h2' : 'h3';
  return (
    <article className="card app-card">
      <Thumb app={app} />
      <div className="app-card-body">
        <Heading className="app-card-title">
          <Link to={`/app/${app.id}`}>{app.name}</Link>
          {app.featured && (
            <span className="badge badge-accent" title="Featured">
              ★ Featured
            </span>
          )}
          {app.status === 2 && (
            <span className="badge badge-warn badge-gap" title="Hidden: only administrators see this app">
              Hidden
            </span>
          )}
        </Heading>
        <p className="app-card-desc">{app.short_description || 'No description yet.'}</p>
        <p className="meta">
          <span className="badge">{categoryLabel(app.category)}</span>
          {app.version && <span>v{app.version}</span>}
          <span>
            {formatNumber(app.download_count)} {app.download_count === 1 ? 'download' : 'downloads'}
          </span>
        </p>
      </div>
    </article>
  );
}

export function AppGrid({ apps, level }: { apps: App[]; level?: 2 | 3 }) {
  return (
    <ul className="app-grid">
      {apps.map((a) => (
        <li key={a.id}>
          <AppCard app={a} level={level} />
        </li>
      ))}
    </ul>
  );
}
