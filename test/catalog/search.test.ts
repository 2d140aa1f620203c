import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_REDIS_URL } from '../helpers/databases.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { createApp } from './catalog-helpers.js';

let gw: TestGateway;
let root: string;

beforeAll(async () => {
  gw = await startTestGateway({ catalog: { search_rate_per_minute: 1000 } });
  root = await gw.login();
  const apps = [
    { name: 'Vector Studio Pro', description: 'mentions vector once' },
    { name: 'Notes', author: 'Vector Labs' },
    { name: 'Vector', short_description: 'the exact one' },
    { name: 'Gallery', tags: 'images,vector' },
    { name: 'My Vector Tool', description: 'name contains it' },
    { name: 'Vector Studio', description: 'prefix match' },
    { name: 'Unrelated', description: 'nothing to see' },
    { name: 'Percent', description: 'saves 50% on costs', tags: 'money' },
    { name: 'Underscore', description: 'snake_case helper' },
    { name: 'Ünïcode Räder', description: 'Straße' },
    // Each pair: the one that must rank first is created second, so ids alone would put it last.
    { name: 'Mentions', description: 'about ärger here' },
    { name: 'Ärger' },
    { name: 'x 𝔸lp' },
    { name: '𝔸lpha' },
    { name: 'Zeta Studio Plus' },
    { name: 'Zeta  Studio' },
  ];
  for (const a of apps) await createApp(gw, root, a);
});
afterAll(async () => gw?.close());

const namesOf = (r: { body: { data: Array<{ name: string }> } }) => r.body.data.map((a) => a.name);
const search = (q: string) => gw.call('GET', `/api/app/search?${q}`);

describe('search', () => {
  it('ranks exact name, then name prefix, then name, then tags, then other text', async () => {
    const r = await search('keyword=vector');
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(6);
    // Within a rank: most downloaded first, then oldest id.
    expect(namesOf(r)).toEqual([
      'Vector',
      'Vector Studio Pro',
      'Vector Studio',
      'My Vector Tool',
      'Gallery',
      'Notes',
    ]);
  });

  it('is case-insensitive and requires every word to match somewhere', async () => {
    expect(namesOf(await search('keyword=VECTOR%20studio'))).toEqual(['Vector Studio', 'Vector Studio Pro']);
    expect(namesOf(await search('keyword=studio+pro'))).toEqual(['Vector Studio Pro']);
    // Words may match in different fields: "labs" in author, "notes" in name.
    expect(namesOf(await search('keyword=labs%20NOTES'))).toEqual(['Notes']);
    expect(namesOf(await search('keyword=vector%20nothing'))).toEqual([]);
    expect((await search('keyword=zzzz-none')).body).toMatchObject({ success: true, data: [], total: 0 });
  });

  it('matches inside words, short words and LIKE metacharacters literally', async () => {
    expect(namesOf(await search('keyword=ecto+galler'))).toEqual(['Gallery']);
    expect(namesOf(await search('keyword=50%25'))).toEqual(['Percent']);
    expect(namesOf(await search('keyword=e_c'))).toEqual(['Underscore']);
    expect(namesOf(await search('keyword=%25'))).toEqual(['Percent']);
    expect(namesOf(await search('keyword=r%C3%A4der'))).toEqual(['Ünïcode Räder']);
  });

  it('folds case and ranks beyond ASCII, on every backend', async () => {
    expect(namesOf(await search(`keyword=${encodeURIComponent('ÄR')}`))).toEqual(['Ärger', 'Mentions']);
    expect(namesOf(await search(`keyword=${encodeURIComponent('ÜNÏC')}`))).toEqual(['Ünïcode Räder']);
    expect(namesOf(await search(`keyword=${encodeURIComponent('ärger')}`))).toEqual(['Ärger', 'Mentions']);
    // A name prefix of characters outside the BMP (two UTF-16 units each).
    expect(namesOf(await search(`keyword=${encodeURIComponent('𝔸lp')}`))).toEqual(['𝔸lpha', 'x 𝔸lp']);
    // Names are stored with inner whitespace collapsed, so the exact name ranks first.
    expect(namesOf(await search('keyword=zeta+studio'))).toEqual(['Zeta Studio', 'Zeta Studio Plus']);
  });

  it('treats query syntax characters as plain text', async () => {
    for (const k of [
      '"vector',
      'vector"',
      'vec*',
      'NEAR(vector)',
      'vector OR notes',
      '^vector',
      "o'brien",
      '\\',
    ]) {
      const r = await search(`keyword=${encodeURIComponent(k)}`);
      expect(r.status, k).toBe(200);
    }
    // "OR" is a word like any other (it occurs in "Vector"), not an operator.
    expect(namesOf(await search('keyword=vector%20OR%20notes'))).toEqual(['Notes']);
  });

  it('pages results with total', async () => {
    const p0 = await search('keyword=vector&page_size=4');
    const p1 = await search('keyword=vector&page_size=4&p=1');
    expect(p0.body.total).toBe(6);
    expect(p1.body.total).toBe(6);
    expect(namesOf(p1)).toEqual(['Gallery', 'Notes']);
    expect(namesOf(p0)).toHaveLength(4);
    expect((await search('keyword=vector&page_size=101')).status).toBe(400);
  });

  it('rejects a missing, empty or too long keyword naming keyword', async () => {
    for (const q of ['', 'keyword=', 'keyword=%20%20', `keyword=${'a'.repeat(101)}`]) {
      const r = await search(q);
      expect(r.status, q).toBe(400);
      expect(r.body.message).toContain('keyword');
    }
    expect((await search(`keyword=${'a'.repeat(100)}`)).status).toBe(200);
  });

  it('rejects bad paging values naming the parameter', async () => {
    for (const q of ['p=-1', 'p=x', 'p=1.5', 'p=0x1', 'p=', 'page_size=0']) {
      const r = await search(`keyword=vector&${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.success).toBe(false);
      expect(r.body.message).toContain(q.split('=')[0]);
    }
  });

  it('narrows keyword matches to one category with the category filter', async () => {
    for (const [name, category] of [
      ['Quokka Builder', 'development'],
      ['Quokka Planner', 'productivity'],
      ['Quokka Kit', 'development'],
      ['Quokka Jukebox', 'entertainment'],
    ])
      await createApp(gw, root, { name, category });
    expect((await search('keyword=quokka')).body.total).toBe(4);
    const dev = await search('keyword=quokka&category=development');
    expect(dev.status).toBe(200);
    expect(dev.body).toMatchObject({ success: true, total: 2 });
    expect(namesOf(dev)).toEqual(['Quokka Builder', 'Quokka Kit']);
    expect(dev.body.data.every((a: { category: string }) => a.category === 'development')).toBe(true);
    expect(namesOf(await search('keyword=quokka+kit&category=development'))).toEqual(['Quokka Kit']);
    // A match in another category is left out, not ranked lower.
    expect((await search('keyword=quokka+kit&category=productivity')).body).toMatchObject({
      data: [],
      total: 0,
    });
    expect((await search('keyword=quokka&category=tools')).body).toMatchObject({ data: [], total: 0 });
    // The earlier apps all took the default category.
    expect((await search('keyword=vector&category=general')).body.total).toBe(6);
    const bad = await search('keyword=quokka&category=games');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('category');
  });
});

describe('search rate limit', () => {
  it('allows the configured number per minute per client, then 429 with Retry-After', async () => {
    const limited = await startTestGateway({
      catalog: { search_rate_per_minute: 3 },
      redis: { key_prefix: `t${Date.now()}${Math.random()}:` },
    });
    try {
      for (let i = 0; i < 3; i++) {
        const r = await limited.call('GET', '/api/app/search?keyword=x');
        expect(r.status).toBe(200);
        expect(r.headers.get('x-ratelimit-limit')).toBe('3');
        expect(r.headers.get('x-ratelimit-remaining')).toBe(String(2 - i));
      }
      const r = await limited.call('GET', '/api/app/search?keyword=x');
      expect(r.status).toBe(429);
      expect(r.body).toEqual({
        success: false,
        message: expect.stringMatching(/limit/),
        metadata: { scope: 'search_ip', limit: 3 },
      });
      const retry = Number(r.headers.get('retry-after'));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
      expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
      // Other routes are not limited.
      expect((await limited.call('GET', '/api/app')).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it('limits the other catalog routes per address (limits.catalog_ip_rpm), unless signed in', async () => {
    const g = await startTestGateway({
      limits: { catalog_ip_rpm: 2 },
      redis: { key_prefix: `t${Date.now()}${Math.random()}:` },
    });
    try {
      const rootCookie = await g.login();
      const token = (await g.call('POST', '/api/user/tokens', { cookie: rootCookie, body: { name: 'ip' } }))
        .body.data.token as string;
      const anon = async (o: { cookie?: string; token?: string } = {}) =>
        (await g.call('GET', '/api/app', o)).status;
      expect([await anon(), await anon()]).toEqual([200, 200]);
      const refused = await g.call('GET', '/api/app/featured');
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({
        success: false,
        message: expect.stringContaining('2 requests a minute per client address'),
        metadata: { scope: 'ip_rpm', limit: 2 },
      });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // A cookie or a token that signs no one in does not lift the limit.
      expect(await anon({ cookie: 'mg_session=made-up' })).toBe(429);
      expect(await anon({ cookie: 'theme=dark' })).toBe(429);
      expect(await anon({ token: 'not-a-token' })).toBe(429);
      // A signed-in caller is not anonymous traffic, by session or by access token.
      for (let i = 0; i < 4; i++) {
        expect(await anon({ cookie: rootCookie })).toBe(200);
        expect(await anon({ token })).toBe(200);
      }
      // Search keeps its own limit, not this one.
      expect((await g.call('GET', '/api/app/search?keyword=x')).status).toBe(200);
    } finally {
      await g.close();
    }
  });

  it.runIf(TEST_REDIS_URL !== '')('is shared across instances through Redis', async () => {
    const prefix = `t${Date.now()}${Math.random()}:`;
    const overrides = { catalog: { search_rate_per_minute: 4 }, redis: { key_prefix: prefix } };
    const a = await startTestGateway(overrides);
    const b = await startTestGateway(overrides, { databaseUrl: a.databaseUrl });
    try {
      const statuses: number[] = [];
      for (const g of [a, b, a, b, a, b])
        statuses.push((await g.call('GET', '/api/app/search?keyword=x')).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    } finally {
      await b.close();
      await a.close();
    }
  });

  it('keeps answering when Redis is unreachable, limiting per process', async () => {
    const g = await startTestGateway({
      catalog: { search_rate_per_minute: 2 },
      redis: { url: 'redis://127.0.0.1:1/0' },
    });
    try {
      const s = [];
      for (let i = 0; i < 3; i++) s.push((await g.call('GET', '/api/app/search?keyword=x')).status);
      expect(s).toEqual([200, 200, 429]);
    } finally {
      await g.close();
    }
  });
});
