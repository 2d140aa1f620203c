import type { Services } from '../services.js';
import { connectErrorDetail, problemKind } from '../store/connect-errors.js';
import type { App } from './app.js';

/**
 * `/readyz` is public: load balancers and orchestrators call it without credentials. Its answer
 * says which dependency is failing and the kind of failure in words (`error: cannot connect`,
 * `degraded: timed out`); the address, the connection error and the driver's message, which
 * would describe the network behind the gateway to anyone who asks, go to the log (at warn, each
 * time a check's detail changes, so a probe every few seconds does not repeat it).
 */
export function registerOpsRoutes(app: App, services: Services): void {
  const lastLogged = new Map<string, string>();
  const failed = (name: string, level: 'error' | 'degraded', err: unknown): string => {
    const publicMessage = (err as { publicMessage?: unknown } | undefined)?.publicMessage;
    const kind = typeof publicMessage === 'string' ? publicMessage : problemKind(err);
    const detail = connectErrorDetail(err);
    if (lastLogged.get(name) !== detail) {
      lastLogged.set(name, detail);
      app.log.warn({ check: name, detail }, `readiness check ${name}: ${level}`);
    }
    return `${level}: ${kind}`;
  };
  const passed = (name: string): string => {
    lastLogged.delete(name);
    return 'ok';
  };
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const checks: Record<string, string> = {};
    let ready = true;
    try {
      await services.database.ping();
      checks.database = passed('database');
    } catch (err) {
      ready = false;
      checks.database = failed('database', 'error', err);
    }
    for (const [name, probe] of Object.entries(services.probes)) {
      try {
        await probe();
        checks[name] = passed(name);
      } catch (err) {
        // A degraded dependency (Redis) is reported, but the instance still serves.
        const soft = (err as { degraded?: boolean }).degraded === true;
        if (!soft) ready = false;
        checks[name] = failed(name, soft ? 'degraded' : 'error', err);
      }
    }
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks });
  });
}
