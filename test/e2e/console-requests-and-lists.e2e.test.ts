import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshot } from './browser.js';
import { type E2EGateway, startGatewayForE2E } from './gateway.js';
import { addSessionCookie, api, collectPageErrors, login } from './session.js';

/**
 * What the console asks the server and says while it waits: one session read on load, one
 * app-list request from Home to the list and one read of an app opened by its edit link (in a
 * development build too, where React runs every effect twice) whose late answer, once the link
 * moved on, opens nothing, the Models count
 * while a search loads, and what the model and key forms send for a cleared list (and a
 * modality list stored empty before the API refused one) and a `*`
 * inside an allow-list entry.
 */

let gw: E2EGateway;
let browser: Browser;
let ctx: BrowserContext;
let page: Page;
let cookie = '';
/** The id of the 'Request Counter' app, for its edit link. */
let counterId = 0;
/** The id of the 'Second Sample' app. */
let secondId = 0;
const pageErrors: string[] = [];
const realOnly = it.skipIf(process.env.E2E_GATEWAY === 'stub');
const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** A development build of the console (React's StrictMode checks on), made for this file. */
const DEV_BUILD = mkdtempSync(join(tmpdir(), 'mg-console-dev-'));

/** A call to /api as the administrator; fails the test unless it answers 200. */
const adminApi = <T = any>(method: string, path: string, body?: unknown) =>
  api<T>(gw, cookie, method, path, body);

async function signedInContext(): Promise<BrowserContext> {
  const c = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await addSessionCookie(c, gw, cookie);
  return c;
}

beforeAll(async () => {
  execFileSync(
    join(REPO, 'node_modules/.bin/vite'),
    [
      'build',
      '--config',
      'web/vite.config.ts',
      '--mode',
      'development',
      '--outDir',
      DEV_BUILD,
      '--emptyOutDir',
    ],
    { cwd: REPO, env: { ...process.env, NODE_ENV: 'development' }, stdio: 'ignore' },
  );
  gw = await startGatewayForE2E();
  cookie = await login(gw, gw.admin.username, gw.admin.password);
  for (const name of ['Request Counter', 'Second Sample']) {
    const app = await adminApi<{ id: number }>('POST', '/app', {
      name,
      short_description: `${name}, for the request counts.`,
      category: 'tools',
      download_url: 'https://downloads.example.com/sample.zip',
    });
    if (name === 'Request Counter') counterId = app.id;
    else secondId = app.id;
  }
  browser = await launchBrowser();
  ctx = await signedInContext();
  page = await ctx.newPage();
  collectPageErrors(page, pageErrors);
});

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  rmSync(DEV_BUILD, { recursive: true, force: true });
});

/** Records the path of every fetch the page makes, as it is made, in `window.__calls`. */
const COUNT_FETCHES = `
  window.__calls = [];
  const real = window.fetch.bind(window);
  window.fetch = (input, init) => {
    window.__calls.push(new URL(String(input instanceof Request ? input.url : input), location.href).pathname);
    return real(input, init);
  };
`;

/** Serves the development build in place of the gateway's console (its /api and /v1 stay). */
async function serveDevBuild(c: BrowserContext): Promise<void> {
  await c.route(
    (u) => !/^\/(api|v1)\//.test(u.pathname),
    (route: Route) => {
      const path = new URL(route.request().url()).pathname;
      const file = normalize(join(DEV_BUILD, path));
      const asset = file.startsWith(DEV_BUILD) && path !== '/' && existsSync(file);
      return route.fulfill({ path: asset ? file : join(DEV_BUILD, 'index.html') });
    },
  );
}

describe('console requests and lists', () => {
  it('asks for the session, the app list and an app to edit once, in a development build as in the built one', async () => {
    for (const build of ['built', 'development'] as const) {
      const c = await signedInContext();
      try {
        if (build === 'development') await serveDevBuild(c);
        // Every call the page makes, counted as it is made (not as it is seen on the wire).
        await c.addInitScript({ content: COUNT_FETCHES });
        const p = await c.newPage();
        const errors: string[] = [];
        collectPageErrors(p, errors);
        await p.goto(gw.url);
        const newest = p.locator('section', { has: p.getByRole('heading', { name: 'Newest', exact: true }) });
        await newest.getByRole('link', { name: 'Request Counter' }).waitFor();
        const atLoad = await p.evaluate<string[]>('window.__calls');
        expect(
          atLoad.filter((path) => path === '/api/user/session'),
          build,
        ).toHaveLength(1);
        await p.evaluate('window.__calls = []');
        await newest.getByRole('link', { name: 'See all →' }).click();
        await p.getByRole('heading', { name: 'All apps' }).waitFor();
        await p
          .locator('[aria-live="polite"][aria-busy="false"]')
          .getByRole('link', { name: 'Request Counter' })
          .waitFor();
        const calls = await p.evaluate<string[]>('window.__calls');
        expect(
          calls.filter((path) => path === '/api/app'),
          build,
        ).toHaveLength(1);

        // An edit link opens its form with one read of the app.
        await p.goto(`${gw.url}/admin/apps?edit=${counterId}`);
        await p.getByRole('dialog', { name: 'Edit Request Counter' }).waitFor();
        const edit = await p.evaluate<string[]>('window.__calls');
        expect(
          edit.filter((path) => path === `/api/app/${counterId}`),
          build,
        ).toHaveLength(1);
        expect(errors, build).toEqual([]);
      } finally {
        await c.close();
      }
    }
  });

  realOnly('says a search is loading instead of counting the old rows under the new search', async () => {
    await page.goto(`${gw.url}/admin/models`);
    const count = page.getByText(/^\d+ models$/);
    await count.waitFor();
    const table = page.locator('.table-wrap');
    const rowsBefore = await table.locator('tbody tr').count();
    expect(rowsBefore).toBeGreaterThan(1);

    // The search's answer waits until the test lets it go.
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let held = false;
    const hold = async (route: Route) => {
      held = true;
      await gate;
      await route.continue();
    };
    await page.route((u) => u.pathname === '/api/model' && u.searchParams.get('q') === 'fake-chat', hold);
    try {
      await page.getByLabel('Find', { exact: true }).fill('fake-chat');
      await page.getByRole('button', { name: 'Find', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'Searching for “fake-chat”…' }).waitFor();
      expect(held).toBe(true);
      // The old rows are still there, marked busy, and nothing says they match the new search.
      expect(await table.getAttribute('aria-busy')).toBe('true');
      expect(await table.locator('tbody tr').count()).toBe(rowsBefore);
      expect(await page.getByText(/matching “fake-chat”/).count()).toBe(0);
      expect(await count.count()).toBe(0);
      await screenshot(page, 'r01-models-searching');
    } finally {
      release();
      await page.unroute((u) => u.pathname === '/api/model' && u.searchParams.get('q') === 'fake-chat', hold);
    }
    await page.getByText('1 model matching “fake-chat”').waitFor();
    expect(await table.getAttribute('aria-busy')).toBe('false');
    expect(await table.locator('tbody tr').count()).toBe(1);
    await page.getByRole('rowheader', { name: /Fake chat model/ }).waitFor();
  });

  realOnly('opens the app an edit link names now, not one whose read answered late', async () => {
    await page.goto(`${gw.url}/admin/apps`);
    await page.getByRole('heading', { name: 'Apps', exact: true }).waitFor();
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let held = false;
    const isCounter = (u: URL) => u.pathname === `/api/app/${counterId}`;
    const hold = async (route: Route) => {
      held = true;
      await gate;
      await route.continue();
    };
    await page.route(isCounter, hold);
    // As the console's own links move: history, then popstate (its router listens to that).
    const go = (id: number) =>
      page.evaluate(
        `history.pushState(null, '', '/admin/apps?edit=${id}'); dispatchEvent(new PopStateEvent('popstate'))`,
      );
    try {
      // The first link's read waits; the address moves to the second app meanwhile.
      await go(counterId);
      await expect.poll(() => held).toBe(true);
      await go(secondId);
      await page.getByRole('dialog', { name: 'Edit Second Sample' }).waitFor();
      const late = page.waitForResponse((r) => isCounter(new URL(r.url())));
      release();
      await late;
      // One more turn for the late answer to reach the page, had it been taken.
      await page.waitForTimeout(100);
      expect(await page.getByRole('dialog', { name: 'Edit Request Counter' }).count()).toBe(0);
      await page.getByRole('dialog', { name: 'Edit Second Sample' }).waitFor();
    } finally {
      release();
      await page.unroute(isCounter, hold);
    }
  });

  realOnly("clears a model's modalities and parameters back to the built-in ones", async () => {
    const id = 'openai/gpt-4o-mini';
    const builtIn = await adminApi('GET', `/model/${id}`);
    await adminApi('PUT', '/model', {
      id,
      input_modalities: ['text'],
      supported_parameters: ['temperature'],
    });
    try {
      await page.goto(`${gw.url}/admin/models`);
      await page.getByLabel('Find', { exact: true }).fill('gpt-4o-mini');
      await page.getByRole('button', { name: 'Find', exact: true }).click();
      await page.getByText(/matching “gpt-4o-mini”/).waitFor();
      await page.getByRole('button', { name: `Edit ${builtIn.name}`, exact: true }).click();
      const dialog = page.getByRole('dialog');
      const input = dialog.getByLabel('Input modalities');
      expect(await input.inputValue()).toBe('text');
      await input.fill('');
      await dialog.getByLabel('Supported parameters').fill('');
      await dialog
        .getByText('Empty: the default (the config file or built-in list, else text).')
        .first()
        .waitFor();
      const sent = page.waitForRequest(
        (r) => r.method() === 'PUT' && new URL(r.url()).pathname === '/api/model',
      );
      await dialog.getByRole('button', { name: 'Save changes' }).click();
      expect((await sent).postDataJSON()).toEqual({ id, input_modalities: null, supported_parameters: null });
      await page.getByText(`Saved model ${id}.`).waitFor();
      const after = await adminApi('GET', `/model/${id}`);
      expect(after.input_modalities).toEqual(builtIn.input_modalities);
      expect(after.supported_parameters).toEqual(builtIn.supported_parameters);
    } finally {
      await adminApi('DELETE', `/model/${id}`);
    }
  });

  realOnly('saves a modality list stored empty by an older console as the default', async () => {
    const id = 'openai/gpt-4o-mini';
    const builtIn = await adminApi('GET', `/model/${id}`);
    // An admin entry for the row to be found by, and for the test to remove.
    await adminApi('PUT', '/model', { id, name: 'E2E stored empty' });
    // An entry written before the API refused [] (no write can store one now): the list says so.
    const storedEmpty = async (route: Route) => {
      if (route.request().method() !== 'GET') return route.fallback();
      const res = await route.fetch();
      const body = (await res.json()) as { data: { id: string; input_modalities: string[] | null }[] };
      for (const m of body.data) if (m.id === id) m.input_modalities = [];
      await route.fulfill({ response: res, json: body });
    };
    const isList = (u: URL) => u.pathname === '/api/model';
    await page.route(isList, storedEmpty);
    try {
      await page.goto(`${gw.url}/admin/models`);
      await page.getByLabel('Find', { exact: true }).fill('gpt-4o-mini');
      await page.getByRole('button', { name: 'Find', exact: true }).click();
      const row = page.getByRole('row', { name: /E2E stored empty/ });
      await row.getByRole('cell', { name: 'none → text', exact: true }).waitFor();
      await row.getByRole('button', { name: 'Edit E2E stored empty', exact: true }).click();
      const dialog = page.getByRole('dialog');
      const input = dialog.getByLabel('Input modalities');
      expect(await input.inputValue()).toBe('');
      expect(
        await dialog
          .getByText(/Stored as an empty list .* Saving with this field empty takes the default back/)
          .count(),
      ).toBe(1);
      const sent = page.waitForRequest(
        (r) => r.method() === 'PUT' && new URL(r.url()).pathname === '/api/model',
      );
      const reloaded = page.waitForResponse(
        (r) => r.request().method() === 'GET' && isList(new URL(r.url())),
      );
      await dialog.getByRole('button', { name: 'Save changes' }).click();
      expect((await sent).postDataJSON()).toEqual({ id, input_modalities: null });
      await page.getByText(`Saved model ${id}.`).waitFor();
      // The list asked again after the save has its answer before the route goes.
      await reloaded;
      const after = await adminApi('GET', `/model/${id}`);
      expect(after.input_modalities).toEqual(builtIn.input_modalities);
    } finally {
      await page.unroute(isList, storedEmpty);
      await adminApi('DELETE', `/model/${id}`);
    }
  });

  realOnly(
    'refuses an allowed-models entry with a * before its end, on the field, and saves the glob',
    async () => {
      await page.goto(`${gw.url}/keys`);
      await page.getByRole('button', { name: 'New API key' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Name (required)').fill('e2e inner star');
      const allowed = dialog.getByLabel('Allowed models');
      await allowed.fill('openai/*-mini');
      await dialog
        .getByRole('status')
        .filter({
          hasText: 'Only a final * is a wildcard: for “openai/*-mini” write “openai/*”, or name the models.',
        })
        .waitFor();
      const posts: unknown[] = [];
      const record = (r: { method(): string; url(): string; postDataJSON(): unknown }) => {
        if (r.method() === 'POST' && new URL(r.url()).pathname === '/api/key') posts.push(r.postDataJSON());
      };
      page.on('request', record);
      try {
        await dialog.getByRole('button', { name: 'Create key' }).click();
        const error =
          '"openai/*-mini" has a * before its end, and only a final * is a wildcard: write "openai/*" for every model whose id starts with "openai/", or name the models one by one';
        await dialog.getByText(error, { exact: true }).waitFor();
        expect(await allowed.getAttribute('aria-invalid')).toBe('true');
        expect(posts).toHaveLength(1);
        await screenshot(page, 'r02-key-inner-star');

        await allowed.fill('openai/*');
        await dialog.getByRole('button', { name: 'Create key' }).click();
        await page.getByLabel('Secret key').waitFor();
        await page.getByRole('button', { name: 'Done' }).click();
      } finally {
        page.off('request', record);
      }
      const keys = await adminApi<{ name: string; allowed_models: string[] }[]>('GET', '/key');
      expect(keys.filter((k) => k.name === 'e2e inner star').map((k) => k.allowed_models)).toEqual([
        ['openai/*'],
      ]);
    },
  );

  it('raised no uncaught errors in the page', () => {
    expect(pageErrors).toEqual([]);
  });
});
