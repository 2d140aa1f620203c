import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { createApp } from './catalog-helpers.js';

let gw: TestGateway;
let root: string;
const names = ['delta', 'Alpha', 'charlie', 'bravo', 'echo'];
const created: Array<{ id: number; name: string }> = [];

beforeAll(async () => {
  gw = await startTestGateway();
  root = await gw.login();
  for (const [i, name] of names.entries())
    created.push(
      await createApp(gw, root, {
        name,
        category: i % 2 === 0 ? 'development' : 'productivity',
        featured: i < 2,
        download_url: 'https://example.com/get',
      }),
    );
  // Distinct download counts: app i gets i downloads.
  for (const [i, app] of created.entries())
    for (let n = 0; n < i; n++) await gw.call('POST', `/api/app/download/${app.id}`);
});
afterAll(async () => gw?.close());

const namesOf = (r: { body: { data: Array<{ name: string }> } }) => r.body.data.map((a) => a.name);

describe('list', () => {
  it('defaults to created_time desc with id breaking ties (newest first), with total', async () => {
    const r = await gw.call('GET', '/api/app');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, message: '', total: 5 });
    expect(namesOf(r)).toEqual([...names].reverse());
  });

  it('orders by each field and direction, with + or space as separator', async () => {
    expect(namesOf(await gw.call('GET', '/api/app?order=name'))).toEqual([
      'Alpha',
      'bravo',
      'charlie',
      'delta',
      'echo',
    ]);
    expect(namesOf(await gw.call('GET', '/api/app?order=name%20desc'))).toEqual([
      'echo',
      'delta',
      'charlie',
      'bravo',
      'Alpha',
    ]);
    expect(namesOf(await gw.call('GET', '/api/app?order=download_count+desc'))).toEqual([...names].reverse());
    expect(namesOf(await gw.call('GET', '/api/app?order=download_count%2Basc'))).toEqual(names);
    expect(namesOf(await gw.call('GET', '/api/app?order=id+asc'))).toEqual(names);
    expect(namesOf(await gw.call('GET', '/api/app?order=created_time+asc'))).toEqual(names);
    expect(namesOf(await gw.call('GET', '/api/app?order=updated_time+desc'))).toEqual([...names].reverse());
  });

  it('rejects bad order expressions naming order', async () => {
    for (const o of ['bogus', 'name+up', 'name asc extra', 'password desc', 'name;drop']) {
      const r = await gw.call('GET', `/api/app?order=${encodeURIComponent(o)}`);
      expect(r.status, o).toBe(400);
      expect(r.body.message).toContain('order');
    }
  });

  it('pages with p and page_size; total counts all matches', async () => {
    const p0 = await gw.call('GET', '/api/app?order=id&page_size=2&p=0');
    const p1 = await gw.call('GET', '/api/app?order=id&page_size=2&p=1');
    const p2 = await gw.call('GET', '/api/app?order=id&page_size=2&p=2');
    expect([namesOf(p0), namesOf(p1), namesOf(p2)]).toEqual([
      ['delta', 'Alpha'],
      ['charlie', 'bravo'],
      ['echo'],
    ]);
    for (const r of [p0, p1, p2]) expect(r.body.total).toBe(5);
    expect((await gw.call('GET', '/api/app?p=9')).body).toMatchObject({ data: [], total: 5 });
  });

  it('rejects bad paging values', async () => {
    for (const q of [
      'p=-1',
      'p=1.5',
      'p=x',
      'p=0x1',
      'p=1e2',
      'p=%20',
      'p=',
      'page_size=0',
      'page_size=101',
      'page_size=abc',
      'page_size=1e1',
    ]) {
      const r = await gw.call('GET', `/api/app?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.message).toContain(q.split('=')[0]);
    }
    expect((await gw.call('GET', '/api/app?page_size=100')).status).toBe(200);
  });

  it('filters by category and featured', async () => {
    const dev = await gw.call('GET', '/api/app?category=development&order=id');
    expect(namesOf(dev)).toEqual(['delta', 'charlie', 'echo']);
    expect(dev.body.total).toBe(3);
    const feat = await gw.call('GET', '/api/app?featured=true&order=id');
    expect(namesOf(feat)).toEqual(['delta', 'Alpha']);
    expect((await gw.call('GET', '/api/app?featured=false')).body.total).toBe(3);
    expect((await gw.call('GET', '/api/app?category=games')).status).toBe(400);
  });
});

describe('featured and category routes', () => {
  it('featured lists featured apps, paged, with total', async () => {
    const r = await gw.call('GET', '/api/app/featured?order=name&page_size=1');
    expect(r.body).toMatchObject({ success: true, total: 2 });
    expect(namesOf(r)).toEqual(['Alpha']);
    expect(r.body.data[0].featured).toBe(true);
  });

  it('category lists one category, paged, with total; unknown category is a 400', async () => {
    const r = await gw.call('GET', '/api/app/category/productivity?order=name+desc');
    expect(r.body).toMatchObject({ success: true, total: 2 });
    expect(namesOf(r)).toEqual(['bravo', 'Alpha']);
    const empty = await gw.call('GET', '/api/app/category/general');
    expect(empty.body).toMatchObject({ data: [], total: 0 });
    const bad = await gw.call('GET', '/api/app/category/games');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('category');
    expect((await gw.call('GET', '/api/app/category/tools?page_size=500')).status).toBe(400);
  });

  it('a category route without a category is the 400 of an unknown category, not the /:id route naming id', async () => {
    const unknown = await gw.call('GET', '/api/app/category/games');
    for (const path of ['/api/app/category/', '/api/app/category', '/api/app/category?p=0']) {
      const r = await gw.call('GET', path);
      expect(r.status, path).toBe(400);
      expect(r.body, path).toEqual({ success: false, message: unknown.body.message });
      expect(r.body.message, path).toMatch(/^category: must be one of "development", /);
    }
  });

  it('featured and category reject bad paging and order values naming the parameter', async () => {
    const bad = [
      'p=-1',
      'p=x',
      'p=1.5',
      'p=0x1',
      'p=',
      'page_size=0',
      'order=bogus',
      'order=name+up',
      'order=password+desc',
      `order=${encodeURIComponent('name asc extra')}`,
    ];
    for (const path of ['/api/app/featured', '/api/app/category/development']) {
      for (const q of bad) {
        const r = await gw.call('GET', `${path}?${q}`);
        expect(r.status, `${path}?${q}`).toBe(400);
        expect(r.body.success).toBe(false);
        expect(r.body.message).toContain(q.split('=')[0]);
      }
      expect((await gw.call('GET', `${path}?p=1&page_size=1&order=name+desc`)).status).toBe(200);
    }
  });
});
