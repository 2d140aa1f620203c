import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshot } from './browser.js';
import { type E2EGateway, startGatewayForE2E } from './gateway.js';
import { api as apiAs, collectPageErrors, login as signIn, signInThroughPage } from './session.js';

/**
 * What a black-box review found left over from an earlier moment: Account's spend as it was at
 * sign-in, the secret of a deleted key still offered (and filled in) by the playground, the key
 * secrets of the user before kept for the one who signs in next in the same tab, and a thumbnail
 * that cannot be loaded shown as the browser's broken-image icon.
 */

let gw: E2EGateway;
let browser: Browser;
let cookie = '';
const pageErrors: string[] = [];
const realOnly = it.skipIf(process.env.E2E_GATEWAY === 'stub');

const api = <T = any>(method: string, path: string, body?: unknown, as = cookie) =>
  apiAs<T>(gw, as, method, path, body);
const login = (username: string, password: string) => signIn(gw, username, password);

async function newPage(): Promise<{ ctx: BrowserContext; p: Page }> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const p = await ctx.newPage();
  collectPageErrors(p, pageErrors);
  return { ctx, p };
}

/** Creates a key on the API keys page and closes its secret dialog; returns the secret. */
async function createKey(p: Page, name: string): Promise<string> {
  await p.getByRole('link', { name: 'API keys' }).click();
  await p.getByRole('button', { name: 'New API key' }).click();
  const dialog = p.getByRole('dialog');
  await dialog.getByLabel('Name (required)').fill(name);
  await dialog.getByRole('button', { name: 'Create key' }).click();
  const secret = await p.getByLabel('Secret key').inputValue();
  await p.getByRole('button', { name: 'Done' }).click();
  return secret;
}

/** Opens the playground from the menu, as a user moves between pages (no reload). */
async function openPlayground(p: Page): Promise<void> {
  await p.getByRole('link', { name: 'Playground', exact: true }).click();
  await p.getByRole('heading', { name: 'Playground' }).waitFor();
}

beforeAll(async () => {
  gw = await startGatewayForE2E();
  cookie = await login(gw.admin.username, gw.admin.password);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

describe('data left over from an earlier moment', () => {
  realOnly('shows on Account what was spent since signing in, reached from the menu', async () => {
    await api('POST', '/user', { username: 'e2e-spender', password: 'e2e-spender-password' });
    const own = await login('e2e-spender', 'e2e-spender-password');
    const { key } = await api<{ key: string }>('POST', '/key', { name: 'spend' }, own);
    const { ctx, p } = await newPage();
    try {
      await signInThroughPage(p, gw, 'e2e-spender', 'e2e-spender-password');
      await p
        .locator('header')
        .getByRole('link', { name: /e2e-spender/ })
        .click();
      const quota = p.getByRole('region', { name: 'Quota' });
      await quota.getByText('$0.00 used · unlimited').waitFor();
      // A request made after the page read the session (a script, another tab, the playground).
      const chat = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: gw.chatModel, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(chat.status).toBe(200);
      await expect
        .poll(async () => (await api<{ quota_used: number }>('GET', '/user/self', undefined, own)).quota_used)
        .toBeGreaterThan(0);
      // Away and back through the menu: Account shows the spend, not the figure read at sign-in.
      await p.getByRole('link', { name: 'API keys' }).click();
      await p.getByRole('heading', { name: 'API keys' }).waitFor();
      await p
        .locator('header')
        .getByRole('link', { name: /e2e-spender/ })
        .click();
      await quota.getByText(/^\$0\.0*[1-9][0-9]* used · unlimited$/).waitFor();
      await screenshot(p, 'stale-account-spend');
    } finally {
      await ctx.close();
    }
  });

  realOnly(
    'forgets the secret of a key deleted in the tab: the playground neither offers nor fills it in',
    async () => {
      const { ctx, p } = await newPage();
      try {
        await signInThroughPage(p, gw, gw.admin.username, gw.admin.password);
        const secret = await createKey(p, 'e2e-soon-gone');
        await openPlayground(p);
        expect(await p.getByLabel('API key').inputValue()).toBe(secret);
        await p.getByLabel('Remember the key in this tab').check();
        await p.getByRole('link', { name: 'API keys' }).click();
        await p.getByRole('button', { name: 'Delete e2e-soon-gone' }).click();
        await p.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
        await p.getByText('Deleted key “e2e-soon-gone”.').waitFor();
        await openPlayground(p);
        expect(await p.getByLabel('API key').inputValue()).toBe('');
        expect(await p.getByRole('option', { name: /e2e-soon-gone/ }).count()).toBe(0);
        expect(
          await p.evaluate<string | null>("sessionStorage.getItem('modelgate.playground.key')"),
        ).toBeNull();
        // Nothing was asked with the deleted key either.
        expect(await p.getByText('invalid API key').count()).toBe(0);
      } finally {
        await ctx.close();
      }
    },
  );

  realOnly(
    'does not hand the key secrets of the user before to the next one signing in in the tab',
    async () => {
      await api('POST', '/user', { username: 'e2e-next-user', password: 'e2e-next-user-password' });
      const { ctx, p } = await newPage();
      try {
        await signInThroughPage(p, gw, gw.admin.username, gw.admin.password);
        const secret = await createKey(p, 'e2e-admins-own');
        await openPlayground(p);
        expect(await p.getByLabel('API key').inputValue()).toBe(secret);
        await p.getByLabel('Remember the key in this tab').check();
        // Someone else signs in in this tab without signing out first (the address typed).
        await signInThroughPage(p, gw, 'e2e-next-user', 'e2e-next-user-password');
        await openPlayground(p);
        expect(await p.getByLabel('API key').inputValue()).toBe('');
        expect(
          await p.evaluate<string | null>("sessionStorage.getItem('modelgate.playground.key')"),
        ).toBeNull();
      } finally {
        await ctx.close();
      }
    },
  );

  realOnly('signing in again as the same user keeps the key the tab remembers', async () => {
    const { ctx, p } = await newPage();
    try {
      await signInThroughPage(p, gw, gw.admin.username, gw.admin.password);
      const secret = await createKey(p, 'e2e-kept');
      await openPlayground(p);
      await p.getByLabel('Remember the key in this tab').check();
      await signInThroughPage(p, gw, gw.admin.username, gw.admin.password);
      await openPlayground(p);
      expect(await p.getByLabel('API key').inputValue()).toBe(secret);
    } finally {
      await ctx.close();
    }
  });
});

describe('app thumbnails', () => {
  realOnly('shows the first letter of the name when a thumbnail cannot be loaded', async () => {
    const app = await api<{ id: number }>('POST', '/app', {
      name: 'Zeta Broken Thumb',
      short_description: 'Its thumbnail link answers 404.',
      thumbnail_url: `${gw.upstreamUrl}/no-such-thumbnail.png`,
    });
    const { ctx, p } = await newPage();
    try {
      await p.goto(`${gw.url}/app/${app.id}`);
      await p.getByRole('heading', { name: 'Zeta Broken Thumb' }).waitFor();
      const head = p.locator('.detail-head');
      await head.locator('.thumb-letter', { hasText: 'Z' }).waitFor();
      expect(await head.locator('img').count()).toBe(0);
      await screenshot(p, 'thumb-fallback-detail');
      await p.goto(`${gw.url}/apps?keyword=${encodeURIComponent('Zeta Broken Thumb')}`);
      const card = p.getByRole('article').filter({ hasText: 'Zeta Broken Thumb' });
      await card.locator('.thumb-letter', { hasText: 'Z' }).waitFor();
      expect(await card.locator('img').count()).toBe(0);
    } finally {
      await ctx.close();
    }
  });

  it('raised no uncaught errors in the page', () => {
    expect(pageErrors).toEqual([]);
  });
});
