import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { Role } from '../../access/roles.js';
import { badRequest, forbidden } from '../../gateway/errors.js';
import type { Registry } from '../../gateway/registry/index.js';
import type { Services } from '../../services.js';
import type { LogFilter, NamedRequestLogRow, RequestLogRow } from '../../store/logs-repo.js';
import type { App } from '../app.js';
import { requireUser } from '../auth.js';
import { ok, paging } from '../envelope.js';
import { PageQuery, RowId, UnixSeconds } from '../schemas.js';

const Id = RowId;
const Seconds = UnixSeconds;
const Filters = {
  user_id: Type.Optional(Id),
  from: Type.Optional(Seconds),
  to: Type.Optional(Seconds),
};
const ListQuery = Type.Object({
  ...PageQuery,
  ...Filters,
  model: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  key_id: Type.Optional(Id),
  status: Type.Optional(Type.Integer({ minimum: 100, maximum: 599 })),
});
const StatsQuery = Type.Object({
  ...Filters,
  group: Type.Optional(Type.Enum(['day', 'model', 'key'])),
  model: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  key_id: Type.Optional(Id),
});

/**
 * A log as the API returns it: the stored row (derived from it, so a column added is a compile
 * error in `toPublicLog` until it is returned), its cost in USD (`cost`, stored as micro-dollars),
 * `stream` a boolean and the attempt trail parsed.
 */
export type PublicLog = Omit<RequestLogRow, 'cost_micros' | 'stream' | 'attempts'> & {
  /** USD. */
  cost: number;
  stream: boolean;
  attempts: unknown[] | null;
};

/** A log as GET /api/log lists it: the names of its user and key beside their ids. */
export interface NamedPublicLog extends PublicLog {
  /** The user's login name; null when the request had no user or the user is deleted. */
  username: string | null;
  /** The user's display name (may be empty); null as for `username`. */
  user_display_name: string | null;
  /** The key's name; null when the request used no key or the key is deleted. */
  key_name: string | null;
}

const toNamedPublicLog = (r: NamedRequestLogRow): NamedPublicLog => ({
  ...toPublicLog(r),
  username: r.username ?? null,
  user_display_name: r.user_display_name ?? null,
  key_name: r.key_name ?? null,
});

export const toPublicLog = (r: RequestLogRow): PublicLog => ({
  id: r.id,
  created_time: r.created_time,
  request_id: r.request_id,
  user_id: r.user_id,
  key_id: r.key_id,
  endpoint: r.endpoint,
  model: r.model,
  provider: r.provider,
  channel_id: r.channel_id,
  prompt_tokens: r.prompt_tokens,
  completion_tokens: r.completion_tokens,
  cost: r.cost_micros / 1e6,
  latency_ms: r.latency_ms,
  ttft_ms: r.ttft_ms,
  status: r.status,
  error_kind: r.error_kind,
  stream: r.stream === 1,
  attempts: r.attempts ? (JSON.parse(r.attempts) as unknown[]) : null,
});

/**
 * The names a `model` filter finds rows under: a success is logged under the registry id, a
 * refusal before routing under the name the client sent (an alias, a plain name), so a name that
 * resolves to a model finds both, by every name of that model. Any other name is matched as is
 * (an unknown model's 404 rows, a model removed since).
 */
function modelNames(registry: Pick<Registry, 'resolve' | 'namesOf'>, name: string | undefined) {
  if (name === undefined) return undefined;
  const m = registry.resolve(name);
  return m ? [...new Set([name, ...registry.namesOf(m.id)])] : [name];
}

/** Admins see every user's logs (and may filter by user_id); a user sees only their own. */
function visibleFilter(
  registry: Pick<Registry, 'resolve' | 'namesOf'>,
  request: FastifyRequest,
  q: { user_id?: number; from?: number; to?: number; model?: string; key_id?: number; status?: number },
): LogFilter {
  const user = request.user!;
  if (q.from !== undefined && q.to !== undefined && q.from > q.to)
    throw badRequest('from: must not be after to', 'from');
  let userId = q.user_id;
  if (user.role < Role.admin) {
    if (userId !== undefined && userId !== user.id) throw forbidden("only admins can read other users' logs");
    userId = user.id;
  }
  const models = modelNames(registry, q.model);
  return { userId, keyId: q.key_id, models, status: q.status, from: q.from, to: q.to };
}

const OWN_LOGS = "Your own requests; admins see every user's (user_id narrows to one).";

export function registerLogRoutes(app: App, services: Services): void {
  const signedIn = requireUser(services, Role.user);
  const tags = ['logs'];

  app.get(
    '/api/log',
    {
      schema: {
        tags,
        summary: 'List request logs, newest first',
        description: `${OWN_LOGS} Filter by model, key, status and time.`,
        querystring: ListQuery,
      },
      onRequest: signedIn,
    },
    async (request) => {
      const { offset, limit } = paging(request.query);
      const { rows, total } = await services.repos.logs.list(
        visibleFilter(services.registry, request, request.query),
        offset,
        limit,
      );
      return ok(rows.map(toNamedPublicLog), total);
    },
  );

  app.get(
    '/api/log/stats',
    {
      schema: {
        tags,
        summary: 'Usage and cost totals by day, model or key',
        description: OWN_LOGS,
        querystring: StatsQuery,
      },
      onRequest: signedIn,
    },
    async (request) => {
      const rows = await services.repos.logs.stats(
        request.query.group ?? 'day',
        visibleFilter(services.registry, request, request.query),
      );
      return ok(
        rows.map(({ cost_micros, ...r }) => ({ ...r, cost: cost_micros / 1e6 })),
        rows.length,
      );
    },
  );
}
