import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { ConfigError, loadConfig } from './config/load-config.js';
import { type Config, DEFAULT_DATABASE_URL } from './config/schema.js';
import { type App, buildApp, LOG_REDACT } from './http/app.js';
import { cutConnections, requestsSettled, SETTLE_WAIT_MS } from './http/shutdown-cut.js';
import { createServices, type Services } from './services.js';
import { urlWithoutPassword } from './store/connect-errors.js';

export interface RunningGateway {
  app: App;
  services: Services;
  url: string;
  /** Stops accepting, lets in-flight requests finish (up to the grace period), closes pools. */
  stop(): Promise<void>;
}

export function createLogger(config: Config): FastifyBaseLogger {
  return pino({
    level: config.log.level,
    redact: { paths: LOG_REDACT, censor: '[redacted]' },
  }) as FastifyBaseLogger;
}

/** Builds services, bootstraps root, listens. Used by `modelgate serve` and by tests. */
export async function startGateway(
  config: Config,
  log: FastifyBaseLogger = createLogger(config),
): Promise<RunningGateway> {
  const services = await createServices(config, log, { removeUndeclaredChannels: true });
  const boot = await services.users.bootstrapRoot(config.auth.root_password);
  // Said at once: a generated password is shown here or never, and a start that fails from now
  // on (its port taken) would otherwise leave root with a password nobody saw.
  announceRoot(boot);
  for (const twins of await services.users.duplicatesWarnings()) log.warn(twins.log, twins.message);
  const app = await buildApp(services, { logger: log });
  // Open connections, so a stop can close each keep-alive connection after its last answer.
  const sockets = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  try {
    await app.listen({ host: config.server.host, port: config.server.port });
  } catch (err) {
    await app.close().catch(() => {});
    await services.close().catch(() => {});
    throw listenError(err, config);
  }
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.server.port;
  const host =
    config.server.host === '0.0.0.0' || config.server.host === '::' ? 'localhost' : config.server.host;
  const url = config.server.public_url || `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      const grace = config.server.shutdown_grace_ms;
      // Past the grace, what is still open is cut; its requests are logged as cut by the shutdown.
      const timer = setTimeout(() => void cutConnections(app.server, sockets), grace);
      timer.unref();
      // close() ends the keep-alive connections idle at that moment. One still serving a request
      // would stay open, idle, once it is answered, and hold the stop until the grace ran out:
      // each is closed after its answer instead (answered with `Connection: close` where the
      // headers are not sent yet), and so is any connection a request reaches while stopping.
      app.server.on('request', (_req: IncomingMessage, res: ServerResponse) => closeAfter(res));
      for (const socket of sockets) {
        const res = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
        if (res) closeAfter(res);
      }
      try {
        await app.close();
      } finally {
        clearTimeout(timer);
      }
      // A request the grace cut, or whose client left during the drain, may still be settling
      // its bill and writing its log once the server closed: the quota ledger and the writer
      // close after it (before, such a request's log row and its refund were lost).
      const unsettled = await requestsSettled(app.server);
      if (unsettled > 0)
        log.error(
          { unsettled, waited_ms: SETTLE_WAIT_MS },
          'shutdown: requests still unsettled; their request logs and quota settlements may be lost',
        );
      await services.close();
    })();
    return stopping;
  };
  return { app, services, url, stop };
}

/** A taken port says how to choose another one (the message alone named only the address). */
function listenError(err: unknown, config: Config): unknown {
  if ((err as NodeJS.ErrnoException)?.code !== 'EADDRINUSE') return err;
  const { host, port } = config.server;
  return new Error(
    `${(err as Error).message}: another process listens on ${host}:${port}; stop it, or start on another port with MODELGATE_PORT=${port + 1} (server.port in the config file)`,
    { cause: err },
  );
}

/**
 * Ends the response's connection once the response is sent: `destroySoon` writes what is still
 * queued first (an idle-connection sweep would cut a slow reader's tail).
 */
function closeAfter(res: ServerResponse): void {
  if (!res.headersSent) res.shouldKeepAlive = false;
  const socket = res.socket;
  if (!socket) return;
  if (res.writableFinished) socket.destroySoon();
  else res.once('finish', () => socket.destroySoon());
}

/**
 * Sets V8's old-generation growth between major GCs (`server.heap_growing_percent`) unless the
 * process was started with `--heap-growing-percent` (the operator's flag wins) or it is 0. V8
 * reads it at each major GC, so it holds when set at start. Why 50: after a burst V8 keeps up to
 * 4x the live heap committed on a large machine, RSS over 220 MB with 1,000 open streams; at 50%
 * 175 MB, for 2 more major GCs per 5 s at saturation (docs/performance.md, Session 11).
 */
export function applyHeapGrowing(percent: number, execArgv: readonly string[] = process.execArgv): void {
  if (percent === 0 || execArgv.some((a) => a.startsWith('--heap-growing-percent'))) return;
  setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/**
 * What a new operator does next, printed at start while no upstream serves a model (a fresh
 * install): how to add one and how to get an API key. Empty once something is servable. On any
 * database but the default SQLite file, it says the CLI commands shown need the gateway's
 * `DATABASE_URL` (shown without its password) or config file: without them the CLI opens
 * ./data/modelgate.db, and what it adds there the gateway never sees.
 */
export function nextSteps(url: string, servableModels: number, opts: { databaseUrl?: string } = {}): string {
  if (servableModels > 0) return '';
  const db = opts.databaseUrl;
  const sameDatabase =
    db && db !== DEFAULT_DATABASE_URL
      ? [
          `  The CLI commands must use this gateway's database: run the CLI with the same DATABASE_URL (${urlWithoutPassword(db)}) or MODELGATE_CONFIG`,
          `  as the gateway; without them it creates and uses ${DEFAULT_DATABASE_URL}, which this gateway does not read.`,
        ]
      : [];
  return [
    '',
    'modelgate: no upstream serves a model yet. Add one with',
    '  OPENAI_API_KEY=sk-... npm start   (OPENAI_BASE_URL=http://127.0.0.1:11434/v1 for a local server;',
    '                                     ANTHROPIC_API_KEY, GEMINI_API_KEY, VOYAGE_API_KEY, ... alike)',
    `  or \`channels:\` in the MODELGATE_CONFIG file, the console (${url}/, Admin, Upstreams),`,
    '  `npx modelgate channel add --name NAME --kind openai-compatible --base-url URL --keys KEY`',
    '  or POST /api/channel (docs/configuration.md, "Upstreams (channels)").',
    'Then create an API key (console: API keys, or `npx modelgate key create -u root`) and call',
    `  ${url}/v1/chat/completions with "Authorization: Bearer sk-..." (model ids: GET ${url}/v1/models).`,
    ...sameDatabase,
    '',
  ].join('\n');
}

export async function serve(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  applyHeapGrowing(config.server.heap_growing_percent);
  const log = createLogger(config);
  const gw = await startGateway(config, log);
  process.stdout.write(`modelgate listening on ${gw.url}  (console: ${gw.url}/, API docs: ${gw.url}/docs)\n`);
  const hint = nextSteps(gw.url, gw.services.registry.servableModels().length, {
    databaseUrl: config.database.url,
  });
  if (hint) process.stdout.write(hint);
  // `on`, not `once`: after a first signal the default action would come back, and a second one
  // (an operator's second Ctrl-C, npm forwarding the terminal's SIGINT) would kill the process
  // mid-drain, losing the request logs and quota credit the drain writes. Repeats are ignored.
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) {
        log.warn({ signal }, 'already shutting down: waiting for the drain to finish');
        return;
      }
      stopping = true;
      log.info({ signal }, 'shutting down');
      gw.stop().then(
        () => process.exit(0),
        (err) => {
          log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}

/**
 * Says, once, that the first user was created and with which password: a generated one is shown
 * here and nowhere else. Printed to stdout, never logged through pino (no secrets in logs). By
 * `serve` and by `modelgate user create`, whichever runs first on a new database.
 */
export function announceRoot(boot: { created: boolean; generatedPassword?: string }): void {
  if (!boot.created) return;
  const pw = boot.generatedPassword
    ? `password: ${boot.generatedPassword}  (printed once; change it after signing in)`
    : 'password: from MODELGATE_ROOT_PASSWORD';
  process.stdout.write(`\nmodelgate: created the first user\n  username: root\n  ${pw}\n\n`);
}
