import type { Services } from '../services.js';
import type { App } from './app.js';

export function registerOpsRoutes(app: App, services: Services): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const checks: Record<string, string> = {};
    let ready = true;
    try {
      await services.database.ping();
      checks.database = 'ok';
    } catch (err) {
      ready = false;
      checks.database = `error: ${(err as Error).message}`;
    }
    for (const [name, probe] of Object.entries(services.probes)) {
      try {
        await probe();
        checks[name] = 'ok';
      } catch (err) {
        // A degraded dependency (Redis) is reported, but the instance still serves.
        const soft = (err as { degraded?: boolean }).degraded === true;
        if (!soft) ready = false;
        checks[name] = `${soft ? 'degraded' : 'error'}: ${(err as Error).message}`;
      }
    }
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks });
  });
}
