import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { launchBrowser, screenshot } from './browser.js';
import { type E2EGateway, startGatewayForE2E } from './gateway.js';
import { addSessionCookie, fieldErrors, login as signIn } from './session.js';

/**
 * The console's forms and lists as a black-box reviewer found them: a user's quota that no form
 * set, key owners by id, empty states that ignored the filters, form checks one at a time in the
 * server's words, a name cut short unseen, a failed playground answer announced as complete,
 * upstream failures shown three ways, double clicks sending two changes, names that differed
 * between pages, and a root's own role and status offered though always refused.
 */

let gw: E2EGateway;
let browser: Browser;
let ctx: BrowserContext;
let page: Page;
let cookie = '';
/** Answers every chat with a 500, for the playground's failed turn. */
let failing: FakeUpstream;
const FAILING_MODEL = 'e2e/failing-chat';
const realOnly = it.skipIf(process.env.E2E_GATEWAY === 'stub');

async function call(method: string, path: string, body?: unknown, as = cookie) {
  const r = await fetch(`${gw.url}/api${path}`, {
    method,
    headers: body === undefined ? { cookie: as } : { 'content-type': 'application/json', cookie: as },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as { data: any; message?: string } };
}

/** A call to /api as the administrator; fails the test unless it answers 200. */
async function adminApi<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const r = await call(method, path, body);
  expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(200);
  return r.body.data as T;
}

const login = (username: string, password: string) => signIn(gw, username, password);

/** The requests the page sends while `act` runs, as "METHOD /path". */
async function sentDuring(act: () => Promise<void>, match: RegExp): Promise<string[]> {
  const seen: string[] = [];
  const record = (r: Request) => {
    const line = `${r.method()} ${new URL(r.url()).pathname}`;
    if (match.test(line)) seen.push(line);
  };
  page.on('request', record);
  try {
    await act();
  } finally {
    page.off('request', record);
  }
  return seen;
}

beforeAll(async () => {
  gw = await startGatewayForE2E();
  cookie = await login(gw.admin.username, gw.admin.password);
  browser = await launchBrowser();
  ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await addSessionCookie(ctx, gw, cookie);
  page = await ctx.newPage();
  failing = await startFakeUpstream({
    'POST /v1/chat/completions': {
      status: 500,
      json: { error: { message: 'the fake upstream broke', type: 'server_error' } },
    },
  });
});

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await failing?.close();
});

describe('users and quotas', () => {
  it('sets a user’s quota in the user form and shows it in the list and on Account', async () => {
    await page.goto(`${gw.url}/admin/users`);
    // One name for the page: the menu's, the tab's and the heading's.
    await page.getByRole('heading', { name: 'Users', exact: true }).waitFor();
    expect(await page.title()).toMatch(/^Users/);
    await page.getByRole('button', { name: 'New user' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Username').fill('quota-user');
    await dialog.getByLabel('Password', { exact: false }).first().fill('quota-user-password');
    await dialog.getByLabel('Quota (USD)').fill('2.5');
    await dialog.getByRole('button', { name: 'Create user' }).click();
    await page.getByText('Saved user quota-user.').waitFor();
    const made = (
      await adminApi<Array<{ id: number; username: string; quota_limit: number | null }>>(
        'GET',
        '/user?page_size=100',
      )
    ).find((u) => u.username === 'quota-user')!;
    expect(made.quota_limit).toBe(2.5);
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'quota-user' }) });
    expect(await page.getByRole('columnheader', { name: 'Quota' }).count()).toBe(1);
    await row.getByText('$0.00 of $2.50').waitFor();

    // Emptied: no limit again.
    await row.getByRole('button', { name: 'Edit quota-user' }).click();
    expect(await dialog.getByLabel('Quota (USD)').inputValue()).toBe('2.5');
    await dialog.getByLabel('Quota (USD)').fill('');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await row.getByText('$0.00 used · unlimited').waitFor();
    const after = await call('GET', `/user/${made.id}`);
    expect(after.body.data.quota_limit).toBeNull();

    // Your own, read only, on Account.
    const me = await adminApi<{ id: number }>('GET', '/user/self');
    await adminApi('PUT', '/user', { id: me.id, quota_limit: 40 });
    await page.goto(`${gw.url}/account`);
    const quota = page.getByRole('region', { name: 'Quota' });
    await quota.getByText('$0.00 of $40.00').waitFor();
    expect(await quota.locator('input').count()).toBe(0);
    await adminApi('PUT', '/user', { id: me.id, quota_limit: null });
  });

  it('shows the last root’s own role and status as not changeable, and says why', async () => {
    await page.goto(`${gw.url}/admin/users`);
    await page.getByRole('button', { name: `Edit ${gw.admin.username}`, exact: true }).click();
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.getByLabel('Role').isDisabled()).toBe(true);
    expect(await dialog.getByLabel('Status').isDisabled()).toBe(true);
    expect(await dialog.getByText(/You are the only enabled root/).count()).toBe(2);
    await screenshot(page, 'forms-root-self-edit');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
  });

  it('shows an admin their own role, status and quota as set by a user above them', async () => {
    const made = await adminApi<{ id: number }>('POST', '/user', {
      username: 'forms-admin',
      password: 'forms-admin-password',
      role: 10,
      quota_limit: 3,
    });
    const adminCookie = await login('forms-admin', 'forms-admin-password');
    const c = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await addSessionCookie(c, gw, adminCookie);
    const p = await c.newPage();
    try {
      await p.goto(`${gw.url}/admin/users`);
      await p.getByRole('button', { name: 'Edit forms-admin', exact: true }).click();
      const dialog = p.getByRole('dialog');
      for (const label of ['Role', 'Status', 'Quota (USD)'])
        expect(await dialog.getByLabel(label).isDisabled(), label).toBe(true);
      expect(await dialog.getByLabel('Quota (USD)').inputValue()).toBe('3');
      expect(await dialog.getByText('Your role, status and quota are set by a user above you.').count()).toBe(
        3,
      );
      expect(await dialog.getByLabel('New password').count()).toBe(0);
      // What is theirs to change still saves: the locked fields are not sent.
      await dialog.getByLabel('Display name').fill('Forms Admin');
      await dialog.getByRole('button', { name: 'Save changes' }).click();
      await p.getByText('Saved user forms-admin.').waitFor();
      const after = await adminApi<{ display_name: string; quota_limit: number }>('GET', `/user/${made.id}`);
      expect(after).toMatchObject({ display_name: 'Forms Admin', quota_limit: 3 });
    } finally {
      await c.close();
    }
  });
});

describe('API keys', () => {
  it('names the owner of every user’s key by username', async () => {
    const alice = await adminApi<{ id: number }>('POST', '/user', {
      username: 'owner-alice',
      display_name: 'Alice Owner',
      password: 'owner-alice-password',
    });
    const aliceCookie = await login('owner-alice', 'owner-alice-password');
    const made = await call('POST', '/key', { name: 'alice key' }, aliceCookie);
    expect(made.status).toBe(200);
    await page.goto(`${gw.url}/keys`);
    await page.getByLabel("Show every user's keys").check();
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: /alice key/ }) });
    await row.getByText('owner-alice').waitFor();
    expect(await row.textContent()).toContain('Alice Owner');
    expect(await row.textContent()).not.toContain(`User #${alice.id}`);
    await page.getByLabel("Show every user's keys").uncheck();
  });

  it('checks every field of the key form at once, in plain words, before sending', async () => {
    await page.goto(`${gw.url}/keys`);
    await page.getByRole('button', { name: 'New API key' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name', { exact: false }).first().fill('n'.repeat(200));
    await dialog.getByLabel('Quota (USD)').fill('-5');
    await dialog.getByLabel('Requests per minute').fill('0');
    await dialog.getByLabel('Tokens per minute').fill('1.5');
    const sent = await sentDuring(async () => {
      await dialog.getByRole('button', { name: 'Create key' }).click();
      await dialog.getByText('At least 1.').waitFor();
    }, /^POST \/api\/key$/);
    expect(sent).toEqual([]);
    expect(await fieldErrors(dialog)).toEqual({
      'Name (required)': 'At most 128 characters.',
      'Quota (USD)': 'At least 0.',
      'Requests per minute': 'At least 1.',
      'Tokens per minute': 'A whole number.',
    });
    await screenshot(page, 'forms-key-checks');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
  });

  it('sends one change for a double-clicked Disable', async () => {
    await adminApi('POST', '/key', { name: 'double click key' });
    await page.goto(`${gw.url}/keys`);
    const button = page.getByRole('button', { name: 'Disable double click key', exact: true });
    const sent = await sentDuring(async () => {
      await button.dblclick();
      await page.getByText('Key “double click key” disabled.').waitFor();
      await page.getByRole('button', { name: 'Enable double click key', exact: true }).waitFor();
    }, /^PUT \/api\/key$/);
    expect(sent).toEqual(['PUT /api/key']);
  });
});

describe('account', () => {
  it('checks a new password’s length in the form, in the words of its hint', async () => {
    await page.goto(`${gw.url}/account`);
    const form = page.getByRole('region', { name: 'Password' });
    await form.getByLabel('Current password').fill(gw.admin.password);
    await form.getByLabel('New password').fill('short');
    const sent = await sentDuring(async () => {
      await form.getByRole('button', { name: 'Change password' }).click();
      await form.getByText('At least 8 characters.', { exact: true }).nth(1).waitFor();
    }, /^PUT \/api\/user\/self$/);
    expect(sent).toEqual([]);
    expect(await form.getByText(/Must NOT have/).count()).toBe(0);
  });
});

describe('apps', () => {
  it('says an empty filtered list matches nothing, uses the search’s sort names and category labels', async () => {
    await adminApi('POST', '/app', { name: 'Form Tools App', category: 'tools' });
    await page.goto(`${gw.url}/admin/apps`);
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'Form Tools App' }) });
    await row.getByRole('cell', { name: 'Tools', exact: true }).waitFor();
    const sorts = await page.getByLabel('Sort by').locator('option').allTextContents();
    expect(sorts).toEqual(expect.arrayContaining(['Name, A to Z', 'Downloads, most first']));
    await page.getByLabel('Show').selectOption('2');
    await page.getByText('Nothing matches these filters.').waitFor();
    expect(await page.getByText('No apps yet').count()).toBe(0);
    await page.getByRole('button', { name: 'Show all apps' }).click();
    await row.waitFor();
  });

  it('says a name past 128 characters is too long, and sends nothing, rather than cutting it', async () => {
    await page.goto(`${gw.url}/admin/apps`);
    await page.getByRole('button', { name: 'New app' }).click();
    const dialog = page.getByRole('dialog');
    const name = dialog.getByLabel('Name (required)');
    await name.fill('L'.repeat(200));
    expect((await name.inputValue()).length).toBe(200);
    const sent = await sentDuring(async () => {
      await dialog.getByRole('button', { name: 'Create app' }).click();
      await dialog.getByText('At most 128 characters.').waitFor();
    }, /^POST \/api\/app$/);
    expect(sent).toEqual([]);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
  });
});

describe('logs', () => {
  it('says a filtered empty list matches nothing, and offers clearing the filters', async () => {
    await page.goto(`${gw.url}/logs?model=no-such-model`);
    await page.getByText('Nothing matches these filters.').waitFor();
    expect(await page.getByText('No requests found').count()).toBe(0);
    await page.getByRole('button', { name: 'Clear the filters' }).click();
    await expect.poll(() => new URL(page.url()).search).toBe('');
    // The same words as every form for an id that is not one.
    await page.getByLabel('Key id').fill('0');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('At least 1.').waitFor();
  });
});

describe('upstreams', () => {
  realOnly('shows Test and Refresh failures in one panel, in console words', async () => {
    // A port nothing listens on: the listing fails, so the channel serves no models.
    const made = await adminApi<{ id: number }>('POST', '/channel', {
      name: 'closed port',
      kind: 'openai-compatible',
      base_url: 'http://127.0.0.1:9/v1',
      keys: ['sk-closed'],
      status: 2,
    });
    try {
      await page.goto(`${gw.url}/admin/upstreams`);
      const row = page
        .getByRole('row')
        .filter({ has: page.getByRole('button', { name: 'Edit closed port', exact: true }) });
      await row.getByRole('button', { name: 'Test closed port', exact: true }).click();
      const test = page.getByRole('region', { name: 'Test of closed port failed' });
      await test.getByText(/its model list could not be read/).waitFor();
      expect(await test.textContent()).not.toContain('/api/');
      expect(await test.textContent()).toContain('Refresh');

      await row.getByRole('button', { name: 'Refresh the models of closed port' }).click();
      const refresh = page.getByRole('region', { name: 'Refresh of the model list of closed port failed' });
      await refresh.waitFor();
      const terms = await refresh.locator('dt').allTextContents();
      const details = await refresh.locator('dd').allTextContents();
      const facts = Object.fromEntries(terms.map((t, i) => [t, details[i]]));
      expect(facts['Error kind']).toBe('connection');
      expect(facts['Upstream status']).toBe('None: the upstream did not answer');
      expect(facts.Message).not.toMatch(/^upstream failed/);
      await row.getByText('Could not be read: connection', { exact: true }).waitFor();
      expect(await row.getByText(/None listed|Not listed yet/).count()).toBe(0);
      await screenshot(page, 'forms-upstream-refresh-failed');

      // A double-clicked Disable of an enabled upstream sends one change.
      await adminApi('PUT', '/channel', { id: made.id, status: 1 });
      await page.reload();
      const sent = await sentDuring(async () => {
        await row.getByRole('button', { name: 'Disable closed port', exact: true }).dblclick();
        await row.getByRole('button', { name: 'Enable closed port', exact: true }).waitFor();
      }, /^PUT \/api\/channel$/);
      expect(sent).toEqual(['PUT /api/channel']);
    } finally {
      await adminApi('DELETE', `/channel/${made.id}`);
    }
  });
});

describe('playground', () => {
  realOnly(
    'announces a failed answer as failed, names its turn by the model, no stray separator',
    async () => {
      await adminApi('POST', '/model', {
        id: FAILING_MODEL,
        name: 'Failing chat model',
        context_length: 8192,
        max_completion_tokens: 1024,
        pricing: { prompt: '0', completion: '0', request: '0', image: '0' },
        input_modalities: ['text'],
        output_modalities: ['text'],
      });
      const channel = await adminApi<{ id: number }>('POST', '/channel', {
        name: 'failing upstream',
        kind: 'openai-compatible',
        base_url: `${failing.url}/v1`,
        keys: ['sk-failing'],
        models: [FAILING_MODEL],
      });
      const key = await adminApi<{ key: string }>('POST', '/key', { name: 'playground failing' });
      try {
        await page.goto(`${gw.url}/playground`);
        await page.locator('#pg-key').fill(key.key);
        await page.locator(`#pg-model option[value="${FAILING_MODEL}"]`).waitFor({ state: 'attached' });
        await page.getByLabel('Model').selectOption(FAILING_MODEL);
        await page.getByLabel('Message').fill('Say hello');
        await page.getByLabel('Message').press('Enter');
        const turn = page.getByTestId('assistant-message');
        await turn.getByRole('alert').waitFor();
        const live = page.locator('p.sr-only[aria-live]');
        await expect.poll(() => live.textContent()).toMatch(/^Answer failed: /);
        expect(await turn.locator('.msg-role').textContent()).toBe(FAILING_MODEL);
        const usage = await turn.getByTestId('usage').textContent();
        expect(usage).toMatch(/^\d+ ms$/);
        await screenshot(page, 'forms-playground-failed');
      } finally {
        await adminApi('DELETE', `/channel/${channel.id}`);
      }
    },
  );
});
