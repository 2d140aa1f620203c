import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAddressPolicy } from '../../src/gateway/images/address-policy.js';
import { createSafeFetcher, ImageFetchError, type Resolver } from '../../src/gateway/images/safe-fetch.js';
import { makePng } from './test-images.js';

let server: Server;
let port: number;
let hits: string[] = [];
const png = makePng(3, 2);

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(req.url ?? '');
    if (req.url === '/img.png') return void res.writeHead(200, { 'content-type': 'image/png' }).end(png);
    if (req.url?.startsWith('/redirect/')) {
      const n = Number(req.url.split('/')[2]);
      return void res.writeHead(302, { location: n > 0 ? `/redirect/${n - 1}` : '/img.png' }).end();
    }
    if (req.url === '/to-metadata')
      return void res.writeHead(301, { location: 'http://169.254.169.254/latest/meta-data' }).end();
    if (req.url === '/to-named')
      return void res.writeHead(302, { location: `http://public.example:${port}/img.png` }).end();
    if (req.url === '/big') {
      // No content-length: the cap must hold while streaming.
      res.writeHead(200, { 'content-type': 'image/png' });
      res.write(Buffer.alloc(64 * 1024));
      res.write(Buffer.alloc(64 * 1024));
      return void res.end(Buffer.alloc(64 * 1024));
    }
    // Locations no URL parser accepts: the image host's mistake, a 400, never a crash.
    if (req.url === '/bad-location/1') return void res.writeHead(302, { location: 'http://[::1' }).end();
    if (req.url === '/bad-location/2') return void res.writeHead(302, { location: 'https://' }).end();
    if (req.url === '/hang') return; // never answers
    res.writeHead(404).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});
beforeEach(() => {
  hits = [];
});

// Maps names the way a hostile DNS would: a public-looking name pointing at loopback.
const resolver: Resolver = async (host) => {
  if (host === 'public.example') return [{ address: '127.0.0.1', family: 4 }];
  if (host === 'dual.example')
    return [
      { address: '93.184.215.14', family: 4 },
      { address: '::1', family: 6 },
    ];
  throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};

async function refusal(p: Promise<unknown>): Promise<ImageFetchError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ImageFetchError);
  return err as ImageFetchError;
}

describe('createSafeFetcher', () => {
  it('refuses a loopback literal without connecting', async () => {
    const f = createSafeFetcher({ resolve: resolver });
    const err = await refusal(f.fetch(`http://127.0.0.1:${port}/img.png`));
    expect(err.refused).toBe(true);
    expect(err.message).toMatch(/loopback/);
    await f.close();
    expect(hits).toEqual([]);
  });

  it('refuses a public-looking name that resolves to loopback, before connecting', async () => {
    const f = createSafeFetcher({ resolve: resolver });
    const err = await refusal(f.fetch(`http://public.example:${port}/img.png`));
    expect(err.refused).toBe(true);
    // What the name resolves to is the gateway's network's business, not the client's.
    expect(err.message).toBe('refused to fetch image URL: public.example resolves to a non-public address');
    const dual = await refusal(f.fetch(`http://dual.example:${port}/img.png`));
    expect(dual.message).toBe('refused to fetch image URL: dual.example resolves to a non-public address');
    await f.close();
    expect(hits).toEqual([]);
  });

  it('refuses metadata, private, CGNAT, IPv6 and mapped addresses, and non-http schemes', async () => {
    const f = createSafeFetcher({ resolve: resolver });
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/',
      'http://172.16.5.4/',
      'http://192.168.1.1/',
      'http://100.64.0.1/',
      'http://0.0.0.0/',
      'http://224.0.0.1/',
      'http://[::1]/',
      'http://[fe80::1]/',
      'http://[fd00::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://[::7f00:1]/',
      'http://[::a9fe:a9fe]/',
      'file:///etc/passwd',
      'ftp://example.com/x.png',
    ]) {
      expect((await refusal(f.fetch(url))).refused, url).toBe(true);
    }
    await f.close();
  });

  it('fetches from an allow-listed address, following redirects up to the limit', async () => {
    const f = createSafeFetcher({ resolve: resolver, allowList: ['127.0.0.1'] });
    const got = await f.fetch(`http://127.0.0.1:${port}/img.png`);
    expect(got.bytes.equals(png)).toBe(true);
    expect(got.contentType).toBe('image/png');
    const redirected = await f.fetch(`http://127.0.0.1:${port}/redirect/2`);
    expect(redirected.bytes.equals(png)).toBe(true);
    expect(redirected.url).toBe(`http://127.0.0.1:${port}/img.png`);
    hits = [];
    expect((await refusal(f.fetch(`http://127.0.0.1:${port}/redirect/3`))).message).toMatch(/more than 3/);
    expect(hits).toHaveLength(4);
    await f.close();
  });

  it('allow-lists by CIDR and by host name', async () => {
    const byCidr = createSafeFetcher({ resolve: resolver, allowList: ['127.0.0.0/8'] });
    expect((await byCidr.fetch(`http://public.example:${port}/img.png`)).bytes.equals(png)).toBe(true);
    await byCidr.close();
    const byName = createSafeFetcher({ resolve: resolver, allowList: ['public.example'] });
    expect((await byName.fetch(`http://public.example:${port}/img.png`)).bytes.equals(png)).toBe(true);
    await refusal(byName.fetch(`http://127.0.0.1:${port}/img.png`));
    await byName.close();
  });

  it('answers a redirect to an invalid URL as a fetch error', async () => {
    const f = createSafeFetcher({ resolve: resolver, allowList: ['127.0.0.1'] });
    for (const n of [1, 2]) {
      const err = await refusal(f.fetch(`http://127.0.0.1:${port}/bad-location/${n}`));
      expect(err.message).toMatch(/redirected to an invalid URL/);
    }
    await f.close();
  });

  it('re-checks every redirect hop', async () => {
    const f = createSafeFetcher({ resolve: resolver, allowList: ['127.0.0.1'] });
    expect((await refusal(f.fetch(`http://127.0.0.1:${port}/to-metadata`))).message).toMatch(/link-local/);
    // The first hop is allowed by name; the redirect to a literal metadata address is not.
    const nameOnly = createSafeFetcher({ resolve: resolver, allowList: ['public.example'] });
    hits = [];
    await refusal(nameOnly.fetch(`http://public.example:${port}/to-metadata`));
    expect(hits).toEqual(['/to-metadata']);
    await f.close();
    await nameOnly.close();
  });

  it('caps bytes while streaming and times out', async () => {
    const opts = { resolve: resolver, allowList: ['127.0.0.1'], maxBytes: 100_000 };
    // The deadline covers the whole fetch: a short one only where timing out is the point.
    const f = createSafeFetcher({ ...opts, timeoutMs: 10_000 });
    const short = createSafeFetcher({ ...opts, timeoutMs: 300 });
    expect((await refusal(f.fetch(`http://127.0.0.1:${port}/big`))).message).toMatch(
      /larger than 100000 bytes/,
    );
    expect((await refusal(short.fetch(`http://127.0.0.1:${port}/hang`))).message).toMatch(/timed out/);
    expect((await refusal(f.fetch(`http://127.0.0.1:${port}/missing`))).message).toMatch(/HTTP 404/);
    expect((await refusal(f.fetch('http://nowhere.invalid/'))).message).toMatch(/could not (resolve|fetch)/);
    await f.close();
    await short.close();
  });
});

describe('createAddressPolicy', () => {
  it('allows public unicast and refuses everything internal', () => {
    const p = createAddressPolicy();
    expect(p.check('93.184.215.14')).toBeNull();
    expect(p.check('2606:4700::1111')).toBeNull();
    expect(p.check('169.254.169.254')).toMatch(/link-local/);
    expect(p.check('::ffff:10.1.2.3')).toMatch(/private/);
    expect(p.check('fc00::1')).toMatch(/private/);
    expect(p.check('100.127.255.255')).toMatch(/carrier-grade/);
    expect(p.check('::')).toMatch(/unspecified/);
    // The deprecated IPv4-compatible form (::/96) and the rest of the reserved ::/8.
    expect(p.check('::7f00:1')).toMatch(/reserved/);
    expect(p.check('::a9fe:a9fe')).toMatch(/reserved/);
    expect(p.check('ff::1')).toMatch(/reserved/);
    expect(() => createAddressPolicy(['not a host!'])).toThrow(/invalid/);
  });
});
