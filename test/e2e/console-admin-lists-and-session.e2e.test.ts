import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from './browser.js';
import { type E2EGateway, startGatewayForE2E } from './gateway.js';
import { addSessionCookie, api, collectPageErrors, fieldErrors, login } from './session.js';

/**
 * The console as an administrator found it: the Apps list's filter, order and page lost on a
 * reload or Back, sort labels that did not say which way they sort, categories in their wire
 * spelling, more than 20 tags sent to be refused, a form lost when the session ended under it,
 * a playground that ignored the user's default model, and usage that could not be narrowed to
 * one user.
 */

let gw: E2EGateway;
let browser: Browser;
let ctx: BrowserContext;
let page: Page;
let cookie = '';
const errors: string[] = [];

/** The requests the page sends while `act` runs, as "METHOD /path". */
async function sentDuring(p: Page, act: () => Promise<void>, match: RegExp): Promise<string[]> {
  const seen: string[] = [];
  const record = (r: Request) => {
    const line = `${r.method()} ${new URL(r.url()).pathname}`;
    if (match.test(line)) seen.push(line);
  };
  p.on('request', record);
  try {
    await act();
  } finally {
    p.off('request', record);
  }
  return seen;
}

beforeAll(async () => {
  gw = await startGatewayForE2E();
  cookie = await login(gw, gw.admin.username, gw.admin.password);
  browser = await launchBrowser();
  ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await addSessionCookie(ctx, gw, cookie);
  page = await ctx.newPage();
  collectPageErrors(page, errors);
  // 23 apps: two pages of 20; every third one hidden.
  for (let i = 0; i < 23; i++) {
    await api(gw, cookie, 'POST', '/app', {
      name: `list app ${String(i).padStart(2, '0')}`,
      category: 'tools',
      status: i % 3 === 0 ? 2 : 1,
    });
  }
});

afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

describe('Admin → Apps list', () => {
  it('keeps the filter, order and page in the URL, through a reload and Back', async () => {
    await page.goto(`${gw.url}/admin/apps`);
    await page.getByRole('table', { name: 'Apps in the catalog' }).waitFor();
    await page.getByLabel('Sort by').selectOption('name asc');
    await page.waitForURL((u) => u.searchParams.get('order') === 'name asc');
    await page.getByRole('rowheader').first().getByText('list app 00').waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.waitForURL((u) => u.searchParams.get('p') === '1');
    await page.getByRole('rowheader').first().getByText('list app 20').waitFor();

    await page.reload();
    await page.getByRole('rowheader').first().getByText('list app 20').waitFor();
    expect(await page.getByLabel('Sort by').inputValue()).toBe('name asc');

    await page.goBack();
    await page.waitForURL((u) => !u.searchParams.has('p'));
    await page.getByRole('rowheader').first().getByText('list app 00').waitFor();

    await page.getByLabel('Show').selectOption('2');
    await page.waitForURL((u) => u.searchParams.get('status') === '2');
    await page.reload();
    expect(await page.getByLabel('Show').inputValue()).toBe('2');
    expect(await page.getByLabel('Sort by').inputValue()).toBe('name asc');
    // Hidden ones only: 00, 03, ... 21.
    await page.getByRole('rowheader').first().getByText('list app 00').waitFor();
    expect(await page.getByRole('rowheader').count()).toBe(8);
  });

  it('says a page past the end is not there, rather than that there are no apps', async () => {
    await page.goto(`${gw.url}/admin/apps?p=5`);
    await page.getByText('There is no page 6: the last is page 2.').waitFor();
    expect(await page.getByText('No apps yet').count()).toBe(0);
    await page.getByRole('button', { name: 'Go to page 2' }).click();
    await page.waitForURL((u) => u.searchParams.get('p') === '1');
    await page.getByRole('rowheader').first().waitFor();
  });

  it('keeps the list’s address when the editor opened from it closes', async () => {
    const apps = await api(gw, cookie, 'GET', '/app?page_size=100');
    const id = apps.find((a: { name: string }) => a.name === 'list app 22').id;
    // The editor opened by its address (the app page's Edit link), over a filtered list.
    await page.goto(`${gw.url}/admin/apps?status=1&order=name+desc&edit=${id}`);
    await page.getByRole('rowheader').first().getByText('list app 22').waitFor();
    await page
      .getByRole('dialog', { name: 'Edit list app 22' })
      .getByRole('button', { name: 'Cancel' })
      .click();
    expect(new URL(page.url()).search).toBe('?status=1&order=name+desc');
  });

  it('names what each order sorts by and which way', async () => {
    await page.goto(`${gw.url}/admin/apps`);
    await page.getByLabel('Sort by').waitFor();
    const options = await page
      .getByLabel('Sort by')
      .locator('option')
      .evaluateAll((os) => os.map((o) => [o.getAttribute('value'), o.textContent]));
    expect(options).toEqual([
      ['created_time desc', 'Created, newest first'],
      ['created_time asc', 'Created, oldest first'],
      ['updated_time desc', 'Updated, newest first'],
      ['name asc', 'Name, A to Z'],
      ['name desc', 'Name, Z to A'],
      ['download_count desc', 'Downloads, most first'],
      ['download_count asc', 'Downloads, fewest first'],
    ]);
    // Each one is an order the catalog takes.
    for (const [order] of options) await api(gw, cookie, 'GET', `/app?order=${encodeURIComponent(order!)}`);
  });
});

describe('the app form', () => {
  it('offers the categories by name, sending their wire values', async () => {
    await page.goto(`${gw.url}/admin/apps`);
    await page.getByRole('button', { name: 'New app' }).click();
    const dialog = page.getByRole('dialog');
    const options = await dialog
      .getByLabel('Category')
      .locator('option')
      .evaluateAll((os) => os.map((o) => [o.getAttribute('value'), o.textContent]));
    expect(options).toEqual([
      ['development', 'Development'],
      ['productivity', 'Productivity'],
      ['tools', 'Tools'],
      ['entertainment', 'Entertainment'],
      ['general', 'General'],
    ]);
    await dialog.getByLabel('Name (required)').fill('categorised app');
    await dialog.getByLabel('Category').selectOption({ label: 'Productivity' });
    await dialog.getByRole('button', { name: 'Create app' }).click();
    await page.getByText('Created “categorised app”.').waitFor();
    const apps = await api(gw, cookie, 'GET', '/app?page_size=100');
    expect(apps.find((a: { name: string }) => a.name === 'categorised app').category).toBe('productivity');
  });

  it('names a category in the catalog’s tab title as its heading does', async () => {
    await page.goto(`${gw.url}/apps?category=tools`);
    await page.getByRole('heading', { level: 1, name: 'Tools apps' }).waitFor();
    expect(await page.title()).toMatch(/^Tools apps/);
  });

  it('says under Tags that more than 20 are too many, before sending anything', async () => {
    await page.goto(`${gw.url}/admin/apps`);
    await page.getByRole('button', { name: 'New app' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name (required)').fill('tagged app');
    // 22 entries, one of them twice (and once more in other case): 21 tags as the catalog counts.
    const tags = Array.from({ length: 21 }, (_, i) => `tag${i}`);
    await dialog.getByLabel('Tags').fill([...tags, 'tag3', 'TAG4', ' '].join(', '));
    const sent = await sentDuring(
      page,
      async () => {
        await dialog.getByRole('button', { name: 'Create app' }).click();
        await dialog.locator('.field-error').first().waitFor();
      },
      /\/api\/app/,
    );
    expect(sent).toEqual([]);
    expect(await fieldErrors(dialog)).toEqual({ Tags: 'At most 20 tags; this has 21. Remove 1.' });
    expect(await page.evaluate<string | null>('document.activeElement?.getAttribute("name") ?? null')).toBe(
      'tags',
    );

    // Twenty are taken.
    await dialog.getByLabel('Tags').fill(tags.slice(0, 20).join(', '));
    await dialog.getByRole('button', { name: 'Create app' }).click();
    await page.getByText('Created “tagged app”.').waitFor();
  });

  it('keeps what was typed when the session ends, and saves it after signing in again', async () => {
    // A session of its own, ended below through the API as if it expired.
    const own = await login(gw, gw.admin.username, gw.admin.password);
    const c = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await addSessionCookie(c, gw, own);
    const p = await c.newPage();
    collectPageErrors(p, errors);
    try {
      await p.goto(`${gw.url}/admin/apps`);
      await p.getByRole('button', { name: 'New app' }).click();
      const form = p.getByRole('dialog', { name: 'New app' });
      await form.getByLabel('Name (required)').fill('saved after sign-in');
      await form.getByLabel('Short description').fill('typed before the session ended');

      const r = await fetch(`${gw.url}/api/user/logout`, { method: 'POST', headers: { cookie: own } });
      expect(r.status).toBe(200);
      await form.getByRole('button', { name: 'Create app' }).click();

      const again = p.getByRole('dialog', { name: 'Your session has ended' });
      await again.waitFor();
      await form.getByText('Your session has ended. Sign in again, then try once more.').waitFor();
      expect(await again.getByLabel('Username').inputValue()).toBe(gw.admin.username);
      // The dialog checks its fields as the Sign in page does (one shared form): a missing
      // password is said under it and the cursor goes there.
      await again.getByRole('button', { name: 'Sign in' }).click();
      await again.getByText('Password is required.', { exact: true }).waitFor();
      expect(await p.evaluate<string>('document.activeElement?.getAttribute("name") ?? ""')).toBe('password');
      await again.getByLabel('Password').fill(gw.admin.password);
      await again.getByRole('button', { name: 'Sign in' }).click();
      await again.waitFor({ state: 'detached' });

      expect(await form.getByLabel('Name (required)').inputValue()).toBe('saved after sign-in');
      expect(await form.getByLabel('Short description').inputValue()).toBe('typed before the session ended');
      await form.getByRole('button', { name: 'Create app' }).click();
      await p.getByText('Created “saved after sign-in”.').waitFor();
      const apps = await api(gw, cookie, 'GET', '/app?page_size=100');
      expect(apps.some((a: { name: string }) => a.name === 'saved after sign-in')).toBe(true);
    } finally {
      await c.close();
    }
  });

  it('shows Sign in required when the admin gives up signing in again', async () => {
    const own = await login(gw, gw.admin.username, gw.admin.password);
    const c = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await addSessionCookie(c, gw, own);
    const p = await c.newPage();
    try {
      await p.goto(`${gw.url}/admin/apps`);
      await p.getByRole('button', { name: 'New app' }).click();
      await p.getByRole('dialog', { name: 'New app' }).getByLabel('Name (required)').fill('never saved');
      await fetch(`${gw.url}/api/user/logout`, { method: 'POST', headers: { cookie: own } });
      await p.getByRole('dialog', { name: 'New app' }).getByRole('button', { name: 'Create app' }).click();
      const again = p.getByRole('dialog', { name: 'Your session has ended' });
      await again.getByRole('button', { name: 'Not now' }).click();
      await p.getByText('Sign in required', { exact: true }).waitFor();
      expect(await p.getByRole('dialog').count()).toBe(0);
    } finally {
      await c.close();
    }
  });
});

describe('playground and usage', () => {
  const SECOND = 'e2e/second-chat';
  let userId = 0;
  let userKey = '';

  beforeAll(async () => {
    await api(gw, cookie, 'POST', '/model', {
      id: SECOND,
      name: 'Second chat model',
      context_length: 8192,
      max_completion_tokens: 1024,
      pricing: { prompt: '0.000001', completion: '0.000002', request: '0', image: '0' },
      input_modalities: ['text'],
      output_modalities: ['text'],
      supported_parameters: ['temperature', 'max_tokens'],
    });
    const channels = await api(gw, cookie, 'GET', '/channel?page_size=100');
    const fake = channels.find((ch: { name: string }) => ch.name === 'fake upstream');
    await api(gw, cookie, 'PUT', '/channel', {
      id: fake.id,
      models: [gw.chatModel, SECOND],
      model_mapping: { [gw.chatModel]: 'fake-chat', [SECOND]: 'fake-chat' },
    });
    const made = await api(gw, cookie, 'POST', '/user', {
      username: 'usage-user',
      password: 'usage-password',
    });
    userId = made.id;
    const userCookie = await login(gw, 'usage-user', 'usage-password');
    userKey = (await api(gw, userCookie, 'POST', '/key', { name: 'usage key' })).key;
  });

  it('starts on the user’s default model, not the first one listed', async () => {
    const r = await fetch(`${gw.url}/v1/models?endpoint=chat`, {
      headers: { authorization: `Bearer ${userKey}` },
    });
    const ids = ((await r.json()) as { data: { id: string }[] }).data.map((m) => m.id);
    expect(ids.length).toBeGreaterThan(1);
    const wanted = ids.at(-1)!;
    const userCookie = await login(gw, 'usage-user', 'usage-password');
    await api(gw, userCookie, 'PUT', '/user/self', { default_model: wanted });
    const c = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await addSessionCookie(c, gw, userCookie);
    const p = await c.newPage();
    try {
      await p.goto(`${gw.url}/playground`);
      await p.getByLabel('API key').fill(userKey);
      await p.locator('#pg-model option').nth(1).waitFor({ state: 'attached' });
      expect(await p.locator('#pg-model').inputValue()).toBe(wanted);
    } finally {
      await c.close();
    }
  });

  it('lets an admin narrow usage to one user, kept in the URL; a user has no such filter', async () => {
    const rootKey = (await api(gw, cookie, 'POST', '/key', { name: 'root usage key' })).key;
    const chat = async (key: string) => {
      const r = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: gw.chatModel, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(r.status).toBe(200);
    };
    await chat(userKey);
    await chat(userKey);
    await chat(rootKey);
    const requests = async (q: string) =>
      ((await api(gw, cookie, 'GET', `/log/stats?group=model${q}`)) as { requests: number }[]).reduce(
        (n, b) => n + b.requests,
        0,
      );
    await expect.poll(() => requests(`&user_id=${userId}`)).toBe(2);
    const everyone = await requests('');

    await page.goto(`${gw.url}/usage`);
    const stat = page.locator('.stat').filter({ hasText: 'Requests' }).locator('strong');
    await stat.getByText(String(everyone), { exact: true }).waitFor();
    await page.getByLabel('User').selectOption({ label: 'usage-user' });
    await page.waitForURL((u) => u.searchParams.get('user_id') === String(userId));
    await stat.getByText('2', { exact: true }).waitFor();
    await page.reload();
    expect(await page.getByLabel('User').inputValue()).toBe(String(userId));
    await stat.getByText('2', { exact: true }).waitFor();
    await page.getByLabel('User').selectOption({ label: 'Everyone' });
    await page.waitForURL((u) => !u.searchParams.has('user_id'));
    await stat.getByText(String(everyone), { exact: true }).waitFor();

    const userCookie = await login(gw, 'usage-user', 'usage-password');
    const c = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await addSessionCookie(c, gw, userCookie);
    const p = await c.newPage();
    try {
      // A user id in a user's URL is not theirs to ask for: their own usage shows.
      await p.goto(`${gw.url}/usage?user_id=1`);
      await p.locator('.stat').filter({ hasText: 'Requests' }).getByText('2', { exact: true }).waitFor();
      expect(await p.getByLabel('User').count()).toBe(0);
    } finally {
      await c.close();
    }
  });

  it('raised no script errors', () => {
    expect(errors).toEqual([]);
  });
});
