/**
 * What the console's browser tests share to act as a signed-in user: a session cookie from the
 * sign-in API, calls to /api with it, a browser context that carries it, and the page's own
 * errors and field errors to assert on.
 */
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import type { E2EGateway } from './gateway.js';

/** Signs in through `POST /api/user/login`; returns the session cookie as `name=value`. */
export async function login(gw: E2EGateway, username: string, password: string): Promise<string> {
  const r = await fetch(`${gw.url}/api/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  expect(r.status).toBe(200);
  return (r.headers.get('set-cookie') ?? '').split(';')[0]!;
}

/** A call to /api with the session `cookie`; fails the test unless it answers 200; returns its `data`. */
export async function api<T = any>(
  gw: E2EGateway,
  cookie: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const r = await fetch(`${gw.url}/api${path}`, {
    method,
    headers: body === undefined ? { cookie } : { 'content-type': 'application/json', cookie },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(r.status, `${method} ${path}: ${await r.clone().text()}`).toBe(200);
  return ((await r.json()) as { data: T }).data;
}

/**
 * Signs in through the console's sign-in page in `p` (a new context, or one signed in as someone
 * else), and waits for Home.
 */
export async function signInThroughPage(
  p: Page,
  gw: E2EGateway,
  username: string,
  password: string,
): Promise<void> {
  await p.goto(`${gw.url}/login`);
  await p.getByLabel('Username').fill(username);
  await p.getByLabel('Password').fill(password);
  await p.getByRole('button', { name: 'Sign in' }).click();
  await p.getByRole('heading', { name: 'Find apps for your AI models' }).waitFor();
}

/** Puts the session `cookie` (`name=value`) into a browser context, for the gateway's pages. */
export async function addSessionCookie(ctx: BrowserContext, gw: E2EGateway, cookie: string): Promise<void> {
  const [name, value] = cookie.split('=');
  await ctx.addCookies([{ name: name!, value: value!, url: gw.url }]);
}

/** Records each uncaught error of the page's scripts in `errors`. */
export function collectPageErrors(page: Page, errors: string[]): void {
  page.on('pageerror', (e) => errors.push(e.message));
}

/** Each field's error under it, by the field's label. */
export async function fieldErrors(scope: Locator): Promise<Record<string, string>> {
  return scope
    .locator('.field')
    .evaluateAll((fields) =>
      Object.fromEntries(
        fields
          .map((f) => [
            f.querySelector('label')?.textContent?.trim() ?? '',
            f.querySelector('.field-error')?.textContent?.trim() ?? '',
          ])
          .filter(([, e]) => e),
      ),
    );
}
