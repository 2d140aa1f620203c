import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from './browser.js';
import { ANSWER, type E2EGateway, startGatewayForE2E } from './gateway.js';

/**
 * The console works under its own content security policy (src/http/security-headers.ts): every
 * page, a thumbnail from another host, a streamed playground answer and the admin dialogs, with
 * no violation reported; and another site cannot frame it.
 */
let gw: E2EGateway;
let browser: Browser;
let ctx: BrowserContext;
let page: Page;
/** Another origin: serves a thumbnail, and a page that tries to frame the console. */
let other: Server;
let otherUrl = '';
const violations: string[] = [];
const consoleErrors: string[] = [];
let appId = 0;

// A 1x1 PNG.
const PIXEL = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

beforeAll(async () => {
  gw = await startGatewayForE2E();
  other = createServer((req, res) => {
    if (req.url === '/thumb.png') res.writeHead(200, { 'content-type': 'image/png' }).end(PIXEL);
    else
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          `<!doctype html><title>framer</title><iframe id="f" src="${gw.url}${req.url === '/docs-framer.html' ? '/docs' : '/apps'}"></iframe>`,
        );
  });
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  const login = await fetch(`${gw.url}/api/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(gw.admin),
  });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  const created = await fetch(`${gw.url}/api/app`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({
      name: 'Policy Viewer',
      short_description: 'Shows a thumbnail from another host.',
      thumbnail_url: `${otherUrl}/thumb.png`,
      download_url: 'https://downloads.example.com/policy-viewer.zip',
      featured: true,
    }),
  });
  appId = ((await created.json()) as { data: { id: number } }).data.id;

  browser = await launchBrowser();
  ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  // Injected by the browser, not the page, so the policy does not apply to it.
  await ctx.addInitScript(`
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) =>
      window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
  `);
  page = await ctx.newPage();
  page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
  page.on('pageerror', (e) => consoleErrors.push(e.message));
});

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await new Promise((r) => other?.close(r));
});

/** Collects the violations the current document saw (each navigation starts a new list). */
async function collect(): Promise<void> {
  violations.push(...((await page.evaluate('window.__violations ?? []')) as string[]));
}

async function visit(path: string, ready: () => Promise<unknown>): Promise<void> {
  const res = await page.goto(gw.url + path);
  expect(res?.headers()['content-security-policy'], path).toContain("frame-ancestors 'none'");
  await ready();
  await page.waitForLoadState('networkidle');
  await collect();
}

describe('the console under its content security policy', () => {
  it('shows the public pages with a thumbnail from another host', async () => {
    await visit('/', () => page.getByRole('heading', { name: 'Featured', exact: true }).waitFor());
    await visit('/apps', () => page.getByRole('link', { name: 'Policy Viewer' }).first().waitFor());
    await visit(`/app/${appId}`, () => page.getByRole('heading', { name: /Policy Viewer/ }).waitFor());
    const thumb = page.locator(`img[src="${otherUrl}/thumb.png"]`).first();
    await expect
      .poll(() => thumb.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth))
      .toBe(1);
    await visit('/no-such-page', () =>
      page
        .getByText(/not found/i)
        .first()
        .waitFor(),
    );
    expect(violations).toEqual([]);
  });

  it('signs in, creates a key and streams a playground answer', async () => {
    await visit('/login', () => page.getByLabel('Username').waitFor());
    await page.getByLabel('Username').fill(gw.admin.username);
    await page.getByLabel('Password').fill(gw.admin.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Upstreams' }).waitFor();
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('button', { name: 'New API key' }).click();
    await page.getByRole('dialog').getByLabel('Name (required)').fill('csp key');
    await page.getByRole('dialog').getByRole('button', { name: 'Create key' }).click();
    await page.getByLabel('Secret key').waitFor();
    await page.getByRole('button', { name: 'Done' }).click();
    // Through the menu: the key's secret is kept in this tab's memory only.
    await page.getByRole('link', { name: 'Playground', exact: true }).click();
    await page.locator(`#pg-model option[value="${gw.chatModel}"]`).waitFor({ state: 'attached' });
    await page.getByLabel('Message').fill('Say hello');
    await page.getByLabel('Message').press('Enter');
    const answer = page.getByTestId('assistant-message').locator('.msg-text');
    await expect.poll(() => answer.textContent(), { timeout: 15_000 }).toBe(ANSWER.join(''));
    await page.getByTestId('usage').waitFor();
    await collect();
    expect(violations).toEqual([]);
  });

  it('shows the signed-in and admin pages and their dialogs', async () => {
    await visit('/logs', () => page.getByRole('cell', { name: gw.chatModel }).first().waitFor());
    await visit('/usage', () => page.getByRole('heading', { name: /usage/i }).first().waitFor());
    await visit('/account', () =>
      page
        .getByRole('heading', { name: /account/i })
        .first()
        .waitFor(),
    );
    await visit('/admin/upstreams', () =>
      page
        .getByRole('heading', { name: /upstreams/i })
        .first()
        .waitFor(),
    );
    await visit('/admin/users', () => page.getByRole('heading', { name: /users/i }).first().waitFor());
    for (const [path, button] of [
      ['/admin/apps', 'New app'],
      ['/admin/models', 'New model'],
    ] as const) {
      await visit(path, () => page.getByRole('button', { name: button }).waitFor());
      await page.getByRole('button', { name: button }).click();
      await page.getByRole('dialog').waitFor();
      await collect();
    }
    expect(violations).toEqual([]);
    expect(consoleErrors.filter((e) => /Content Security Policy|Refused to/i.test(e))).toEqual([]);
  });

  it('cannot be framed by another site', async () => {
    const framer = await ctx.newPage();
    const refused: string[] = [];
    framer.on('console', (m) => refused.push(m.text()));
    await framer.goto(`${otherUrl}/framer.html`);
    await framer.waitForLoadState('load');
    const frame = framer.frames().find((f) => f !== framer.mainFrame());
    expect(frame).toBeDefined();
    // Chromium puts its error page in the frame instead of the console.
    await expect.poll(() => frame!.url()).not.toContain('/apps');
    expect(await framer.locator('#f').contentFrame().locator('#root').count()).toBe(0);
    expect(refused.join('\n')).toMatch(/frame-ancestors|X-Frame-Options/);
    await framer.close();
  });

  it('the API docs (Swagger UI) still render under their headers, and cannot be framed either', async () => {
    const docs = await ctx.newPage();
    const errors: string[] = [];
    docs.on('pageerror', (e) => errors.push(e.message));
    const res = await docs.goto(`${gw.url}/docs`);
    expect(res?.headers()['x-frame-options']).toBe('DENY');
    // The operations come from the OpenAPI document, fetched and rendered by Swagger UI's scripts.
    await docs.locator('.opblock-summary-path', { hasText: '/api/app/search' }).first().waitFor();
    expect(await docs.evaluate('window.__violations ?? []')).toEqual([]);
    expect(errors).toEqual([]);
    await docs.close();

    const framer = await ctx.newPage();
    const refused: string[] = [];
    framer.on('console', (m) => refused.push(m.text()));
    await framer.goto(`${otherUrl}/docs-framer.html`);
    await framer.waitForLoadState('load');
    expect(await framer.locator('#f').contentFrame().locator('#swagger-ui').count()).toBe(0);
    expect(refused.join('\n')).toMatch(/frame-ancestors|X-Frame-Options/);
    await framer.close();
  });
});
