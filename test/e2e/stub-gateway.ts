/**
 * A stand-in gateway for the console's browser tests while the real routes are being built:
 * serves web/dist with SPA fallback and an in-memory subset of the /api and /v1 contract of
 * shared/spec/decisions.md (envelope, session cookie, catalog rules, keys, streamed chat).
 * It is deliberately small; the real gateway replaces it through startGatewayForE2E().
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { CONSOLE_HEADERS } from '../../src/http/security-headers.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};
const CATEGORIES = ['development', 'productivity', 'tools', 'entertainment', 'general'];
const SELF_FIELDS = new Set(['display_name', 'email', 'default_model', 'password', 'current_password']);
const URL_FIELDS = ['author_url', 'thumbnail_url', 'download_url', 'source_url', 'documentation_url'];
const APP_FIELDS = new Set([
  'id',
  'name',
  'short_description',
  'description',
  'category',
  'version',
  'author',
  'tags',
  'status',
  'featured',
  ...URL_FIELDS,
]);

type Row = Record<string, any>;
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface StubGateway {
  url: string;
  close(): Promise<void>;
}

export async function startStubGateway(opts: {
  webRoot: string;
  admin: { username: string; password: string };
  chatModel: string;
  answer: string[];
  /** The name of an upstream the stand-in lists as declared in its config file. */
  declaredChannel?: string;
}): Promise<StubGateway> {
  const now = () => Math.floor(Date.now() / 1000);
  const users: Row[] = [
    {
      id: 1,
      username: opts.admin.username,
      password: opts.admin.password,
      display_name: 'Root',
      role: 100,
      status: 1,
      created_time: now(),
    },
  ];
  const sessions = new Map<string, number>();
  /** Personal access tokens (`Authorization: Bearer mgt-...` on /api), with their secrets. */
  const tokens: Row[] = [];
  const apps: Row[] = [];
  const keys: Row[] = [];
  const logs: Row[] = [];
  const channels: Row[] = [
    {
      id: 1,
      name: 'fake upstream',
      kind: 'openai-compatible',
      base_url: 'http://127.0.0.1:9/v1',
      keys: ['sk-…abcd'],
      models: [opts.chatModel],
      model_mapping: {},
      priority: 0,
      weight: 1,
      status: 1,
      source: 'api',
      revision: 1,
    },
    {
      id: 2,
      name: opts.declaredChannel ?? 'declared',
      kind: 'openai-compatible',
      base_url: 'http://127.0.0.1:9/v1',
      keys: [],
      models: ['e2e/declared-only'],
      model_mapping: {},
      priority: 0,
      weight: 1,
      status: 2,
      source: 'config',
      revision: 1,
    },
  ];
  const models: Row[] = [
    {
      id: opts.chatModel,
      name: 'Fake chat model',
      // A plausible release time (2025-01-01 UTC) like a registry entry's; the console shows none.
      created: 1_735_689_600,
      context_length: 8192,
      max_completion_tokens: 1024,
      pricing: { prompt: '0.000001', completion: '0.000002', request: '0', image: '0' },
      input_modalities: ['text'],
      output_modalities: ['text'],
      supported_parameters: ['temperature', 'max_tokens'],
      // Described by an admin only, as the gateway's e2e setup makes it: Delete removes it.
      source: 'admin',
      overridden: true,
      base_source: null,
    },
  ];
  let nextId = 1;

  const sessionUser = (req: IncomingMessage) => {
    const m = /(?:^|;\s*)mg_session=([^;]+)/.exec(req.headers.cookie ?? '');
    const bearer = /^Bearer (mgt-.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const id = m ? sessions.get(m[1]) : tokens.find((t) => t.secret === bearer)?.user_id;
    return users.find((u) => u.id === id);
  };
  const need = (req: IncomingMessage, role = 1) => {
    const u = sessionUser(req);
    if (!u) throw new HttpError(401, 'not signed in');
    if (u.role < role) throw new HttpError(403, 'administrators only');
    return u;
  };
  const publicUser = ({ password: _, ...u }: Row) => u;
  const page = (q: URLSearchParams) => {
    const p = Number(q.get('p') ?? 0);
    const size = Number(q.get('page_size') ?? 20);
    if (!Number.isInteger(p) || p < 0) throw new HttpError(400, 'p: must be >= 0');
    if (!Number.isInteger(size) || size < 1 || size > 100)
      throw new HttpError(400, 'page_size: must be 1..100');
    return { p, size };
  };
  const paged = (rows: Row[], q: URLSearchParams) => {
    const { p, size } = page(q);
    return { data: rows.slice(p * size, p * size + size), total: rows.length };
  };
  const sortApps = (rows: Row[], order: string) => {
    const [field, dir = 'asc'] = order.split(/[ +]/);
    if (
      !['id', 'name', 'download_count', 'created_time', 'updated_time'].includes(field) ||
      !['asc', 'desc'].includes(dir)
    )
      throw new HttpError(400, `order: unsupported "${order}"`);
    const sign = dir === 'desc' ? -1 : 1;
    return [...rows].sort((a, b) =>
      a[field] < b[field] ? -sign : a[field] > b[field] ? sign : sign * (a.id - b.id),
    );
  };
  const validateApp = (body: Row, creating: boolean) => {
    for (const k of Object.keys(body))
      if (!APP_FIELDS.has(k)) throw new HttpError(400, `${k}: unknown field`);
    if (creating || 'name' in body) {
      if (typeof body.name !== 'string' || !body.name.trim() || body.name.length > 128)
        throw new HttpError(400, 'name: is required (1..128 characters)');
    }
    if ('category' in body && !CATEGORIES.includes(body.category))
      throw new HttpError(400, 'category: unknown category');
    for (const f of URL_FIELDS) {
      const v = body[f];
      if (v === undefined || v === '') continue;
      let ok = false;
      try {
        const u = new URL(v);
        ok = (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password;
      } catch {}
      if (!ok) throw new HttpError(400, `${f}: must be an absolute http or https URL`);
    }
  };
  const visible = (req: IncomingMessage) => {
    const u = sessionUser(req);
    return u && u.role >= 10 ? apps : apps.filter((a) => a.status === 1);
  };
  const appById = (req: IncomingMessage, id: string) => {
    const a = visible(req).find((x) => x.id === Number(id));
    if (!a) throw new HttpError(404, `app ${id} not found`);
    return a;
  };

  async function api(req: IncomingMessage, res: ServerResponse, path: string, q: URLSearchParams, body: any) {
    const m = req.method ?? 'GET';
    const ok = (data: unknown, total?: number, headers: Record<string, string> = {}) =>
      send(
        res,
        200,
        { success: true, message: '', data, ...(total === undefined ? {} : { total }) },
        headers,
      );
    let r: RegExpExecArray | null = null;
    const at = (re: RegExp) => {
      r = re.exec(path);
      return r !== null;
    };

    if (m === 'POST' && path === '/api/user/login') {
      const u = users.find(
        (x) => x.username === body?.username && x.password === body?.password && x.status === 1,
      );
      if (!u) throw new HttpError(401, 'wrong username or password');
      const sid = randomBytes(16).toString('hex');
      sessions.set(sid, u.id);
      return ok(publicUser(u), undefined, {
        'set-cookie': `mg_session=${sid}; Path=/; HttpOnly; SameSite=Strict`,
      });
    }
    if (m === 'POST' && path === '/api/user/logout')
      return ok(null, undefined, {
        'set-cookie': 'mg_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict',
      });
    if (m === 'GET' && path === '/api/user/self') return ok(publicUser(need(req)));
    if (m === 'GET' && path === '/api/user/session') {
      const u = sessionUser(req);
      return ok(u ? publicUser(u) : null);
    }
    if (m === 'PUT' && path === '/api/user/self') {
      // The Account page: own settings, and the password only with the current one.
      const u = need(req);
      for (const k of Object.keys(body))
        if (!SELF_FIELDS.has(k)) throw new HttpError(400, `${k}: unknown field`);
      if (body.password !== undefined) {
        if (typeof body.password !== 'string' || body.password.length < 8)
          throw new HttpError(400, 'password: must have at least 8 characters');
        if (!body.current_password)
          throw new HttpError(400, 'current_password: required to change the password');
        if (body.current_password !== u.password)
          throw new HttpError(400, 'current_password: does not match');
        u.password = body.password;
      }
      for (const k of ['display_name', 'email', 'default_model']) if (body[k] !== undefined) u[k] = body[k];
      return ok(publicUser(u));
    }
    if (path === '/api/user/tokens' || path.startsWith('/api/user/tokens/')) {
      const u = need(req);
      const view = ({ secret: _, ...t }: Row) => t;
      if (m === 'GET') {
        const mine = tokens.filter((t) => t.user_id === u.id).map(view);
        return ok(mine, mine.length);
      }
      if (m === 'POST') {
        if (typeof body.name !== 'string' || !body.name) throw new HttpError(400, 'name: is required');
        if (body.expires_time != null && body.expires_time <= now())
          throw new HttpError(400, 'expires_time: must be in the future (unix seconds), or null for never');
        const secret = `mgt-${randomBytes(20).toString('hex')}`;
        const t = {
          id: nextId++,
          user_id: u.id,
          name: body.name,
          token_prefix: secret.slice(0, 10),
          created_time: now(),
          expires_time: body.expires_time ?? null,
          last_used_time: null,
          secret,
        };
        tokens.push(t);
        return ok({ ...view(t), token: secret });
      }
      if (m === 'DELETE' && at(/^\/api\/user\/tokens\/(\d+)$/)) {
        const i = tokens.findIndex((t) => t.id === Number(r![1]) && t.user_id === u.id);
        if (i < 0) throw new HttpError(404, `token ${r![1]} not found`);
        tokens.splice(i, 1);
        return ok(null);
      }
    }
    if (path === '/api/user') {
      need(req, 10);
      if (m === 'GET') return ok(...(Object.values(paged(users.map(publicUser), q)) as [Row[], number]));
      if (m === 'POST') {
        if (!body.password || body.password.length < 8)
          throw new HttpError(400, 'password: must have at least 8 characters');
        const u = { id: users.length + 1, role: 1, status: 1, created_time: now(), ...body };
        users.push(u);
        return ok(publicUser(u));
      }
      if (m === 'PUT') return ok(publicUser(Object.assign(users.find((u) => u.id === body.id) ?? {}, body)));
    }

    if (m === 'GET' && path === '/api/app') {
      let rows = visible(req);
      const cat = q.get('category');
      if (cat) {
        if (!CATEGORIES.includes(cat)) throw new HttpError(400, 'category: unknown category');
        rows = rows.filter((a) => a.category === cat);
      }
      if (q.get('featured') === 'true') rows = rows.filter((a) => a.featured);
      if (q.get('status')) rows = rows.filter((a) => a.status === Number(q.get('status')));
      const { data, total } = paged(sortApps(rows, q.get('order') ?? 'created_time desc'), q);
      return ok(data, total);
    }
    if (m === 'GET' && path === '/api/app/featured') {
      const { data, total } = paged(
        sortApps(
          visible(req).filter((a) => a.featured && a.status === 1),
          'created_time desc',
        ),
        q,
      );
      return ok(data, total);
    }
    if (m === 'GET' && path === '/api/app/search') {
      const keyword = (q.get('keyword') ?? '').trim().toLowerCase();
      if (!keyword || keyword.length > 100) throw new HttpError(400, 'keyword: must be 1..100 characters');
      const words = keyword.split(/\s+/);
      const rows = apps.filter(
        (a) =>
          a.status === 1 &&
          words.every((w) =>
            [a.name, a.short_description, a.description, a.tags, a.author]
              .join(' ')
              .toLowerCase()
              .includes(w),
          ),
      );
      const { data, total } = paged(rows, q);
      return ok(data, total);
    }
    if (m === 'GET' && at(/^\/api\/app\/category\/([^/]+)$/)) {
      const { data, total } = paged(
        visible(req).filter((a) => a.category === r![1] && a.status === 1),
        q,
      );
      return ok(data, total);
    }
    if (m === 'POST' && at(/^\/api\/app\/download\/(\d+)$/)) {
      const a = apps.find((x) => x.id === Number(r![1]) && x.status === 1);
      if (!a) throw new HttpError(404, 'app not found');
      if (!a.download_url) throw new HttpError(409, 'this app has no download');
      a.download_count += 1;
      return ok({ download_url: a.download_url, download_count: a.download_count });
    }
    if (m === 'GET' && at(/^\/api\/app\/(\d+)$/)) return ok(appById(req, r![1]));
    if (m === 'POST' && path === '/api/app') {
      const u = need(req, 10);
      validateApp(body, true);
      const a = {
        short_description: '',
        description: '',
        category: 'general',
        version: '',
        author: '',
        tags: '',
        author_url: '',
        thumbnail_url: '',
        download_url: '',
        source_url: '',
        documentation_url: '',
        status: 1,
        featured: false,
        ...body,
        id: nextId++,
        download_count: 0,
        created_time: now() + apps.length,
        updated_time: now(),
        created_by: u.id,
        updated_by: u.id,
      };
      apps.push(a);
      return ok(a);
    }
    if (m === 'PUT' && path === '/api/app') {
      const u = need(req, 10);
      const a = apps.find((x) => x.id === body?.id);
      if (!a) throw new HttpError(404, 'app not found');
      validateApp(body, false);
      Object.assign(a, body, { updated_time: now(), updated_by: u.id });
      return ok(a);
    }
    if (m === 'DELETE' && at(/^\/api\/app\/(\d+)$/)) {
      need(req, 10);
      const i = apps.findIndex((x) => x.id === Number(r![1]));
      if (i < 0) throw new HttpError(404, 'app not found');
      apps.splice(i, 1);
      return ok(null);
    }

    if (path === '/api/key' || path.startsWith('/api/key/')) {
      const u = need(req);
      const mine = keys.filter((k) => k.user_id === u.id || u.role >= 10);
      const view = ({ secret: _, ...k }: Row) => k;
      if (m === 'GET') {
        // Newest first, as the gateway lists them; `ids=3,17` narrows to those keys, `user_id`
        // to one user's (another user's only for admins, as on the gateway).
        let rows = [...mine].reverse();
        const userId = q.get('user_id');
        if (userId !== null) {
          if (!/^[1-9][0-9]{0,9}$/.test(userId))
            throw new HttpError(400, 'user_id: must be a positive integer');
          if (u.role < 10 && Number(userId) !== u.id)
            throw new HttpError(403, "only admins can list other users' keys");
          rows = rows.filter((k) => k.user_id === Number(userId));
        }
        const ids = q.get('ids');
        if (ids !== null) {
          const wanted = ids.split(',');
          if (wanted.length > 100 || !wanted.every((id) => /^[1-9][0-9]{0,9}$/.test(id)))
            throw new HttpError(400, 'ids: must be 1 to 100 ids separated by commas');
          rows = rows.filter((k) => wanted.includes(String(k.id)));
        }
        const { data, total } = paged(rows.map(view), q);
        return ok(data, total);
      }
      if (m === 'POST') {
        if (!body.name) throw new HttpError(400, 'name: is required');
        const secret = `sk-mg-${randomBytes(18).toString('hex')}`;
        const k = {
          expires_time: null,
          quota_limit: null,
          allowed_models: null,
          rpm_limit: null,
          tpm_limit: null,
          ...body,
          id: nextId++,
          user_id: u.id,
          key_prefix: `${secret.slice(0, 10)}…`,
          status: 1,
          quota_used: 0,
          created_time: now(),
          updated_time: now(),
          // The stand-in's keys are their owner's own: no administrator holds their limits.
          admin_managed: false,
          admin_disabled: false,
          secret,
        };
        keys.push(k);
        return ok({ ...view(k), key: secret });
      }
      if (m === 'PUT') {
        const k = mine.find((x) => x.id === body.id);
        if (!k) throw new HttpError(404, `key ${body.id} not found`);
        return ok(view(Object.assign(k, body)));
      }
      if (m === 'DELETE') {
        // Like the gateway: an unknown id is a 404 (splicing at -1 would remove the last key).
        const i = keys.findIndex((k) => `/api/key/${k.id}` === path && mine.includes(k));
        if (i < 0) throw new HttpError(404, `key ${path.slice('/api/key/'.length)} not found`);
        keys.splice(i, 1);
        return ok(null);
      }
    }
    if (path === '/api/channel' && m === 'GET')
      return (
        need(req, 10) &&
        ok(
          channels.map((c) => ({ ...c, served_models: c.models, listing: null })),
          channels.length,
        )
      );
    if (at(/^\/api\/channel\/(\d+)$/) && m === 'GET') {
      need(req, 10);
      // The console's upstream form reads the channel as it is now when it opens.
      const c = channels.find((x) => x.id === Number(r![1]));
      if (!c) throw new HttpError(404, `channel ${r![1]} not found`);
      return ok({ ...c, served_models: c.models, listing: null });
    }
    if (path === '/api/channel' && m === 'PUT') {
      need(req, 10);
      const c = channels.find((x) => x.id === body.id);
      if (!c) throw new HttpError(404, `channel ${body.id} not found`);
      // Like the gateway: a revision sent must be the stored one.
      const { revision, ...patch } = body;
      if (revision !== undefined && revision !== c.revision)
        throw new HttpError(
          409,
          `channel ${c.id} was changed after revision ${revision} (it is at ${c.revision})`,
        );
      return ok(Object.assign(c, patch, { revision: c.revision + 1 }));
    }
    if (path === '/api/channel' && m === 'POST') {
      need(req, 10);
      const c = {
        base_url: '',
        keys: [],
        models: [],
        model_mapping: {},
        priority: 0,
        weight: 1,
        status: 1,
        settings: {},
        ...body,
        id: Math.max(0, ...channels.map((x) => x.id)) + 1,
        source: 'api',
        revision: 1,
      };
      c.keys = c.keys.map((k: string) => `${k.slice(0, 3)}…${k.slice(-4)}`);
      channels.push(c);
      return ok({ ...c, served_models: c.models, listing: null });
    }
    if (at(/^\/api\/channel\/(\d+)$/) && m === 'DELETE') {
      need(req, 10);
      const i = channels.findIndex((x) => x.id === Number(r![1]));
      if (i < 0) throw new HttpError(404, `channel ${r![1]} not found`);
      channels.splice(i, 1);
      return ok(null);
    }
    if (at(/^\/api\/channel\/(\d+)\/test$/) && m === 'POST') {
      need(req, 10);
      const c = channels.find((x) => x.id === Number(r![1]));
      if (!c) throw new HttpError(404, `channel ${r![1]} not found`);
      const model = body?.model ?? c.models[0];
      if (!model) throw new HttpError(400, 'model: channel serves no models');
      const tried = {
        model,
        upstream_model: c.model_mapping?.[model] ?? model,
        endpoint: 'chat',
        latency_ms: 42,
      };
      // As the gateway answers a base URL without its /v1: 200, success false, what failed in data.
      const base = String(c.base_url).replace(/\/+$/, '');
      if (!/\/v\d/.test(new URL(base || 'http://x').pathname)) {
        const message = `${base} answered 404: no route (openai-compatible channels take a base_url ending in /v1: ${base}/v1)`;
        const data = { ...tried, success: false, upstream_status: 404, error_kind: 'not_found', message };
        return send(res, 200, { success: false, message, data });
      }
      return ok({ ...tried, success: true, upstream_status: null, error_kind: null, message: 'ok' });
    }
    if (path === '/api/model' && m === 'GET') return need(req) && ok(models, models.length);
    if (path === '/api/log' && m === 'GET') {
      need(req);
      const { data, total } = paged([...logs].reverse(), q);
      // Named as the gateway names them: null once the user or key is gone.
      const named = data.map((l) => {
        const u = users.find((x) => x.id === l.user_id);
        const k = keys.find((x) => x.id === l.key_id);
        return {
          ...l,
          username: u?.username ?? null,
          user_display_name: u?.display_name ?? null,
          key_name: k?.name ?? null,
        };
      });
      return ok(named, total);
    }
    if (path === '/api/log/stats' && m === 'GET') {
      need(req);
      // Shaped as the gateway's: a day is the Unix second it starts at (UTC), a key its id or
      // null (requests without one); days oldest first, models and keys busiest first.
      const group = q.get('group') ?? 'day';
      const buckets = new Map<number | string | null, Row>();
      for (const l of logs) {
        const key: number | string | null =
          group === 'model'
            ? l.model
            : group === 'key'
              ? (l.key_id ?? null)
              : Math.floor(l.created_time / 86_400) * 86_400;
        const b = buckets.get(key) ?? {
          bucket: key,
          requests: 0,
          prompt_tokens: 0,
          completion_tokens: 0,
          cost: 0,
        };
        b.requests++;
        b.prompt_tokens += l.prompt_tokens;
        b.completion_tokens += l.completion_tokens;
        b.cost += l.cost;
        buckets.set(key, b);
      }
      const rows = [...buckets.values()];
      const byBucket = (a: Row, b: Row) => (a.bucket < b.bucket ? -1 : a.bucket > b.bucket ? 1 : 0);
      rows.sort(group === 'day' ? byBucket : (a, b) => b.requests - a.requests || byBucket(a, b));
      return ok(rows, rows.length);
    }
    throw new HttpError(404, `no route for ${m} ${path}`);
  }

  function keyOf(req: IncomingMessage) {
    const secret = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const k = keys.find((x) => x.secret === secret && x.status === 1);
    if (!k) throw Object.assign(new HttpError(401, 'invalid API key'), { v1: true });
    return k;
  }

  async function v1(req: IncomingMessage, res: ServerResponse, path: string, body: any) {
    const k = keyOf(req);
    if (req.method === 'GET' && path === '/v1/models')
      return send(res, 200, {
        object: 'list',
        data: models.map((m) => ({
          id: m.id,
          name: m.name,
          object: 'model',
          created: m.created,
          owned_by: 'modelgate',
          pricing: m.pricing,
          context_length: m.context_length,
        })),
      });
    if (req.method === 'POST' && path === '/v1/chat/completions') {
      if (body?.model !== opts.chatModel) throw new HttpError(404, `model ${body?.model} not found`);
      const started = Date.now();
      const id = `gen-${randomBytes(6).toString('hex')}`;
      const base = {
        id,
        object: 'chat.completion.chunk',
        created: now(),
        model: opts.chatModel,
        provider: 'fake',
      };
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(': keep-alive\n\n');
      for (const [i, piece] of opts.answer.entries()) {
        await new Promise((r) => setTimeout(r, 120));
        const delta = i === 0 ? { role: 'assistant', content: piece } : { content: piece };
        res.write(
          `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`,
        );
      }
      const usage = {
        prompt_tokens: 12,
        completion_tokens: opts.answer.length,
        total_tokens: 12 + opts.answer.length,
        cost: 0.000024,
      };
      res.write(
        `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
      );
      res.write(`data: ${JSON.stringify({ ...base, choices: [], usage })}\n\n`);
      res.end('data: [DONE]\n\n');
      logs.push({
        id: logs.length + 1,
        created_time: now(),
        user_id: k.user_id,
        key_id: k.id,
        model: opts.chatModel,
        provider: 'fake',
        prompt_tokens: 12,
        completion_tokens: opts.answer.length,
        cost: usage.cost,
        latency_ms: Date.now() - started,
        ttft_ms: 120,
        status: 200,
        error_kind: null,
      });
      k.quota_used += usage.cost;
      return;
    }
    throw new HttpError(404, `no route for ${req.method} ${path}`);
  }

  function serveFile(res: ServerResponse, path: string) {
    const file = normalize(join(opts.webRoot, path));
    const inside = file.startsWith(opts.webRoot) && existsSync(file) && extname(file);
    const target = inside ? file : join(opts.webRoot, 'index.html');
    // The gateway's own console headers, so a console change that breaks its policy shows here too.
    res.writeHead(200, {
      'content-type': TYPES[extname(target)] ?? 'application/octet-stream',
      ...CONSOLE_HEADERS,
    });
    res.end(readFileSync(target));
  }

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://stub');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: any;
    try {
      body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    } catch {
      return send(res, 400, { success: false, message: 'body: not JSON' });
    }
    try {
      if (url.pathname.startsWith('/api/')) await api(req, res, url.pathname, url.searchParams, body ?? {});
      else if (url.pathname.startsWith('/v1/')) await v1(req, res, url.pathname, body ?? {});
      else serveFile(res, url.pathname);
    } catch (e) {
      const status = e instanceof HttpError ? e.status : 500;
      const message = e instanceof Error ? e.message : String(e);
      if (url.pathname.startsWith('/v1/'))
        send(res, status, { error: { code: status, message, type: 'invalid_request_error', param: null } });
      else send(res, status, { success: false, message });
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
