import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshot } from './browser.js';
import { type E2EGateway, startGatewayForE2E } from './gateway.js';
import { api, collectPageErrors, login, signInThroughPage } from './session.js';

/**
 * The console's frame and focus: a long name in the header and in the new-secret dialog, the
 * phone menu's Escape, where focus goes after a confirmed delete, the sign-in form's own
 * messages, heading levels and category names as people read them.
 */

let gw: E2EGateway;
let browser: Browser;
let cookie = '';
const pageErrors: string[] = [];
const realOnly = it.skipIf(process.env.E2E_GATEWAY === 'stub');

const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };
const DESKTOP = { viewport: { width: 1280, height: 860 } };
const LONG_NAME = `Dr. ${'Wolfeschlegelsteinhausenbergerdorff '.repeat(4)}`.slice(0, 128);

const adminApi = <T = any>(method: string, path: string, body?: unknown) =>
  api<T>(gw, cookie, method, path, body);

/** A new browser context signed in as `username`, through the sign-in page. */
async function signedIn(
  options: Parameters<Browser['newContext']>[0],
  username: string,
  password: string,
): Promise<{ ctx: BrowserContext; p: Page }> {
  const ctx = await browser.newContext(options);
  const p = await ctx.newPage();
  collectPageErrors(p, pageErrors);
  await signInThroughPage(p, gw, username, password);
  return { ctx, p };
}

const sideways = (p: Page) => p.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');

beforeAll(async () => {
  gw = await startGatewayForE2E();
  cookie = await login(gw, gw.admin.username, gw.admin.password);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

describe('console layout and focus', () => {
  realOnly('cuts a long display name in the header with an ellipsis, on a phone and a desktop', async () => {
    const user = await adminApi<{ id: number }>('POST', '/user', {
      username: 'e2e-long-name',
      password: 'e2e-password',
      display_name: LONG_NAME,
      role: 1,
    });
    try {
      const phone = await signedIn(PHONE, 'e2e-long-name', 'e2e-password');
      try {
        await phone.p.getByRole('button', { name: 'Menu' }).click();
        const account = phone.p.getByRole('link', { name: new RegExp(LONG_NAME.slice(0, 40)) });
        await account.waitFor();
        // The whole name is still the link's name and its tooltip, only the view is cut.
        expect(await account.textContent()).toContain(LONG_NAME);
        expect(await phone.p.locator(`[title="${LONG_NAME}"]`).count()).toBe(1);
        expect(await sideways(phone.p)).toBeLessThanOrEqual(0);
        const box = await account.boundingBox();
        expect(box!.x + box!.width).toBeLessThanOrEqual(390);
        await screenshot(phone.p, 'layout-phone-menu-long-name');
      } finally {
        await phone.ctx.close();
      }
      const desk = await signedIn(DESKTOP, 'e2e-long-name', 'e2e-password');
      try {
        // One row: the user's part of the menu starts beside the brand, not under it.
        const brand = (await desk.p.locator('.brand').boundingBox())!;
        const who = (await desk.p.locator('.nav-user').boundingBox())!;
        expect(who.y).toBeLessThan(brand.y + brand.height);
        expect(await sideways(desk.p)).toBeLessThanOrEqual(0);
        await screenshot(desk.p, 'layout-desktop-header-long-name');
      } finally {
        await desk.ctx.close();
      }
    } finally {
      await adminApi('DELETE', `/user/${user.id}`);
    }
  });

  it('closes the phone menu with Escape and returns focus to the Menu button', async () => {
    const ctx = await browser.newContext(PHONE);
    const p = await ctx.newPage();
    collectPageErrors(p, pageErrors);
    try {
      await p.goto(gw.url);
      const menu = p.getByRole('button', { name: 'Menu' });
      await menu.click();
      expect(await menu.getAttribute('aria-expanded')).toBe('true');
      await p.getByRole('link', { name: 'Browse' }).focus();
      await p.keyboard.press('Escape');
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      expect(await p.getByRole('link', { name: 'Browse' }).isVisible()).toBe(false);
      expect(await p.evaluate<string>('document.activeElement?.textContent ?? ""')).toBe('Menu');
    } finally {
      await ctx.close();
    }
  });

  realOnly("makes each list's scrolling box a named region the keyboard can reach, on a phone", async () => {
    // A row in every list (an empty list shows its empty state, not a table).
    await adminApi('POST', '/app', {
      name: 'Scroll Box Sample',
      short_description: 'An app for the tables test.',
      category: 'tools',
      download_url: 'https://downloads.example.com/sample.zip',
    });
    await adminApi('POST', '/key', { name: 'scroll box key' });
    const { ctx, p } = await signedIn(PHONE, gw.admin.username, gw.admin.password);
    try {
      for (const [path, name] of [
        ['/admin/upstreams', 'Upstreams'],
        ['/admin/users', 'Users'],
        ['/admin/apps', 'Apps in the catalog'],
        ['/admin/models', 'Registered models'],
        ['/keys', 'Your API keys'],
      ] as const) {
        await p.goto(`${gw.url}${path}`);
        const box = p.getByRole('region', { name, exact: true });
        await box.waitFor();
        expect(await box.locator('table').count(), path).toBe(1);
        // Focusable, so arrow keys scroll a table wider than the phone.
        await box.focus();
        expect(
          await p.evaluate<string>('document.activeElement?.getAttribute("aria-label") ?? ""'),
          path,
        ).toBe(name);
      }
    } finally {
      await ctx.close();
    }
  });

  it('says the secret of a long-named key is shown once, and wraps the name inside the dialog', async () => {
    const name = `ci token ${'ز'.repeat(100)}`;
    for (const [options, label] of [
      [DESKTOP, 'desktop'],
      [PHONE, 'phone'],
    ] as const) {
      const { ctx, p } = await signedIn(options, gw.admin.username, gw.admin.password);
      try {
        await p.goto(`${gw.url}/keys`);
        await p.getByRole('button', { name: 'New API key' }).click();
        const dialog = p.getByRole('dialog');
        await dialog.getByLabel('Name (required)').fill(name);
        await dialog.getByRole('button', { name: 'Create key' }).click();
        await p.getByLabel('Secret key').waitFor();
        const said = dialog.locator('.secret > p').first();
        expect(await said.textContent()).toBe(
          `This is the only time the secret of “${name}” is shown: copy it now and keep it somewhere safe.`,
        );
        const outer = (await dialog.boundingBox())!;
        const inner = (await said.locator('strong').boundingBox())!;
        expect(inner.x + inner.width, label).toBeLessThanOrEqual(outer.x + outer.width);
        await screenshot(p, `layout-${label}-secret-long-name`);
      } finally {
        await ctx.close();
      }
    }
  });

  it('puts focus on the notice after a confirmed delete, the notice region being there before its text', async () => {
    await adminApi('POST', '/key', { name: 'e2e focus after delete' });
    const { ctx, p } = await signedIn(DESKTOP, gw.admin.username, gw.admin.password);
    try {
      await p.goto(`${gw.url}/keys`);
      await p.getByRole('button', { name: 'Delete e2e focus after delete' }).waitFor();
      // The live region is in the page, empty, before anything is said in it.
      const notice = p.locator('.notice[role="status"]');
      expect(await notice.count()).toBe(1);
      expect(await notice.textContent()).toBe('');
      await p.getByRole('button', { name: 'Delete e2e focus after delete' }).click();
      await p.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click();
      await p.getByText('Deleted key “e2e focus after delete”.').waitFor();
      await p.getByRole('button', { name: 'Delete e2e focus after delete' }).waitFor({ state: 'detached' });
      expect(await notice.count()).toBe(1);
      expect(await p.evaluate<string>('document.activeElement?.textContent ?? ""')).toBe(
        'Deleted key “e2e focus after delete”.',
      );
      expect(await p.evaluate<boolean>('document.activeElement === document.body')).toBe(false);
    } finally {
      await ctx.close();
    }
  });

  it('says inline which sign-in field is empty and starts on the username', async () => {
    const ctx = await browser.newContext(DESKTOP);
    const p = await ctx.newPage();
    collectPageErrors(p, pageErrors);
    const logins: string[] = [];
    p.on('request', (r) => new URL(r.url()).pathname === '/api/user/login' && logins.push(r.url()));
    const focusedName = () =>
      p.evaluate<string | null>('document.activeElement?.getAttribute("name") ?? null');
    try {
      await p.goto(`${gw.url}/login`);
      const username = p.getByLabel('Username');
      await username.waitFor();
      expect(await focusedName()).toBe('username');
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByText('Username is required.', { exact: true }).waitFor();
      await p.getByText('Password is required.', { exact: true }).waitFor();
      expect(await username.getAttribute('aria-invalid')).toBe('true');
      expect(await p.getByLabel('Password').getAttribute('aria-invalid')).toBe('true');
      expect(await focusedName()).toBe('username');
      // A name alone: only the password is missing.
      await username.fill(gw.admin.username);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByText('Password is required.', { exact: true }).waitFor();
      expect(await p.getByText('Username is required.').count()).toBe(0);
      expect(logins).toEqual([]);
      await p.getByLabel('Password').fill(gw.admin.password);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByRole('heading', { name: 'Find apps for your AI models' }).waitFor();
    } finally {
      await ctx.close();
    }
  });

  it('names categories as the chips do and keeps heading levels in order', async () => {
    const app = await adminApi<{ id: number }>('POST', '/app', {
      name: 'E2E Category Casing',
      category: 'productivity',
      short_description: 'Has a category.',
    });
    const ctx = await browser.newContext(DESKTOP);
    const p = await ctx.newPage();
    collectPageErrors(p, pageErrors);
    try {
      await p.goto(`${gw.url}/apps?keyword=Casing`);
      const card = p.locator('.app-card', { hasText: 'E2E Category Casing' });
      await card.waitFor();
      expect(await card.locator('.meta .badge').first().textContent()).toBe('Productivity');
      // Under the page's h1 the cards are h2, not h3.
      expect(await p.getByRole('heading', { level: 2, name: 'E2E Category Casing' }).count()).toBe(1);
      expect(await p.locator('main h3').count()).toBe(0);
      await p.goto(`${gw.url}/app/${app.id}`);
      await p.getByRole('heading', { level: 1, name: 'E2E Category Casing' }).waitFor();
      const crumb = p.locator('.breadcrumb a', { hasText: /productivity/i });
      expect(await crumb.textContent()).toBe('Productivity');
      expect(await p.locator('.detail-head .badge', { hasText: /productivity/i }).textContent()).toBe(
        'Productivity',
      );
      // The home page's sections are h2 and their cards h3.
      await p.goto(gw.url);
      await p.getByRole('heading', { level: 2, name: 'Featured' }).waitFor();
      await p.locator('.app-card').first().waitFor();
      expect(await p.locator('main .app-card h2').count()).toBe(0);
    } finally {
      await ctx.close();
      await adminApi('DELETE', `/app/${app.id}`);
    }
  });

  it('raised no uncaught errors in the page', () => {
    expect(pageErrors).toEqual([]);
  });
});
