/**
 * A gateway on loopback for the stop's tests (test/foundation/operations.test.ts,
 * shutdown-cut.test.ts): its logs captured, its database a test database of its own.
 */
import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import { LOG_REDACT } from '../../src/http/app.js';
import { startGateway } from '../../src/main.js';
import { openDatabase } from '../../src/store/database.js';
import { createTestDatabase } from '../helpers/databases.js';
import { type FakeRoutes, startFakeUpstream } from '../helpers/fake-upstream.js';

export const PASSWORD = 'a-root-password-to-hide';

export function capture(): { log: FastifyBaseLogger; text(): string } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  const log = pino({ level: 'trace', redact: { paths: LOG_REDACT, censor: '[redacted]' } }, sink);
  return { log: log as FastifyBaseLogger, text: () => lines.join('') };
}

export async function boot(extra: Record<string, unknown> = {}) {
  const db = await createTestDatabase();
  const config = loadConfig(
    {},
    {
      server: { host: '127.0.0.1', port: 0, serve_console: false, shutdown_grace_ms: 5000 },
      database: { url: db.url },
      auth: { root_password: PASSWORD },
      catalog: { seed: false },
      ...extra,
    },
  );
  return { config, db };
}

/**
 * A gateway whose one upstream answers chat with `route`, with a shutdown grace (60 s) no stop
 * may wait out, and an API key: `chat` sends one request, `close` tears it all down (connections
 * first, so a failed run does not wait out the grace).
 */
export async function drainSetup(route: FakeRoutes[string], graceMs = 60_000) {
  const up = await startFakeUpstream({ 'POST /v1/chat/completions': route });
  const { config, db } = await boot({
    channels: [
      { name: 'up', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: ['acme/m'] },
    ],
    models: [
      {
        id: 'acme/m',
        context_length: 1000,
        pricing: { prompt: '0.000001', completion: '0.000002' },
      },
    ],
    log: { level: 'silent' },
    server: { host: '127.0.0.1', port: 0, serve_console: false, shutdown_grace_ms: graceMs },
  });
  const cap = capture();
  const gw = await startGateway(config, cap.log);
  const close = async () => {
    gw.app.server.closeAllConnections();
    await gw.stop();
    await up.close();
    await db.drop();
  };
  try {
    const user = (await gw.services.repos.users.byId(1))!;
    const { secret } = await gw.services.apiKeys.create(user, { name: 'drain' });
    const chat = (stream: boolean, signal?: AbortSignal) =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        signal,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
        body: JSON.stringify({ model: 'acme/m', messages: [{ role: 'user', content: 'hi' }], stream }),
      });
    const post = (path: string, body: Record<string, unknown>) =>
      fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
        body: JSON.stringify({ model: 'acme/m', ...body }),
      });
    /** The request logs and the key's spend, read from the database (works after a stop too). */
    const stored = async () => {
      const d = openDatabase(db.url);
      try {
        const logs = await d.db.selectFrom('request_logs').selectAll().execute();
        const keys = await d.db.selectFrom('api_keys').select('quota_used_micros').execute();
        return { logs, spent: Number(keys[0]?.quota_used_micros ?? 0) };
      } finally {
        await d.close();
      }
    };
    return { up, gw, chat, post, close, cap, stored };
  } catch (err) {
    await close();
    throw err;
  }
}

export const within5s = (stopped: Promise<void>) =>
  Promise.race([
    stopped.then(() => 'stopped'),
    new Promise((r) => setTimeout(() => r('still stopping after 5 s'), 5_000).unref()),
  ]);
