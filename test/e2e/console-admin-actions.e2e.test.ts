import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshot } from './browser.js';
import { type E2EGateway, startGatewayForE2E } from './gateway.js';
import { addSessionCookie, api, collectPageErrors, fieldErrors, login } from './session.js';

/**
 * Admin actions as a black-box review found them: a new sort of the apps list kept the page it
 * was on, an exhausted key could not be disabled from its row, and the app form heard of one
 * bad link per try.
 */

let gw: E2EGateway;
let browser: Browser;
let ctx: BrowserContext;
let page: Page;
let cookie = '';
const pageErrors: string[] = [];
const realOnly = it.skipIf(process.env.E2E_GATEWAY === 'stub');

const adminApi = <T = any>(method: string, path: string, body?: unknown) =>
  api<T>(gw, cookie, method, path, body);

beforeAll(async () => {
  gw = await startGatewayForE2E();
  cookie = await login(gw, gw.admin.username, gw.admin.password);
  browser = await launchBrowser();
  ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await addSessionCookie(ctx, gw, cookie);
  page = await ctx.newPage();
  collectPageErrors(page, pageErrors);
});

afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

describe('admin actions', () => {
  it('shows the first page of the apps list in a new order', async () => {
    // More than a page of 20: the list has a second page.
    for (let i = 1; i <= 22; i++)
      await adminApi('POST', '/app', { name: `Order App ${String(i).padStart(2, '0')}` });
    await page.goto(`${gw.url}/admin/apps`);
    const pager = page.getByRole('navigation', { name: 'Pagination' });
    await pager.getByText(/^Page 1 of \d+$/).waitFor();
    await pager.getByRole('button', { name: 'Next →' }).click();
    await pager.getByText(/^Page 2 of \d+$/).waitFor();
    await page.getByLabel('Sort by').selectOption('name asc');
    await pager.getByText(/^Page 1 of \d+$/).waitFor();
    // The list's first rows in that order, not its second page (the old rows stay until it loads).
    await expect.poll(() => page.getByRole('rowheader').first().textContent()).toBe('Order App 01');
  });

  realOnly('disables an exhausted key from its row', async () => {
    // A quota of 0: exhausted from the start (status 4), yet enabled underneath.
    const key = await adminApi<{ id: number; status: number }>('POST', '/key', {
      name: 'e2e-exhausted',
      quota_limit: 0,
    });
    expect(key.status).toBe(4);
    await page.goto(`${gw.url}/keys`);
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: /e2e-exhausted/ }) });
    await row.getByText('Exhausted', { exact: true }).waitFor();
    await row.getByRole('button', { name: 'Disable e2e-exhausted' }).click();
    await page.getByText('Key “e2e-exhausted” disabled.').waitFor();
    await row.getByText('Disabled', { exact: true }).waitFor();
    expect((await adminApi<{ status: number }>('GET', `/key/${key.id}`)).status).toBe(2);
    // Raising its quota now leaves it off, as its owner asked.
    await adminApi('PUT', '/key', { id: key.id, quota_limit: 10 });
    expect((await adminApi<{ status: number }>('GET', `/key/${key.id}`)).status).toBe(2);
  });

  it('says every bad link of the app form at once, before sending', async () => {
    await page.goto(`${gw.url}/admin/apps`);
    await page.getByRole('button', { name: 'New app' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name (required)').fill('Links App');
    await dialog.getByLabel('Download URL').fill('ftp://files.example.com/links.zip');
    await dialog.getByLabel('Source URL').fill('https://user:secret@git.example.com/links');
    await dialog.getByLabel('Documentation URL').fill('docs.example.com/links');
    await dialog.getByLabel('Thumbnail URL').fill('https://img.example.com/a b.png');
    const sent: string[] = [];
    const record = (r: Request) => {
      if (new URL(r.url()).pathname.startsWith('/api/app')) sent.push(`${r.method()} ${r.url()}`);
    };
    page.on('request', record);
    await dialog.getByRole('button', { name: 'Create app' }).click();
    await dialog.getByText('Please correct the highlighted fields.').waitFor();
    page.off('request', record);
    expect(await fieldErrors(dialog)).toEqual({
      'Download URL': 'Must use http or https, not ftp.',
      'Source URL': 'Must not contain credentials (a user name or password).',
      'Documentation URL': 'Must be an absolute http or https URL (https://host/…).',
      'Thumbnail URL': 'Must not contain spaces or invisible characters.',
    });
    expect(sent).toEqual([]);
    await screenshot(page, 'admin-app-links');
    await dialog.getByLabel('Download URL').fill('https://files.example.com/links.zip');
    await dialog.getByLabel('Source URL').fill('https://git.example.com/links');
    await dialog.getByLabel('Documentation URL').fill('https://docs.example.com/links');
    await dialog.getByLabel('Thumbnail URL').fill('');
    await dialog.getByRole('button', { name: 'Create app' }).click();
    await page.getByText('Created “Links App”.').waitFor();
  });

  it('says an expiry that has passed in plain words, before sending, for keys and access tokens', async () => {
    const forms = [
      { path: '/keys', open: 'New API key', submit: 'Create key', api: '/api/key' },
      { path: '/account', open: 'New access token', submit: 'Create token', api: '/api/user/tokens' },
    ];
    for (const f of forms) {
      await page.goto(`${gw.url}${f.path}`);
      await page.getByRole('button', { name: f.open }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Name (required)').fill('e2e-past');
      await dialog.getByLabel('Expires').fill('2020-01-02T10:00');
      const sent: string[] = [];
      const record = (r: Request) => {
        if (r.method() === 'POST' && new URL(r.url()).pathname === f.api) sent.push(r.url());
      };
      page.on('request', record);
      await dialog.getByRole('button', { name: f.submit }).click();
      await dialog.getByText('Please correct the highlighted field.').waitFor();
      page.off('request', record);
      // Not the API's "(unix seconds), or null for never".
      expect(await fieldErrors(dialog), f.path).toEqual({
        Expires: 'Must be in the future, or empty for never.',
      });
      expect(sent, f.path).toEqual([]);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
    }
  });

  it("says an administrator's Usage totals are every user's, and a user's their own", async () => {
    await page.goto(`${gw.url}/usage`);
    await page.getByRole('heading', { name: 'Usage' }).waitFor();
    await page.getByText("Every user's requests, yours included.").waitFor();
    await adminApi('POST', '/user', { username: 'e2e-usage-user', password: 'e2e-usage-password' });
    const c = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      const p = await c.newPage();
      await p.goto(`${gw.url}/login?next=/usage`);
      await p.getByLabel('Username').fill('e2e-usage-user');
      await p.getByLabel('Password').fill('e2e-usage-password');
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByText('Your requests.').waitFor();
      expect(await p.getByText("Every user's requests").count()).toBe(0);
    } finally {
      await c.close();
    }
  });

  it('raised no uncaught errors in the page', () => {
    expect(pageErrors).toEqual([]);
  });
});
