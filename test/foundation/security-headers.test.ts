import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleGateway } from '../helpers/console-build.js';
import type { TestGateway } from '../helpers/gateway.js';

/** Headers that keep the console from being framed, sniffed or leaking its URLs (docs/architecture.md). */
describe('security headers', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startConsoleGateway();
  });
  afterAll(async () => gw?.close());

  const get = (path: string, headers: Record<string, string> = {}) => fetch(gw.url + path, { headers });

  it('the console pages refuse framing and sniffing, and carry a content security policy', async () => {
    for (const [path, status] of [
      ['/', 200],
      ['/index.html', 200],
      ['/apps?keyword=x', 200],
      ['/admin/apps', 200],
      ['/nothing-here', 404],
    ] as const) {
      const res = await get(path);
      expect(res.status, path).toBe(status);
      expect(res.headers.get('x-frame-options'), path).toBe('DENY');
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('referrer-policy'), path).toBe('same-origin');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).toContain("default-src 'self'");
      expect(csp, path).toContain("script-src 'self'");
      expect(csp, path).not.toContain('unsafe-');
    }
  });

  it('the build files are not sniffed', async () => {
    for (const path of ['/assets/index-abc123.js', '/favicon.svg']) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
    }
  });

  it('/api answers are not sniffed; /v1 is left as it was (its request path is measured)', async () => {
    for (const path of ['/api/app', '/api/app/999', '/api/user/self', '/api/status']) {
      const res = await get(path);
      expect(res.headers.get('content-type'), path).toMatch(/^application\/json/);
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
    }
    expect((await get('/api/no-such-route')).headers.get('x-content-type-options')).toBe('nosniff');
    const v1 = await get('/v1/models');
    expect(v1.status).toBe(401);
    expect(v1.headers.get('x-content-type-options')).toBeNull();
  });

  it('the API docs (/docs) refuse framing too, and their page and every file it loads still arrive', async () => {
    const framing = (res: Response, path: string) => {
      expect(res.headers.get('x-frame-options'), path).toBe('DENY');
      expect(res.headers.get('content-security-policy') ?? '', path).toContain("frame-ancestors 'none'");
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
    };
    for (const page of ['/docs', '/docs/']) {
      const res = await get(page);
      expect(res.status, page).toBe(200);
      expect(res.headers.get('content-type'), page).toMatch(/^text\/html/);
      framing(res, page);
      const html = await res.text();
      // Every stylesheet, script and icon the page names, resolved as a browser would.
      const files = [...html.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => new URL(m[1]!, gw.url + page));
      expect(files.length, page).toBeGreaterThanOrEqual(5);
      for (const url of files) {
        const file = await fetch(url);
        expect(file.status, url.pathname).toBe(200);
        const type = url.pathname.endsWith('.js')
          ? /javascript/
          : url.pathname.endsWith('.css')
            ? /^text\/css/
            : /^image\//;
        expect(file.headers.get('content-type'), url.pathname).toMatch(type);
        expect((await file.arrayBuffer()).byteLength, url.pathname).toBeGreaterThan(0);
        framing(file, url.pathname);
      }
    }
    // The OAuth redirect page Swagger UI ships is a page of its own, and the document it reads.
    const oauth = await get('/docs/static/oauth2-redirect.html');
    expect(oauth.status).toBe(200);
    framing(oauth, '/docs/static/oauth2-redirect.html');
    const json = await get('/docs/json');
    expect(json.status).toBe(200);
    expect(((await json.json()) as { openapi: string }).openapi).toBe('3.1.0');
    framing(json, '/docs/json');
  });
});
