/**
 * The pages of the web console, shared by the console's router (web/src/App.tsx, whose page
 * tables are typed by these lists) and the gateway, which answers a GET for one of them with
 * the console's index.html and 200, and any other path outside the API with the same page
 * (showing "Page not found") and 404, so link checkers and monitors read the right status.
 */
export const SIGNED_IN_PAGES = ['/playground', '/keys', '/logs', '/usage', '/account'] as const;
export const ADMIN_PAGES = ['/admin/apps', '/admin/upstreams', '/admin/models', '/admin/users'] as const;
const FIXED_PAGES: ReadonlySet<string> = new Set([
  '/',
  '/apps',
  '/login',
  ...SIGNED_IN_PAGES,
  ...ADMIN_PAGES,
]);

export type SignedInPage = (typeof SIGNED_IN_PAGES)[number];
export type AdminPage = (typeof ADMIN_PAGES)[number];

/** Whether `path` (no query) is a page of the console: a fixed one, or `/app/<id>`. */
export function isConsolePage(path: string): boolean {
  if (FIXED_PAGES.has(path)) return true;
  // The router's `/app/:id` ignores empty segments (`/app/3/` is app 3).
  const segments = path.split('/').filter(Boolean);
  return segments.length === 2 && segments[0] === 'app';
}
