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

describe('/readyz with the configured Redis unreachable', () => {
  it('says in words that it cannot connect, with the connection error and without the password', async () => {
    gw = await startTestGateway({ redis: { url: 'redis://:hunter2-secret@127.0.0.1:1/0' } });
    const r = await gw.call('GET', '/readyz');
    expect(r.status).toBe(200);
    expect(r.body.checks.redis).toBe('degraded: cannot connect (ECONNREFUSED 127.0.0.1:1)');
    expect(JSON.stringify(r.body)).not.toContain('hunter2');
  });
});
