import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

/** The sample of `modelgate_redis_up` in GET /metrics, or undefined when the series is absent. */
async function redisUp(g: TestGateway): Promise<number | undefined> {
  const text = (await g.call('GET', '/metrics')).body as string;
  const m = /^modelgate_redis_up (\S+)$/m.exec(text);
  return m ? Number(m[1]) : undefined;
}

describe('modelgate_redis_up', () => {
  it('is absent on an instance without Redis, so an alert on 0 does not fire there', async () => {
    gw = await startTestGateway({}, { redis: false });
    const text = (await gw.call('GET', '/metrics')).body as string;
    expect(text).toContain('modelgate_request_logs_pending');
    expect(text).not.toContain('modelgate_redis_up');
  });

  it('is 0 while the configured Redis is unreachable', async () => {
    gw = await startTestGateway({ redis: { url: 'redis://127.0.0.1:1/0' } });
    expect(await redisUp(gw)).toBe(0);
  });
});

/** A logger whose lines the test reads. */
function capturedLog() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { lines, log: log as FastifyBaseLogger };
}

/**
 * `/readyz` is public (load balancers call it without credentials): it says what is wrong in
 * words, and the addresses and driver messages behind it go to the log, not to anyone who asks.
 */
describe('/readyz with the configured Redis unreachable', () => {
  it('says in words that it cannot connect, and logs the connection error, without the password', async () => {
    const { lines, log } = capturedLog();
    gw = await startTestGateway(
      { redis: { url: 'redis://:hunter2-secret@127.0.0.1:1/0' }, log: { level: 'info' } },
      { log },
    );
    const r = await gw.call('GET', '/readyz');
    expect(r.status).toBe(200);
    expect(r.body.checks.redis).toBe('degraded: cannot connect');
    expect(JSON.stringify(r.body)).not.toContain('127.0.0.1');
    expect(JSON.stringify(r.body)).not.toContain('hunter2');
    const logged = lines.filter((l) => l.msg === 'readiness check redis: degraded');
    expect(logged.at(-1)).toMatchObject({ detail: 'cannot connect (ECONNREFUSED 127.0.0.1:1)' });
    expect(JSON.stringify(lines)).not.toContain('hunter2');
  });
});

describe('/readyz with the database failing', () => {
  it('answers 503 naming the kind of failure, and logs the driver’s words', async () => {
    const { lines, log } = capturedLog();
    gw = await startTestGateway({ log: { level: 'info' } }, { log, redis: false });
    const errors = [
      Object.assign(new Error('connect ECONNREFUSED 10.20.30.40:5432'), {
        code: 'ECONNREFUSED',
        address: '10.20.30.40',
        port: 5432,
      }),
      new Error('Connection terminated due to connection timeout'),
      Object.assign(new Error('password authentication failed for user "gateway_owner"'), { code: '28P01' }),
      new Error('relation "pg_stat_internal_x" at db-primary.internal: something odd'),
    ];
    const said: string[] = [];
    for (const err of errors) {
      gw.services.database.ping = async () => {
        throw err;
      };
      const r = await gw.call('GET', '/readyz');
      expect(r.status).toBe(503);
      expect(r.body.status).toBe('not ready');
      said.push(r.body.checks.database);
      for (const secret of ['10.20.30.40', 'gateway_owner', 'db-primary', 'terminated'])
        expect(JSON.stringify(r.body)).not.toContain(secret);
    }
    expect(said).toEqual([
      'error: cannot connect',
      'error: timed out',
      'error: authentication failed',
      'error: unavailable',
    ]);
    const details = lines.filter((l) => l.msg === 'readiness check database: error').map((l) => l.detail);
    expect(details).toEqual([
      'ECONNREFUSED 10.20.30.40:5432',
      'Connection terminated due to connection timeout',
      'password authentication failed for user "gateway_owner"',
      'relation "pg_stat_internal_x" at db-primary.internal: something odd',
    ]);
  });
});
