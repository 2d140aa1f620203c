import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CORS_MODEL, startCorsGateway, startCorsUpstream } from '../helpers/cors-gateway.js';
import type { FakeUpstream } from '../helpers/fake-upstream.js';
import type { TestGateway } from '../helpers/gateway.js';
import { launchBrowser } from './browser.js';

/**
 * The official SDKs (openai, @anthropic-ai/sdk, @openrouter/sdk), bundled into a page of another origin (a second loopback port), call the
 * gateway from Chromium: CORS as browsers enforce it (docs/architecture.md, "Browser clients
 * (CORS)"), preflights with the SDKs' own headers, streams, and errors the page can read.
 */
const PAGE_SCRIPT = `
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { OpenRouter } from '@openrouter/sdk';
const outcome = async (run) => {
  try {
    return await run();
  } catch (err) {
    // A blocked call has no status (the SDK's connection error).
    return { error: String(err.message).slice(0, 200), status: err.status ?? null };
  }
};
window.openaiChat = (baseURL, apiKey, model) => outcome(async () => {
  const client = new OpenAI({ baseURL, apiKey, dangerouslyAllowBrowser: true, maxRetries: 0 });
  const { data, response } = await client.chat.completions
    .create({ model, messages: [{ role: 'user', content: 'Hi' }] })
    .withResponse();
  return { text: data.choices[0].message.content, requestId: response.headers.get('x-request-id') };
});
window.openaiStream = (baseURL, apiKey, model) => outcome(async () => {
  const client = new OpenAI({ baseURL, apiKey, dangerouslyAllowBrowser: true, maxRetries: 0 });
  const stream = await client.chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: 'Hi' }] });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  return { text };
});
window.openrouterChat = (serverURL, apiKey, model) => outcome(async () => {
  const client = new OpenRouter({ apiKey, serverURL, retryConfig: { strategy: 'none' } });
  const r = await client.chat.send({ chatRequest: { model, messages: [{ role: 'user', content: 'Hi' }] } });
  return { text: r.choices[0].message.content };
});
window.anthropicMessage = (baseURL, apiKey, model) => outcome(async () => {
  const client = new Anthropic({ baseURL, apiKey, dangerouslyAllowBrowser: true, maxRetries: 0 });
  const m = await client.messages.create({ model, max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] });
  return { text: m.content[0].text };
});
`;

let up: FakeUpstream;
let gw: TestGateway;
let key: string;
let browser: Browser;
let page: Page;
let other: Server;
const corsErrors: string[] = [];

beforeAll(async () => {
  up = await startCorsUpstream();
  const g = await startCorsGateway(up);
  gw = g.gw;
  key = await g.key();

  const bundle = await build({
    stdin: { contents: PAGE_SCRIPT, resolveDir: process.cwd(), loader: 'js' },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  });
  const script = bundle.outputFiles[0]!.text;
  other = createServer((req, res) => {
    if (req.url === '/sdk.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    else
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<!doctype html><script src="/sdk.js"></script>');
  });
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  browser = await launchBrowser();
  page = await browser.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' && /CORS|Access-Control/i.test(m.text())) corsErrors.push(m.text());
  });
  // `localhost` for the page, 127.0.0.1 for the gateway: two origins (ports differ as well).
  await page.goto(`http://localhost:${(other.address() as AddressInfo).port}/`);
  await page.waitForFunction(() => typeof (globalThis as any).openaiChat === 'function');
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (other ? other.close(resolve) : resolve(undefined)));
  await gw?.close();
  await up?.close();
});

const run = (fn: string, baseURL: string, apiKey: string) =>
  page.evaluate(([f, b, k, m]) => (globalThis as any)[f!](b, k, m), [fn, baseURL, apiKey, CORS_MODEL]);

describe('the SDKs in a browser page of another origin', () => {
  it('openai: an answer, its request id, and a stream', async () => {
    expect(await run('openaiChat', `${gw.url}/v1`, key)).toEqual({
      text: 'Hello',
      requestId: expect.any(String),
    });
    expect(await run('openaiStream', `${gw.url}/v1`, key)).toEqual({ text: 'Hello' });
    expect(await run('openaiChat', `${gw.url}/api/v1`, key)).toMatchObject({ text: 'Hello' });
  });

  it('@openrouter/sdk: an answer under /api/v1', async () => {
    expect(await run('openrouterChat', `${gw.url}/api/v1`, key)).toEqual({ text: 'Hello' });
  });

  it('anthropic: a message through /v1/messages with its browser headers', async () => {
    expect(await run('anthropicMessage', gw.url, key)).toEqual({ text: 'Hello' });
  });

  it('an error is the API status, not a blocked connection', async () => {
    expect(await run('openaiChat', `${gw.url}/v1`, 'sk-wrong')).toEqual({
      error: expect.stringContaining('401'),
      status: 401,
    });
    expect(corsErrors).toEqual([]);
  });
});
