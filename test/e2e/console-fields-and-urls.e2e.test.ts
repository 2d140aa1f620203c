import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshot } from './browser.js';
import { ANSWER, type E2EGateway, startGatewayForE2E } from './gateway.js';
import { addSessionCookie, api, collectPageErrors, login } from './session.js';

/**
 * Console fields that lost, pinned or let through what was typed, and page filters a reload
 * lost. Runs in a browser west of UTC, where a period's ends in the URL are UTC minutes and the
 * fields show local time.
 */

let gw: E2EGateway;
let browser: Browser;
let page: Page;
let cookie = '';
const pageErrors: string[] = [];
const realOnly = it.skipIf(process.env.E2E_GATEWAY === 'stub');

/** A call to /api as the administrator; fails the test unless it answers 200. */
const adminApi = <T = any>(method: string, path: string, body?: unknown) =>
  api<T>(gw, cookie, method, path, body);

beforeAll(async () => {
  gw = await startGatewayForE2E();
  cookie = await login(gw, gw.admin.username, gw.admin.password);
  browser = await launchBrowser();
  // Los Angeles is behind UTC all year: 10:00 there is 18:00 UTC in January.
  const ctx = await browser.newContext({
    viewport: { width: 1280, height: 860 },
    timezoneId: 'America/Los_Angeles',
    locale: 'en-US',
  });
  await addSessionCookie(ctx, gw, cookie);
  page = await ctx.newPage();
  collectPageErrors(page, pageErrors);
});

afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

/** The query of the next request the page makes to `path` (`/api/log`), once it is made. */
function nextQuery(path: string, match: (q: URLSearchParams) => boolean = () => true) {
  return page
    .waitForRequest((r: Request) => {
      const u = new URL(r.url());
      return u.pathname === path && match(u.searchParams);
    })
    .then((r) => Object.fromEntries(new URL(r.url()).searchParams));
}

const here = () => new URL(page.url());
const historyLength = () => page.evaluate<number>('history.length');

describe('console fields and addresses', () => {
  it('refuses a playground temperature or max tokens that is no number or out of range, and sends once fixed', async () => {
    const key = await adminApi<{ key: string }>('POST', '/key', { name: 'e2e playground numbers' });
    const chats: Request[] = [];
    page.on('request', (r) => new URL(r.url()).pathname === '/v1/chat/completions' && chats.push(r));
    await page.goto(`${gw.url}/playground`);
    await page.locator('#pg-key').fill(key.key);
    await page.locator(`#pg-model option[value="${gw.chatModel}"]`).waitFor({ state: 'attached' });
    const temperature = page.getByLabel('Temperature');
    const maxTokens = page.getByLabel('Max tokens');
    const message = page.getByLabel('Message');
    const refused = async (temp: string, max: string, errors: Record<string, string>) => {
      await temperature.fill('');
      await maxTokens.fill('');
      // Typed key by key: "1e" is what a person types on the way to 1e-3; `fill` refuses it.
      await temperature.pressSequentially(temp);
      await maxTokens.pressSequentially(max);
      await message.fill('Say hello');
      await message.press('Enter');
      for (const [label, text] of Object.entries(errors)) {
        const field = page.getByLabel(label);
        await page.getByText(text, { exact: true }).waitFor();
        expect(await field.getAttribute('aria-invalid'), label).toBe('true');
        const described = (await field.getAttribute('aria-describedby')) ?? '';
        expect(await page.locator(`[id="${described.split(' ').at(-1)}"]`).textContent()).toBe(text);
      }
      expect(await page.locator('.field-error').count()).toBe(Object.keys(errors).length);
      // Nothing went out, and the question is still there to send once fixed.
      expect(await message.inputValue()).toBe('Say hello');
    };
    await refused('1e', '', { Temperature: 'Enter a number.' });
    await screenshot(page, 'f01-playground-bad-number');
    // In the words every console form uses for the same rule.
    await refused('3', '1.5', {
      Temperature: 'At most 2.',
      'Max tokens': 'A whole number.',
    });
    await refused('-0.5', '0', {
      Temperature: 'At least 0.',
      'Max tokens': 'At least 1.',
    });
    await refused('0.7', '12e', { 'Max tokens': 'Enter a number.' });
    expect(chats).toEqual([]);
    // Typing in a field takes its complaint away.
    await maxTokens.fill('64');
    expect(await page.locator('.field-error').count()).toBe(0);

    const sent = page.waitForRequest((r) => new URL(r.url()).pathname === '/v1/chat/completions');
    await message.press('Enter');
    expect((await sent).postDataJSON()).toMatchObject({ temperature: 0.7, max_tokens: 64 });
    await expect
      .poll(() => page.getByTestId('assistant-message').locator('.msg-text').textContent(), {
        timeout: 15_000,
      })
      .toBe(ANSWER.join(''));
    expect(chats).toHaveLength(1);
  });

  it('keeps the Logs filters in the URL: a reload, a shared link and Back show the same requests', async () => {
    await page.goto(`${gw.url}/logs`);
    await page.getByRole('cell', { name: gw.chatModel }).first().waitFor();
    await page.getByLabel('Model').fill(gw.chatModel);
    await page.getByLabel('Status').fill('200');
    await page.getByLabel('From').fill('2020-01-02T10:00');
    let asked = nextQuery('/api/log', (q) => q.has('model'));
    await page.getByRole('button', { name: 'Apply' }).click();
    const applied = { model: gw.chatModel, status: '200', from: '2020-01-02T18:00Z' };
    await page.waitForURL((u) => u.searchParams.get('model') === gw.chatModel);
    expect(Object.fromEntries(here().searchParams)).toEqual(applied);
    // 10:00 in Los Angeles, as the server is asked for it.
    expect(await asked).toMatchObject({
      model: gw.chatModel,
      status: '200',
      from: String(Date.UTC(2020, 0, 2, 18) / 1000),
    });
    await page.getByRole('cell', { name: gw.chatModel }).first().waitFor();

    // A reload (or the link opened elsewhere) asks the same, and the form says so.
    asked = nextQuery('/api/log');
    await page.reload();
    expect(await asked).toMatchObject({ model: gw.chatModel, status: '200' });
    expect(await page.getByLabel('Model').inputValue()).toBe(gw.chatModel);
    expect(await page.getByLabel('Status').inputValue()).toBe('200');
    expect(await page.getByLabel('From').inputValue()).toBe('2020-01-02T10:00');
    await page.getByRole('cell', { name: gw.chatModel }).first().waitFor();

    // Typing applies nothing until Apply, which adds a step to the history: Back undoes it.
    const steps = await historyLength();
    await page.getByLabel('Status').fill('');
    expect(Object.fromEntries(here().searchParams)).toEqual(applied);
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL((u) => !u.searchParams.has('status'));
    expect(await historyLength()).toBe(steps + 1);
    asked = nextQuery('/api/log');
    await page.goBack();
    expect(await asked).toMatchObject({ status: '200' });
    expect(Object.fromEntries(here().searchParams)).toEqual(applied);
    expect(await page.getByLabel('Status').inputValue()).toBe('200');
    await page.goForward();
    await expect.poll(() => page.getByLabel('Status').inputValue()).toBe('');
    expect(await page.getByLabel('Model').inputValue()).toBe(gw.chatModel);

    // Away and back again: the page comes back with its filters.
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('heading', { name: 'Usage', exact: true }).waitFor();
    await page.goBack();
    await expect.poll(() => page.getByLabel('Model').inputValue()).toBe(gw.chatModel);
    expect(await page.getByLabel('From').inputValue()).toBe('2020-01-02T10:00');

    // A link with a filter the server would refuse asks nothing and says what to correct.
    const logCalls: string[] = [];
    const record = (r: Request) => new URL(r.url()).pathname === '/api/log' && logCalls.push(r.url());
    page.on('request', record);
    try {
      await page.goto(`${gw.url}/logs?key_id=abc`);
      await page.getByText('Enter a number.', { exact: true }).waitFor();
      expect(await page.getByLabel('Key id').inputValue()).toBe('abc');
      expect(logCalls).toEqual([]);
    } finally {
      page.off('request', record);
    }
    await page.getByRole('button', { name: 'Reset' }).click();
    await page.waitForURL((u) => u.search === '');
    await page.getByRole('cell', { name: gw.chatModel }).first().waitFor();
  });

  it('keeps the Usage grouping and period in the URL, replacing it as they change', async () => {
    await page.goto(`${gw.url}/usage`);
    await page.getByRole('img', { name: 'Requests bar chart' }).waitFor();
    const steps = await historyLength();
    let asked = nextQuery('/api/log/stats', (q) => q.get('group') === 'model');
    await page.getByLabel('Group by').selectOption('model');
    await page.waitForURL((u) => u.searchParams.get('group') === 'model');
    await asked;
    await page.getByLabel('To', { exact: true }).fill('2099-01-01T10:00');
    await page.waitForURL((u) => u.searchParams.has('to'));
    expect(Object.fromEntries(here().searchParams)).toEqual({ group: 'model', to: '2099-01-01T18:00Z' });
    // Replaced, not pushed: Back still leaves the page.
    expect(await historyLength()).toBe(steps);

    asked = nextQuery('/api/log/stats');
    await page.reload();
    const query = await asked;
    expect(query).toMatchObject({ group: 'model', to: String(Date.UTC(2099, 0, 1, 18) / 1000 + 59) });
    // No `from` in the URL: the last 30 days, as on a fresh page.
    expect(Number(query.from)).toBeGreaterThan(Date.now() / 1000 - 31 * 86_400);
    expect(await page.getByLabel('Group by').inputValue()).toBe('model');
    expect(await page.getByLabel('To', { exact: true }).inputValue()).toBe('2099-01-01T10:00');

    // A cleared From is kept as cleared: every request since the start.
    await page.getByLabel('From', { exact: true }).fill('');
    await page.waitForURL((u) => u.searchParams.get('from') === '');
    asked = nextQuery('/api/log/stats');
    await page.reload();
    expect((await asked).from).toBeUndefined();
    expect(await page.getByLabel('From', { exact: true }).inputValue()).toBe('');

    await page.getByRole('link', { name: 'Logs' }).click();
    await page.getByRole('heading', { name: 'Request logs', exact: true }).waitFor();
    await page.goBack();
    await expect.poll(() => page.getByLabel('Group by').inputValue()).toBe('model');
    expect(await page.getByLabel('To', { exact: true }).inputValue()).toBe('2099-01-01T10:00');
    await page.getByRole('img', { name: 'Requests bar chart' }).waitFor();
    await screenshot(page, 'f02-usage-from-url');
  });

  it('warns about allowed models no model matches, and saves them all the same', async () => {
    await page.goto(`${gw.url}/keys`);
    await page.getByRole('button', { name: 'New API key' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name (required)').fill('e2e allowed models');
    const allowed = dialog.getByLabel('Allowed models');
    const warning = dialog.getByRole('status').filter({ hasText: 'No model matches' });
    const [author] = gw.chatModel.split('/');
    // `fake-*` prefixes the chat model's name without its author, not its id: patterns match ids
    // (docs/routing.md), so it admits nothing.
    const entries = [gw.chatModel, `${author}/*`, 'acme/next-model', 'nosuch-*', 'fake-*'];
    await allowed.fill(entries.join(', '));
    const text =
      'No model matches “acme/next-model”, “nosuch-*”, “fake-*” yet: the key can use them once such models are added.';
    await expect.poll(() => warning.textContent()).toBe(text);
    // The chat model by id or by its plain name (no other model has it), and a pattern its id
    // starts with: nothing to say.
    await allowed.fill(`${gw.chatModel}, ${gw.chatModel.split('/')[1]}, ${author}/*`);
    await expect.poll(() => warning.count()).toBe(0);
    await allowed.fill(entries.join(', '));
    await expect.poll(() => warning.textContent()).toBe(text);
    expect(await allowed.getAttribute('aria-describedby')).toContain(await warning.getAttribute('id'));
    expect(await allowed.getAttribute('aria-invalid')).toBe('false');
    await screenshot(page, 'f03-key-allowed-models-warning');
    await dialog.getByRole('button', { name: 'Create key' }).click();
    await page.getByLabel('Secret key').waitFor();
    await page.getByRole('button', { name: 'Done' }).click();
    const made = (
      await adminApi<{ id: number; name: string; allowed_models: string[] }[]>('GET', '/key')
    ).find((k) => k.name === 'e2e allowed models')!;
    expect(made.allowed_models).toEqual(entries);

    // Opened again, the form says it at once.
    await page.getByRole('button', { name: 'Edit e2e allowed models', exact: true }).click();
    await dialog
      .getByText('No model matches “acme/next-model”, “nosuch-*”, “fake-*” yet', { exact: false })
      .waitFor();
    await allowed.fill(`${gw.chatModel}, acme/next-model`);
    await expect
      .poll(() => warning.textContent())
      .toBe('No model matches “acme/next-model” yet: the key can use it once such a model is added.');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await adminApi('DELETE', `/key/${made.id}`);
  });

  realOnly('clears one price of a model back to the price below it, instead of pinning 0', async () => {
    const builtIn = 'openai/gpt-4o-mini';
    const defaults = await adminApi('GET', `/model/${builtIn}`);
    expect(defaults.pricing.input_cache_read).toBe('0.000000075');
    await adminApi('PUT', '/model', {
      id: builtIn,
      pricing: { prompt: '0.000009', input_cache_read: '0.000004' },
    });
    try {
      await page.goto(`${gw.url}/admin/models`);
      await page.getByLabel('Find', { exact: true }).fill(builtIn);
      await page.getByRole('button', { name: 'Find', exact: true }).click();
      await page.getByRole('button', { name: `Edit ${defaults.name}`, exact: true }).click();
      const dialog = page.getByRole('dialog');
      const cached = dialog.getByLabel('Cached input price (USD per token)');
      expect(await cached.inputValue()).toBe('0.000004');
      const hint = page.locator(`[id="${await cached.getAttribute('aria-describedby')}"]`);
      expect(await hint.textContent()).toBe(
        'Empty: the default (the config file or built-in list, else the prompt price).',
      );
      await cached.fill('');
      const sent = page.waitForRequest((r) => r.method() === 'PUT' && r.url().endsWith('/api/model'));
      await dialog.getByRole('button', { name: 'Save changes' }).click();
      expect((await sent).postDataJSON()).toEqual({ id: builtIn, pricing: { input_cache_read: null } });
      await page.getByText(`Saved model ${builtIn}.`).waitFor();
      // The built-in price again, not 0; the admin's prompt price stays.
      expect((await adminApi('GET', `/model/${builtIn}`)).pricing).toEqual({
        ...defaults.pricing,
        prompt: '0.000009',
      });
      await page.getByRole('button', { name: `Edit ${defaults.name}`, exact: true }).click();
      await expect.poll(() => cached.inputValue()).toBe('0.000000075');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
    } finally {
      await fetch(`${gw.url}/api/model/${builtIn}`, { method: 'DELETE', headers: { cookie } });
    }
  });

  realOnly("says under a model's modalities which name the server does not know", async () => {
    const before = await adminApi('GET', `/model/${gw.chatModel}`);
    await page.goto(`${gw.url}/admin/models`);
    await page.getByRole('button', { name: `Edit ${before.name}`, exact: true }).click();
    const dialog = page.getByRole('dialog');
    const input = dialog.getByLabel('Input modalities');
    await dialog.getByText('Any of text, image, file, audio, video.').waitFor();
    await input.fill('text, picture');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog
      .getByText('"picture" is not a known modality; use text, image, file, audio or video')
      .waitFor();
    expect(await input.getAttribute('aria-invalid')).toBe('true');
    await screenshot(page, 'f04-model-unknown-modality');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await adminApi('GET', `/model/${gw.chatModel}`)).toEqual(before);
  });

  it('raised no uncaught errors in the page', () => {
    expect(pageErrors).toEqual([]);
  });
});
