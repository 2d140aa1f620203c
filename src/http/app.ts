import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyCookie from '@fastify/cookie';
import fastifyStatic from '@fastify/static';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { registerLimitHooks } from '../access/limits/limit-hooks.js';
import { GatewayError } from '../gateway/errors.js';
import type { Services } from '../services.js';
import { publishChanges } from '../store/pubsub.js';
import { registerAppRoutes } from './api/app-routes.js';
import { registerChannelRoutes } from './api/channel-routes.js';
import { registerHealthRoutes } from './api/health-routes.js';
import { registerKeyRoutes } from './api/key-routes.js';
import { registerLogRoutes } from './api/log-routes.js';
import { registerModelRoutes } from './api/model-routes.js';
import { registerUserRoutes } from './api/user-routes.js';
import { resolveUser, securityOf } from './auth.js';
import { isConsolePage } from './console-pages.js';
import { addBodyDecoding } from './content-encoding.js';
import { answerPreflight, corsPolicy } from './cors.js';
import { errorHandler, sendError, unsupportedMediaType } from './error-handler.js';
import {
  clientErrorHandler,
  frameworkErrors,
  jsonBodyParser,
  ROUTER_MAX_PARAM_LENGTH,
} from './framework-errors.js';
import { lazyChildLogger } from './lazy-child-logger.js';
import { registerMetrics } from './metrics.js';
import { registerOpsRoutes } from './ops-routes.js';
import { guardAgainstNul } from './refuse-nul.js';
import { ResponseTaps } from './response-taps.js';
import { addApiHeaders, addDocsHeaders, CONSOLE_HEADERS, noSniffOutsideRoutes } from './security-headers.js';
import { cutByShutdown } from './shutdown-cut.js';
import { registerChatRoutes } from './v1/chat-completions.js';
import { registerEmbeddingRoutes } from './v1/embeddings-routes.js';
import { registerMessagesRoutes } from './v1/messages.js';
import { registerModelsRoute } from './v1/models-route.js';
import { registerResponsesRoutes } from './v1/responses.js';
import { validatorCompiler } from './validation.js';

export type App = FastifyInstance<any, any, any, FastifyBaseLogger, TypeBoxTypeProvider>;

/** A route module: registers its routes on the app. Feature modules add themselves to ROUTES. */
export type RouteModule = (app: App, services: Services) => void | Promise<void>;

const ROUTES: RouteModule[] = [
  registerOpsRoutes,
  registerUserRoutes,
  registerKeyRoutes,
  registerAppRoutes,
  registerLogRoutes,
  registerHealthRoutes,
  registerChannelRoutes,
  registerModelRoutes,
  registerModelsRoute,
  registerChatRoutes,
  registerMessagesRoutes,
  registerResponsesRoutes,
  registerEmbeddingRoutes,
];

/** The operation groups of the OpenAPI document: each route's `tags` names one of these. */
export const OPENAPI_TAGS = [
  { name: 'chat', description: 'OpenAI/OpenRouter-compatible chat completions (API key)' },
  {
    name: 'messages',
    description: 'Anthropic Messages-compatible chat, for Anthropic SDKs and Claude Code (API key)',
  },
  {
    name: 'responses',
    description: 'OpenAI Responses-compatible chat (stateless), for Codex CLI and the Agents SDK (API key)',
  },
  { name: 'embeddings', description: 'Voyage- and OpenAI-compatible embeddings (API key)' },
  {
    name: 'models',
    description: 'Models the gateway serves (/v1/models) and the model registry (/api/model)',
  },
  { name: 'app catalog', description: 'The public application catalog and its administration' },
  { name: 'users', description: 'Sign-in, your account and personal access tokens; user administration' },
  {
    name: 'api keys',
    description: 'API keys for /v1, with quotas, expiry, model allow-lists and rate limits',
  },
  { name: 'channels', description: 'Upstreams, their keys and their health (admins)' },
  { name: 'logs', description: 'Request logs and usage totals' },
];

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export const LOG_REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.current_password',
  '*.password_hash',
  '*.key',
  '*.keys',
  '*.token',
  '*.secret',
  '*.api_key',
];

export interface BuildOptions {
  logger?: FastifyBaseLogger | boolean | object;
  extraRoutes?: RouteModule[];
}

export async function buildApp(services: Services, opts: BuildOptions = {}): Promise<App> {
  const { config } = services;
  const cors = corsPolicy(config.server.cors_origins);
  const app = Fastify({
    loggerInstance:
      typeof opts.logger === 'object' && 'child' in (opts.logger as object)
        ? (opts.logger as FastifyBaseLogger)
        : undefined,
    logger:
      typeof opts.logger === 'object' && 'child' in (opts.logger as object)
        ? undefined
        : (opts.logger ?? { level: config.log.level, redact: { paths: LOG_REDACT, censor: '[redacted]' } }),
    bodyLimit: config.server.body_limit_bytes,
    trustProxy: config.server.trust_proxy,
    // One `request` line per response (the onRequest hook's, below) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // A run of slashes is one: SDKs given a base URL that ends in a slash (`http://gw/v1/`) join
    // their paths onto it with another (`/v1//multimodalembeddings`), and are served as without it.
    routerOptions: {
      ignoreTrailingSlash: true,
      ignoreDuplicateSlashes: true,
      maxParamLength: ROUTER_MAX_PARAM_LENGTH,
    },
    // The router's and Node's own refusals, in the gateway's error shapes (framework-errors.ts).
    frameworkErrors:
      cors === undefined
        ? frameworkErrors
        : (err, request, reply) => {
            const origin = request.headers.origin;
            if (origin !== undefined) cors.onRequest(request, reply, origin);
            frameworkErrors(err, request, reply);
          },
    clientErrorHandler,
    childLoggerFactory: lazyChildLogger,
    ajv: { customOptions: { removeAdditional: false } },
    // While stopping, the onRequest hook below answers in the gateway's error shape.
    return503OnClosing: false,
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;

  app.setValidatorCompiler(validatorCompiler);
  app.setErrorHandler(errorHandler);
  // Every body the gateway reads is JSON. Fastify's built-in text/plain parser handed a JSON
  // text sent as text/plain (fetch's default for a string body) to the routes as a string, which
  // they refused as "body: must be object"; it is a 415 saying what to send, like any other
  // non-JSON type. An empty text/plain body is still no body (bodiless POSTs such as logout).
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, jsonBodyParser());
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') done(null, undefined);
    else done(unsupportedMediaType(request.headers['content-type']), undefined);
  });
  app.decorateRequest('user', null);
  app.decorateRequest('principal', null);
  // A request that reaches a connection the stop could not close yet (its head was arriving) is
  // not served: its connection closes after this answer, so a long call's answer would be lost.
  // It is told to go elsewhere in the error shape of its surface (Fastify's own 503 had another).
  let stopping = false;
  app.addHook('preClose', (done) => {
    stopping = true;
    done();
  });
  // Hot-path hooks take a callback instead of returning a promise: one microtask fewer each.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // CORS (cors.ts) here, first, so every answer gets it; a request without Origin (any but a
    // browser's cross-origin call) pays this one look-up.
    if (cors !== undefined) {
      const origin = request.headers.origin;
      if (origin !== undefined) cors.onRequest(request, reply, origin);
    }
    if (!stopping) return done();
    reply.header('connection', 'close');
    sendError(
      reply,
      new GatewayError(503, 'the gateway is shutting down; send the request again', { retryAfter: 1 }),
    );
  });
  // One `request` line per response, only when the level shows it (production runs at warn),
  // at its connection's close: Fastify runs no onResponse hook for a response that was never
  // written, so a client that left (499, as the request log says) or a shutdown that cut the
  // connection (503) left no line at all.
  if ((app.log as { isLevelEnabled?(level: string): boolean }).isLevelEnabled?.('info') ?? true)
    app.addHook('onRequest', (request, reply, done) => {
      const res = reply.raw;
      res.once('close', () => {
        const status = res.writableFinished ? reply.statusCode : cutByShutdown(res) ? 503 : 499;
        request.log.info(
          { method: request.method, url: request.url, status, ms: Math.round(reply.elapsedTime) },
          'request',
        );
      });
      done();
    });

  await app.register(fastifyCookie);
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'modelgate', version: '0.1.0', description: 'AI model gateway and application catalog' },
      // The groups of /docs, in this order; every operation names one (test/foundation/openapi.test.ts).
      tags: OPENAPI_TAGS,
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'API key (sk-...) for /v1' },
          accessToken: { type: 'http', scheme: 'bearer', description: 'Personal access token for /api' },
          session: { type: 'apiKey', in: 'cookie', name: 'mg_session' },
        },
      },
    },
  });
  // Before Swagger UI registers its routes (and its static files' route), so they get the hook.
  app.addHook('onRoute', addDocsHeaders);
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  // App-wide hooks, added before the routes so every route gets them.
  const taps = new ResponseTaps();
  app.addHook('onResponse', taps.hook);
  const metrics = registerMetrics(app, services, taps);
  registerLimitHooks(app, services, {
    onReject: metrics.rateLimited,
    taps,
    signedIn: async (request) => (await resolveUser(services, request).catch(() => null)) !== null,
  });
  taps.add(publishChanges(services.invalidation));

  app.addHook('onRoute', guardAgainstNul);
  // Bodies sent gzip, deflate or br are decoded; another Content-Encoding is a 415.
  app.addHook('onRoute', addBodyDecoding);
  app.addHook('onRoute', addApiHeaders);
  // The OpenAPI document names the credential of each authenticated route (/docs showed it for
  // the chat and embeddings routes only).
  app.addHook('onRoute', (route) => {
    const security = securityOf(route.onRequest);
    if (security && route.schema && !route.schema.security) route.schema.security = security;
  });
  for (const register of [...ROUTES, ...(opts.extraRoutes ?? [])]) await register(app, services);

  const webRoot = config.server.serve_console ? consoleRoot(config.server.console_dir) : undefined;
  if (webRoot) {
    await app.register(fastifyStatic, {
      root: webRoot,
      wildcard: false,
      cacheControl: false,
      setHeaders: (res, path) => {
        res.setHeader('cache-control', consoleCaching(relative(webRoot, path)));
        for (const [name, value] of Object.entries(CONSOLE_HEADERS)) res.setHeader(name, value);
      },
    });
  }
  app.setNotFoundHandler((request, reply) => {
    // No route takes OPTIONS: a browser's preflight of a /v1 call (or of a public catalog read).
    if (request.method === 'OPTIONS' && answerPreflight(cors, request, reply)) return reply;
    const url = request.url;
    // Every other GET gets the console's page (its router shows the page, or "Page not found"
    // with a 404 here), except a missing build file: an old page asking for a chunk a redeploy
    // replaced must get a 404 it can act on, not index.html as JavaScript (and cached). A HEAD
    // (monitors, link checkers) is answered as the GET, without the body (Node sends none).
    if (
      webRoot &&
      (request.method === 'GET' || request.method === 'HEAD') &&
      !/^\/(?:api|v1|assets)\//.test(url)
    ) {
      const q = url.indexOf('?');
      if (!isConsolePage(q === -1 ? url : url.slice(0, q))) reply.code(404);
      return reply.sendFile('index.html');
    }
    noSniffOutsideRoutes(url, reply);
    return sendError(reply, new GatewayError(404, `no route for ${request.method} ${url.split('?')[0]}`));
  });
  return app;
}

/** The built console: `dir` when set, else web/dist of this install, if present. */
function consoleRoot(dir: string): string | undefined {
  if (dir) {
    if (!existsSync(join(dir, 'index.html'))) throw new Error(`server.console_dir: no index.html in ${dir}`);
    return dir;
  }
  let here = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = join(here, 'web', 'dist');
    if (existsSync(join(candidate, 'index.html'))) return candidate;
    here = dirname(here);
  }
  return undefined;
}

/**
 * Build files under assets/ carry a content hash in their names, so they never change: cached
 * for a year. index.html names the current ones and must be asked for again every time, or a
 * browser keeps loading chunks a redeploy removed. Anything else (icons) for an hour.
 */
export function consoleCaching(path: string): string {
  if (/^assets[\\/]/.test(path)) return 'public, max-age=31536000, immutable';
  if (path.endsWith('.html')) return 'no-cache';
  return 'public, max-age=3600';
}
