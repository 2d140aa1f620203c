import Fastify from 'fastify';
import { Pool } from 'undici';

/**
 * The baseline: the thinnest pass-through proxy on the gateway's own stack (Fastify 5 + an
 * undici Pool with keep-alive). It parses the JSON body (as the gateway must), forwards it,
 * and returns the upstream's bytes; no auth, routing, quotas, logs or re-encoding.
 */
const upstream = process.env.UPSTREAM_URL;
if (!upstream) throw new Error('UPSTREAM_URL is required');
const base = new URL(upstream);
const pool = new Pool(base.origin, { connections: null, keepAliveTimeout: 30_000, pipelining: 1 });
const prefix = base.pathname.replace(/\/$/, '');

const app = Fastify({ logger: { level: 'warn' }, bodyLimit: 10 * 1024 * 1024 });

app.post('/v1/chat/completions', async (request, reply) => {
  const body = request.body as { stream?: boolean };
  const res = await pool.request({
    path: `${prefix}/chat/completions`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
    body: JSON.stringify(body),
  });
  reply.code(res.statusCode);
  if (body.stream) {
    reply.header('content-type', 'text/event-stream').header('cache-control', 'no-cache');
    return reply.send(res.body);
  }
  reply.header('content-type', 'application/json');
  return reply.send(await res.body.text());
});

app.get('/health', async () => ({ ok: true }));

const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
process.stdout.write(`baseline listening on ${address}\n`);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    app.close().then(() => pool.close().then(() => process.exit(0)));
  });
}
