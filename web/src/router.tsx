// A small History-API router: the gateway answers every unknown path with index.html.
import { type AnchorHTMLAttributes, type MouseEvent, useSyncExternalStore } from 'react';

const listeners = new Set<() => void>();

function notify() {
  for (const l of listeners) l();
}

window.addEventListener('popstate', notify);

function subscribe(l: () => void) {
  listeners.add(l);
  return () => listeners.delete(l);
}

function snapshot() {
  return window.location.pathname + window.location.search;
}

export function navigate(to: string, opts: { replace?: boolean } = {}) {
  if (to === snapshot()) return;
  if (opts.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  notify();
  if (!opts.replace) window.scrollTo(0, 0);
}

export interface Location {
  path: string;
  query: URLSearchParams;
}

export function useLocation(): Location {
  const href = useSyncExternalStore(subscribe, snapshot);
  const url = new URL(href, window.location.origin);
  return { path: url.pathname, query: url.searchParams };
}

/** The sign-in page, coming back to this page (its query included) once signed in. */
export function signInHref(loc: Location): string {
  const q = loc.query.toString();
  return `/login?next=${encodeURIComponent(q ? `${loc.path}?${q}` : loc.path)}`;
}

/**
 * Where a `next` parameter may send the browser: a page of this origin only. Parsed as the
 * browser would (`/\\evil.example` is another host to it), never taken as written.
 */
export function localTarget(next: string | null, fallback = '/'): string {
  if (!next?.startsWith('/')) return fallback;
  let url: URL;
  try {
    url = new URL(next, window.location.origin);
  } catch {
    return fallback;
  }
  if (url.origin !== window.location.origin || url.pathname === '/login') return fallback;
  return url.pathname + url.search + url.hash;
}

/** Matches "/app/:id" against a path; returns params or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/').filter(Boolean);
  const s = path.split('/').filter(Boolean);
  if (p.length !== s.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    if (p[i].startsWith(':')) params[p[i].slice(1)] = decodeURIComponent(s[i]);
    else if (p[i] !== s[i]) return null;
  }
  return params;
}

type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & { to: string };

export function Link({ to, onClick, children, ...rest }: LinkProps) {
  function handle(e: MouseEvent<HTMLAnchorElement>) {
    onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  }
  return (
    <a href={to} onClick={handle} {...rest}>
      {children}
    </a>
  );
}
