import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshot } from './browser.js';
import { type E2EGateway, startGatewayForE2E } from './gateway.js';
import { addSessionCookie, api, collectPageErrors, login } from './session.js';

/**
 * What the console let an admin choose: the mark that an admin manages a user's keys (only the
 * API could clear it), the Logs page's user (a bare id to type), and the default model (every
 * registry model, served or not).
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
  ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await addSessionCookie(ctx, gw, cookie);
  page = await ctx.newPage();
  collectPageErrors(page, pageErrors);
});

afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

describe('choices an admin makes in the console', () => {
  realOnly('shows that an admin manages a user’s keys, and lets an admin clear and set it', async () => {
    const bob = await adminApi<{ id: number }>('POST', '/user', {
      username: 'e2e-held',
      password: 'e2e-held-password',
    });
    // An admin's key for the member marks them (docs/architecture.md).
    await adminApi('POST', '/key', { name: 'held key', user_id: bob.id });
    expect(
      (await adminApi<{ keys_admin_managed: boolean }>('GET', `/user/${bob.id}`)).keys_admin_managed,
    ).toBe(true);
    await page.goto(`${gw.url}/admin/users`);
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: /e2e-held/ }) });
    await row.getByText('Keys managed by an admin', { exact: true }).waitFor();
    await screenshot(page, 'users-keys-managed');

    await row.getByRole('button', { name: 'Edit e2e-held' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit e2e-held' });
    const mark = dialog.getByLabel(/An admin manages this user’s API keys/);
    expect(await mark.isChecked()).toBe(true);
    await mark.uncheck();
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved user e2e-held.').waitFor();
    await expect
      .poll(
        async () =>
          (await adminApi<{ keys_admin_managed: boolean }>('GET', `/user/${bob.id}`)).keys_admin_managed,
      )
      .toBe(false);
    await expect.poll(() => row.getByText('Keys managed by an admin').count()).toBe(0);

    // The member can make a key of their own again; set once more, they cannot.
    const own = await login(gw, 'e2e-held', 'e2e-held-password');
    await api(gw, own, 'POST', '/key', { name: 'own key' });
    await row.getByRole('button', { name: 'Edit e2e-held' }).click();
    await dialog.getByLabel(/An admin manages this user’s API keys/).check();
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await row.getByText('Keys managed by an admin', { exact: true }).waitFor();
    const refused = await fetch(`${gw.url}/api/key`, {
      method: 'POST',
      headers: { cookie: own, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'another' }),
    });
    expect(refused.status).toBe(403);

    // An edit of something else leaves the mark as it is.
    await row.getByRole('button', { name: 'Edit e2e-held' }).click();
    await dialog.getByLabel('Display name').fill('Held Bob');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await row.getByText('Held Bob').waitFor();
    expect(
      (await adminApi<{ keys_admin_managed: boolean }>('GET', `/user/${bob.id}`)).keys_admin_managed,
    ).toBe(true);
  });

  it('filters the logs by a user chosen by name, keeping the id in the URL', async () => {
    const carol = await adminApi<{ id: number }>('POST', '/user', {
      username: 'e2e-logs-carol',
      password: 'e2e-carol-password',
      display_name: 'Carol Logs',
    });
    await page.goto(`${gw.url}/logs`);
    const select = page.getByLabel('User', { exact: true });
    await select.locator(`option[value="${carol.id}"]`).waitFor({ state: 'attached' });
    expect(await select.locator(`option[value="${carol.id}"]`).textContent()).toBe(
      'Carol Logs (e2e-logs-carol)',
    );
    await select.selectOption(String(carol.id));
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(`**/logs?user_id=${carol.id}`);
    // A reload (a shared link) chooses the same user again.
    await page.reload();
    await select.locator(`option[value="${carol.id}"]`).waitFor({ state: 'attached' });
    expect(await select.inputValue()).toBe(String(carol.id));

    // A user since deleted stays chosen by id, said to be deleted.
    await adminApi('DELETE', `/user/${carol.id}`);
    await page.reload();
    await page.getByText(`user #${carol.id} (deleted)`).waitFor({ state: 'attached' });
    expect(await select.inputValue()).toBe(String(carol.id));
    await page.getByRole('button', { name: 'Reset' }).click();
    await page.waitForURL(/\/logs$/);
    expect(await select.inputValue()).toBe('');
  });

  realOnly(
    'offers as the default model only what a channel serves, keeping an unserved setting marked',
    async () => {
      // In the registry, served by no channel: no request could use it.
      await adminApi('POST', '/model', { id: 'e2e/unserved', name: 'Unserved model' });
      await adminApi('PUT', '/user/self', { default_model: 'e2e/gone-model' });
      await page.goto(`${gw.url}/account`);
      await page.getByText('Used when a request names no model.').waitFor();
      const select = page.getByLabel('Default model');
      await select.locator(`option[value="${gw.chatModel}"]`).waitFor({ state: 'attached' });
      expect(await select.locator('option[value="e2e/unserved"]').count()).toBe(0);
      // The setting as it is, named and marked, not silently "None".
      expect(await select.inputValue()).toBe('e2e/gone-model');
      expect(await select.locator('option[value="e2e/gone-model"]').textContent()).toBe(
        'e2e/gone-model (not served now)',
      );
      // Saving another setting keeps it.
      await page.getByLabel('Display name').fill('Root (choices)');
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.getByText('Settings saved.').waitFor();
      expect(await adminApi('GET', '/user/self')).toMatchObject({ default_model: 'e2e/gone-model' });
      await adminApi('PUT', '/user/self', { default_model: '' });
    },
  );

  it('does not call a list empty when the last row of its last page is deleted', async () => {
    const totalOf = async (path: string) => {
      const r = await fetch(`${gw.url}/api${path}`, { headers: { cookie } });
      return ((await r.json()) as { total: number }).total;
    };
    // Exactly 21 users and 21 of the admin's own keys: one row on page 2 of each (pages of 20).
    let users = await totalOf('/user?page_size=1');
    for (; users < 21; users++)
      await adminApi('POST', '/user', { username: `e2e-fill-${users}`, password: 'e2e-fill-password' });
    const me = await adminApi<{ id: number }>('GET', '/user/self');
    let keys = await totalOf(`/key?page_size=1&user_id=${me.id}`);
    for (; keys < 21; keys++) await adminApi('POST', '/key', { name: `e2e-fill-key-${keys}` });
    expect([await totalOf('/user?page_size=1'), await totalOf(`/key?page_size=1&user_id=${me.id}`)]).toEqual([
      21, 21,
    ]);

    const lastRowGone = async (verb: string) => {
      const pager = page.getByRole('navigation', { name: 'Pagination' });
      await pager.getByRole('button', { name: 'Next →' }).click();
      await pager.getByText('Page 2 of 2').waitFor();
      await page.getByRole('rowheader').first().waitFor();
      expect(await page.getByRole('rowheader').count()).toBe(1);
      await page
        .getByRole('button', { name: new RegExp(`^${verb} `) })
        .first()
        .click();
      await page.getByRole('dialog').getByRole('button', { name: verb, exact: true }).click();
      await pager.getByText('There is no page 2: the last is page 1.').waitFor();
    };

    await page.goto(`${gw.url}/admin/users`);
    await lastRowGone('Delete');
    expect(await page.getByText('No users').count()).toBe(0);

    await page.goto(`${gw.url}/keys`);
    await lastRowGone('Delete');
    expect(await page.getByText('No API keys yet').count()).toBe(0);
  });

  it('takes a row deleted elsewhere (a 404 on Delete) as gone, not as a failure that leaves it listed', async () => {
    const key = await adminApi<{ id: number }>('POST', '/key', { name: 'e2e-gone-key' });
    const user = await adminApi<{ id: number }>('POST', '/user', {
      username: 'e2e-gone-user',
      password: 'e2e-gone-password',
    });
    await page.goto(`${gw.url}/keys`);
    await page.getByRole('button', { name: 'Delete e2e-gone-key' }).click();
    // Deleted in another tab while the dialog is open.
    await adminApi('DELETE', `/key/${key.id}`);
    await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByText('Key “e2e-gone-key” was already deleted.').waitFor();
    expect(await page.getByRole('dialog').count()).toBe(0);
    await expect.poll(() => page.getByRole('rowheader', { name: /e2e-gone-key/ }).count()).toBe(0);

    await page.goto(`${gw.url}/admin/users`);
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: /e2e-gone-user/ }) });
    // The list is paged: the new user may be on a later page.
    const pager = page.getByRole('navigation', { name: 'Pagination' });
    await page.getByRole('rowheader').first().waitFor();
    for (let shown = 1; (await row.count()) === 0 && shown < 5; shown++) {
      await pager.getByRole('button', { name: 'Next →' }).click();
      await pager.getByText(new RegExp(`^Page ${shown + 1} of`)).waitFor();
      // The last page's rows stay until the next one's arrive.
      await page.waitForLoadState('networkidle');
    }
    await row.getByRole('button', { name: 'Delete e2e-gone-user' }).click();
    await adminApi('DELETE', `/user/${user.id}`);
    await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByText('User e2e-gone-user was already deleted.').waitFor();
    await expect.poll(() => row.count()).toBe(0);
  });

  realOnly(
    'tells a member whose keys an admin manages to ask one, before they fill in a key form',
    async () => {
      const dan = await adminApi<{ id: number }>('POST', '/user', {
        username: 'e2e-held-dan',
        password: 'e2e-dan-password',
      });
      const own = await login(gw, 'e2e-held-dan', 'e2e-dan-password');
      const c = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      await addSessionCookie(c, gw, own);
      const p = await c.newPage();
      collectPageErrors(p, pageErrors);
      try {
        await p.goto(`${gw.url}/keys`);
        const create = p.getByRole('button', { name: 'New API key' });
        await p.getByRole('heading', { name: 'API keys' }).waitFor();
        expect(await create.isDisabled()).toBe(false);
        // Marked while the tab is open (an admin's key for Dan): the page, opened again, says so.
        await adminApi('POST', '/key', { name: 'dan by admin', user_id: dan.id });
        const nav = p.locator('header');
        await nav.getByRole('link', { name: 'Playground', exact: true }).click();
        await p.getByRole('heading', { name: 'Playground' }).waitFor();
        await nav.getByRole('link', { name: 'API keys', exact: true }).click();
        await p.getByText('An administrator manages your API keys: ask one for a new key.').waitFor();
        expect(await create.isDisabled()).toBe(true);
        // Cleared: offered again.
        await adminApi('PUT', '/user', { id: dan.id, keys_admin_managed: false });
        await p.reload();
        await p.getByRole('heading', { name: 'API keys' }).waitFor();
        await expect.poll(() => create.isDisabled()).toBe(false);
      } finally {
        await c.close();
      }
    },
  );

  it('raised no script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
