import type { FastifyReply, FastifyRequest } from 'fastify';
import { Role } from '../../access/roles.js';
import { parseOrder } from '../../catalog/app-order.js';
import type { Viewer } from '../../catalog/catalog-service.js';
import { parseKeyword } from '../../catalog/search-keyword.js';
import type { Services } from '../../services.js';
import { limitPerAddress } from '../address-limit.js';
import type { App } from '../app.js';
import { optionalUser, requireUser, resolveUser } from '../auth.js';
import { anonymousBodyLimit } from '../body-limits.js';
import { ok, paging } from '../envelope.js';
import { ADMIN_ONLY, IdParams } from '../schemas.js';
import { checkBody } from '../validation.js';
import {
  CategoryParams,
  CreateAppBody,
  ListQuery,
  SearchQuery,
  SubsetQuery,
  UpdateAppBody,
} from './app-schemas.js';

const PUBLIC_VIEW = 'Public: published apps; a signed-in admin (session or access token) sees every status.';

/**
 * The app catalog (`/api/app`). Reads are public and see published apps; a signed-in admin
 * (session or access token) sees every status. Writes need an admin. Static paths
 * (search, featured, category, download) win over `/:id` in Fastify's router.
 */
export function registerAppRoutes(app: App, services: Services): void {
  const admin = requireUser(services, Role.admin);
  // A download is a write: a signed-in caller's counts against their /api write limit (they are
  // exempt from the per-address one), an anonymous one against its address only.
  const downloader = optionalUser(services);
  const catalog = services.catalog;
  const tags = ['app catalog'];

  // Public routes never fail on bad credentials: an unusable token just means a public view.
  const viewer = async (request: FastifyRequest): Promise<Viewer> => {
    const user = await resolveUser(services, request).catch(() => null);
    return { admin: !!user && user.role >= Role.admin };
  };

  const perMinute = services.config.catalog.search_rate_per_minute;
  const searchLimit = async (request: FastifyRequest, reply: FastifyReply) => {
    if (perMinute <= 0) return;
    await limitPerAddress(services.rateLimiter, request, reply, {
      name: 'search',
      scope: 'search_ip',
      perMinute,
      what: `search is limited to ${perMinute} requests`,
    });
  };

  app.get(
    '/api/app',
    {
      schema: {
        tags,
        summary: 'List apps',
        description: `${PUBLIC_VIEW} Filter by category, featured or status; sort with order.`,
        querystring: ListQuery,
      },
    },
    async (request) => {
      const q = request.query;
      const order = parseOrder(q.order);
      const filter = { status: q.status, category: q.category, featured: q.featured };
      const { apps, total } = await catalog.list(await viewer(request), filter, order, paging(q));
      return ok(apps, total);
    },
  );

  app.get(
    '/api/app/search',
    {
      schema: {
        tags,
        summary: 'Search apps by keyword, best matches first',
        description: `${PUBLIC_VIEW} Rate-limited per client address (catalog.search_rate_per_minute).`,
        querystring: SearchQuery,
      },
      onRequest: searchLimit,
    },
    async (request) => {
      const q = request.query;
      const terms = parseKeyword(q.keyword);
      const filter = { status: q.status, category: q.category };
      const { apps, total } = await catalog.search(await viewer(request), terms, filter, paging(q));
      return ok(apps, total);
    },
  );

  app.get(
    '/api/app/featured',
    {
      schema: { tags, summary: 'List featured apps', description: PUBLIC_VIEW, querystring: SubsetQuery },
    },
    async (request) => {
      const q = request.query;
      const filter = { status: q.status, featured: true };
      const { apps, total } = await catalog.list(
        await viewer(request),
        filter,
        parseOrder(q.order),
        paging(q),
      );
      return ok(apps, total);
    },
  );

  app.get(
    '/api/app/category/:category',
    {
      schema: {
        tags,
        summary: 'List the apps of one category',
        description: PUBLIC_VIEW,
        params: CategoryParams,
        querystring: SubsetQuery,
      },
    },
    async (request) => {
      const q = request.query;
      const filter = { status: q.status, category: request.params.category };
      const { apps, total } = await catalog.list(
        await viewer(request),
        filter,
        parseOrder(q.order),
        paging(q),
      );
      return ok(apps, total);
    },
  );

  // `/api/app/category/` (trailing slash ignored) names no category: without this route it was
  // `/:id` with the id "category", answering `id: must be integer` to someone who asked for a
  // category. It answers what an unknown category does, from the same schema.
  app.get('/api/app/category', { schema: { tags, hide: true } }, async () => {
    checkBody(CategoryParams, { category: '' });
  });

  app.get(
    '/api/app/:id',
    { schema: { tags, summary: 'Get one app', description: PUBLIC_VIEW, params: IdParams } },
    async (request) => ok(await catalog.get(await viewer(request), request.params.id)),
  );

  app.post(
    '/api/app/download/:id',
    {
      schema: {
        tags,
        summary: 'Count a download of a published app and answer its download URL',
        description:
          'Public. Anonymous callers are limited per client address (limits.catalog_ip_rpm); a signed-in caller (session or access token) per user, as their other /api writes (auth.api_write_rate_per_minute).',
        params: IdParams,
      },
      bodyLimit: anonymousBodyLimit(services.config),
      onRequest: downloader,
    },
    async (request) => ok(await catalog.download(request.params.id)),
  );

  app.post(
    '/api/app',
    {
      schema: { tags, summary: 'Create an app', description: ADMIN_ONLY, body: CreateAppBody },
      onRequest: admin,
    },
    async (request) => {
      const created = await catalog.create(request.user!.id, request.body);
      request.log.info(
        {
          actor: request.user!.id,
          actor_name: request.user!.username,
          app_id: created.id,
          name: created.name,
        },
        'app created',
      );
      return ok(created);
    },
  );

  app.put(
    '/api/app',
    {
      schema: {
        tags,
        summary: 'Update an app (fields not sent are kept)',
        description: ADMIN_ONLY,
        body: UpdateAppBody,
      },
      onRequest: admin,
    },
    async (request) => {
      const { id, ...patch } = request.body;
      const { app: updated, fields } = await catalog.update(request.user!.id, id, patch);
      request.log.info(
        { actor: request.user!.id, actor_name: request.user!.username, app_id: id, fields },
        'app updated',
      );
      return ok(updated);
    },
  );

  app.delete(
    '/api/app/:id',
    {
      schema: { tags, summary: 'Delete an app', description: ADMIN_ONLY, params: IdParams },
      onRequest: admin,
    },
    async (request) => {
      await catalog.delete(request.params.id);
      request.log.info(
        { actor: request.user!.id, actor_name: request.user!.username, app_id: request.params.id },
        'app deleted',
      );
      return ok(null);
    },
  );
}
