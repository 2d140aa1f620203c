import { Role } from '../../access/roles.js';
import type { HealthSnapshot } from '../../gateway/routing/health.js';
import type { Services } from '../../services.js';
import type { App } from '../app.js';
import { requireUser } from '../auth.js';
import { ok } from '../envelope.js';
import { ADMIN_ONLY } from '../schemas.js';

interface UpstreamHealth extends Omit<HealthSnapshot, 'target'> {
  channel_id: number;
  channel_name: string;
  kind: string;
  model: string;
  /** Keys of this upstream set aside after an auth failure, and how many it has. */
  disabled_keys: number;
  keys: number;
}

const IDLE: Omit<HealthSnapshot, 'target'> = {
  state: 'closed',
  latency_ms: null,
  ttft_ms: null,
  tokens_per_sec: null,
  error_rate: 0,
  requests: 0,
  last_error: null,
  last_error_at: null,
};

/**
 * `GET /api/channel/health` (admin): every (upstream, model) pair the chat router can use, with
 * its circuit state and rolling figures; pairs without traffic yet show empty figures. Pairs
 * that have figures but are no longer routable (a channel disabled since) are listed too.
 * A static path, so it wins over `/api/channel/:id` whatever the registration order.
 */
export function registerHealthRoutes(app: App, services: Services): void {
  const admin = requireUser(services, Role.admin);
  app.get(
    '/api/channel/health',
    {
      schema: {
        tags: ['channels'],
        summary: 'Health of every upstream and model the chat router uses',
        description: `${ADMIN_ONLY} Circuit state, latency, time to first token, error rate and keys set aside, per (channel, model).`,
      },
      onRequest: admin,
    },
    async () => {
      const health = services.chat.health;
      const figures = new Map(health.snapshot().map((s) => [s.target, s]));
      const disabled = new Map(health.disabledKeys().map((d) => [d.channel_id, d.keys]));
      const rows: UpstreamHealth[] = [];
      const seen = new Set<string>();
      for (const m of services.registry.servableModels()) {
        for (const t of services.registry.targetsFor(m.id, { endpoint: 'chat' })) {
          const key = `${t.channelId}:${m.id}`;
          if (seen.has(key)) continue;
          seen.add(key);
          const { target: _t, ...fig } = figures.get(key) ?? { target: key, ...IDLE };
          rows.push({
            channel_id: t.channelId,
            channel_name: t.channelName,
            kind: t.kind,
            model: m.id,
            ...fig,
            disabled_keys: disabled.get(t.channelId) ?? 0,
            keys: t.keys.length,
          });
        }
      }
      for (const [key, s] of figures) {
        if (seen.has(key)) continue;
        const sep = key.indexOf(':');
        const channelId = Number(key.slice(0, sep));
        const { target: _t, ...fig } = s;
        rows.push({
          channel_id: channelId,
          channel_name: '',
          kind: '',
          model: key.slice(sep + 1),
          ...fig,
          disabled_keys: disabled.get(channelId) ?? 0,
          keys: 0,
        });
      }
      rows.sort((a, b) => a.channel_id - b.channel_id || a.model.localeCompare(b.model));
      return ok(rows, rows.length);
    },
  );
}
