import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PAGES, SIGNED_IN_PAGES } from '../../src/http/console-pages.js';
import { startConsoleGateway } from '../helpers/console-build.js';
import type { TestGateway } from '../helpers/gateway.js';

/** The console's files as a browser gets them: what is cached, what falls back to index.html. */
describe('console files', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startConsoleGateway();
  });
  afterAll(async () => gw?.close());

  const get = (path: string) => fetch(gw.url + path);

  it('sends index.html uncached at / and for every page of the console', async () => {
    for (const path of [
      '/',
      '/index.html',
      '/apps?keyword=a.b',
      '/app/3',
      '/app/some%20id/',
      '/login?next=%2Fkeys',
      ...SIGNED_IN_PAGES,
      ...ADMIN_PAGES,
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control'), path).toBe('no-cache');
      expect(await res.text(), path).toContain('/assets/index-abc123.js');
    }
  });

  it('answers HEAD on a console page as GET, without the body (monitors and link checkers)', async () => {
    for (const [path, status] of [
      ['/apps', 200],
      ['/login', 200],
      ['/keys', 200],
      ['/app/10', 200],
      ['/nothing-here', 404],
    ] as const) {
      const got = await get(path);
      const head = await fetch(gw.url + path, { method: 'HEAD' });
      expect(head.status, path).toBe(status);
      expect(head.headers.get('content-type'), path).toMatch(/^text\/html/);
      expect(head.headers.get('cache-control'), path).toBe('no-cache');
      expect(head.headers.get('content-length'), path).toBe(got.headers.get('content-length'));
      expect(await head.text(), path).toBe('');
    }
    // The API's missing routes stay JSON 404s.
    const api = await fetch(`${gw.url}/api/nothing`, { method: 'HEAD' });
    expect(api.status).toBe(404);
    expect(api.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('sends the page with a 404 for a path that is no page of the console', async () => {
    // The console shows its "Page not found"; a link checker or a monitor reads the status.
    for (const path of [
      '/nothing-here',
      '/wp-login.php',
      '/apps/extra',
      '/app',
      '/app/3/more',
      '/admin',
      '/Keys',
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control'), path).toBe('no-cache');
      expect(await res.text(), path).toContain('/assets/index-abc123.js');
    }
    // Asked again with the validators a browser keeps: still the page, not an empty 304 body.
    const first = await get('/nothing-here');
    const etag = first.headers.get('etag');
    const again = await fetch(`${gw.url}/nothing-here`, {
      headers: {
        ...(etag ? { 'if-none-match': etag } : {}),
        'if-modified-since': first.headers.get('last-modified') ?? new Date().toUTCString(),
      },
    });
    expect(again.status).toBe(404);
    expect(await again.text()).toContain('/assets/index-abc123.js');
  });

  it('caches hashed build files for good, other files for an hour', async () => {
    const js = await get('/assets/index-abc123.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const icon = await get('/favicon.svg');
    expect(icon.status).toBe(200);
    expect(icon.headers.get('cache-control')).toBe('public, max-age=3600');
  });

  it('answers a build file that is not there with a 404, not the page', async () => {
    const res = await get('/assets/Keys-OLD.js');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/json/);
    expect(res.headers.get('cache-control')).toBeNull();
  });

  it('keeps the API and the model wire out of the fallback', async () => {
    expect((await get('/api/nothing-here')).status).toBe(404);
    expect((await get('/v1/nothing-here')).status).toBe(404);
  });
});
