import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_PASSWORD, startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * `modelgate_rate_limit_rejections_total` counts the 429s of the per-route limits too
 * (docs/scaling.md, "Metrics"): sign-in per client address (`login_ip`), writes to `/api` per
 * user (`api_write_user`) and catalog search per client address (`search_ip`), each under its
 * own scope and only for the requests that limit refused. In memory (no Redis): this
 * gateway's own counts.
 */
let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway(
    {
      auth: { login_rate_per_minute: 3, api_write_rate_per_minute: 2 },
      catalog: { search_rate_per_minute: 2 },
    },
    { redis: false },
  );
});
afterAll(async () => gw?.close());

/** Each scope's count in GET /metrics (undefined: no series yet). */
async function rejections(): Promise<Record<string, number>> {
  const text = (await gw.call('GET', '/metrics')).body as string;
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^modelgate_rate_limit_rejections_total\{scope="([^"]+)"\} (\S+)$/gm))
    out[m[1]!] = Number(m[2]);
  return out;
}

const login = (password: string) =>
  gw.call('POST', '/api/user/login', { body: { username: 'root', password } });

describe('rate-limit rejections in /metrics', () => {
  it('sign-in, /api writes and catalog search each count their own 429s', async () => {
    // Sign-in: three attempts a minute from this address, right password or wrong.
    const cookie = await gw.login();
    expect((await login('wrong-one')).status).toBe(401);
    expect((await login('wrong-two')).status).toBe(401);
    expect((await login('wrong-three')).status).toBe(429);
    expect((await login(ROOT_PASSWORD)).status).toBe(429);
    expect(await rejections()).toEqual({ login_ip: 2 });

    // /api writes: two a minute for root, whatever the method.
    for (const name of ['k1', 'k2'])
      expect((await gw.call('POST', '/api/key', { cookie, body: { name } })).status).toBe(200);
    expect((await gw.call('POST', '/api/key', { cookie, body: { name: 'k3' } })).status).toBe(429);
    expect((await gw.call('DELETE', '/api/key/1', { cookie })).status).toBe(429);
    expect((await gw.call('PUT', '/api/key', { cookie, body: { id: 1, name: 'x' } })).status).toBe(429);
    // Reads are not limited, so not counted.
    expect((await gw.call('GET', '/api/key', { cookie })).status).toBe(200);
    expect(await rejections()).toEqual({ login_ip: 2, api_write_user: 3 });

    // Catalog search: two a minute from this address.
    for (let i = 0; i < 2; i++) expect((await gw.call('GET', '/api/app/search?keyword=x')).status).toBe(200);
    expect((await gw.call('GET', '/api/app/search?keyword=x')).status).toBe(429);
    expect(await rejections()).toEqual({ login_ip: 2, api_write_user: 3, search_ip: 1 });
  });
});
