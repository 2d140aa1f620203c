import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * The per-address limits (sign-in, catalog search, other anonymous catalog routes) count an IPv6
 * client by its /64: one host is usually given a whole /64, so keyed by the full address a client
 * rotating through its own /64 had a fresh allowance with every request. IPv4 (and IPv4-mapped
 * IPv6, the same client) counts by the full address. Addresses are presented through
 * X-Forwarded-For from a trusted proxy (the test's loopback).
 */
let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway(
    {
      server: { trust_proxy: '127.0.0.1' },
      auth: { login_rate_per_minute: 1 },
      catalog: { search_rate_per_minute: 1 },
      limits: { catalog_ip_rpm: 1 },
    },
    { redis: false },
  );
});
afterAll(async () => gw?.close());

const routes = {
  login: (ip: string) =>
    gw.call('POST', '/api/user/login', {
      body: { username: 'root', password: 'wrong-pass' },
      headers: { 'x-forwarded-for': ip },
    }),
  search: (ip: string) => gw.call('GET', '/api/app/search?keyword=x', { headers: { 'x-forwarded-for': ip } }),
  catalog: (ip: string) => gw.call('GET', '/api/app', { headers: { 'x-forwarded-for': ip } }),
};

describe.each(Object.entries(routes))('per-address limit of %s', (name, hit) => {
  // Each route's own addresses, so one route's allowance is not spent by another's test.
  const n = Object.keys(routes).indexOf(name) + 1;

  it('counts IPv6 clients by their /64, however the address is written', async () => {
    const first = await hit(`2001:db8:${n}:1::1`);
    expect(first.status).not.toBe(429);
    for (const sameNet of [
      `2001:db8:${n}:1::2`,
      `2001:db8:${n}:1:ffff:ffff:ffff:fffe`,
      `2001:0DB8:000${n}:0001:a::`,
    ]) {
      const r = await hit(sameNet);
      expect(r.status, sameNet).toBe(429);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    expect((await hit(`2001:db8:${n}:2::1`)).status).not.toBe(429);
  });

  it('counts IPv4 clients, IPv4-mapped IPv6 included, by the full address', async () => {
    expect((await hit(`203.0.113.${n}`)).status).not.toBe(429);
    expect((await hit(`::ffff:203.0.113.${n}`)).status).toBe(429);
    expect((await hit(`203.0.113.${n + 10}`)).status).not.toBe(429);
  });
});
