import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { APP_FIELDS, createApp, userWithRole } from './catalog-helpers.js';

let gw: TestGateway;
let root: string;
let admin: { id: number; cookie: string; token: string };
let plain: { id: number; cookie: string; token: string };

beforeAll(async () => {
  gw = await startTestGateway();
  root = await gw.login();
  admin = await userWithRole(gw, root, 'catalog-admin', 10);
  plain = await userWithRole(gw, root, 'catalog-user', 1);
});
afterAll(async () => gw?.close());

describe('create, read, update, delete', () => {
  it('creates with defaults and server-owned fields, returning every field of the App record', async () => {
    const before = Math.floor(Date.now() / 1000);
    const r = await gw.call('POST', '/api/app', {
      token: admin.token,
      body: {
        name: '  Widget  ',
        tags: ' ai , chat,AI,, tools ',
        author_url: 'https://example.com/me',
        download_count: 999,
        created_time: 1,
        updated_time: 2,
        created_by: 77,
        updated_by: 78,
      },
    });
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    const app = r.body.data;
    expect(Object.keys(app).sort()).toEqual(APP_FIELDS);
    expect(app).toMatchObject({
      name: 'Widget',
      category: 'general',
      status: 1,
      featured: false,
      download_count: 0,
      tags: 'ai,chat,tools',
      author_url: 'https://example.com/me',
      created_by: admin.id,
      updated_by: admin.id,
    });
    expect(app.created_time).toBeGreaterThanOrEqual(before);
    expect(app.updated_time).toBe(app.created_time);
    const got = await gw.call('GET', `/api/app/${app.id}`);
    expect(got.body).toEqual({ success: true, message: '', data: app });
  });

  it('updates only the fields present and records who updated', async () => {
    const app = await createApp(gw, root, {
      name: 'Partial',
      description: 'keep me',
      category: 'tools',
      featured: true,
    });
    const r = await gw.call('PUT', '/api/app', {
      cookie: admin.cookie,
      body: { id: app.id, short_description: 'new short', download_count: 5, created_by: 3 },
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      name: 'Partial',
      description: 'keep me',
      category: 'tools',
      featured: true,
      short_description: 'new short',
      download_count: 0,
      created_by: app.created_by,
      updated_by: admin.id,
    });
    expect((await gw.call('GET', `/api/app/${app.id}`)).body.data).toEqual(r.body.data);
  });

  it('PUT of a missing id is a 404 and without an id a 400', async () => {
    const missing = await gw.call('PUT', '/api/app', { cookie: root, body: { id: 999999, name: 'x' } });
    expect(missing.status).toBe(404);
    expect(missing.body.success).toBe(false);
    const noId = await gw.call('PUT', '/api/app', { cookie: root, body: { name: 'x' } });
    expect(noId.status).toBe(400);
    expect(noId.body.message).toContain('id');
  });

  it('deletes, then the id is gone; deleting again is a 404', async () => {
    const app = await createApp(gw, root, { name: 'Doomed' });
    const d = await gw.call('DELETE', `/api/app/${app.id}`, { cookie: admin.cookie });
    expect(d.status).toBe(200);
    expect(d.body.success).toBe(true);
    expect((await gw.call('GET', `/api/app/${app.id}`)).status).toBe(404);
    expect((await gw.call('DELETE', `/api/app/${app.id}`, { cookie: admin.cookie })).status).toBe(404);
  });
});

describe('roles', () => {
  it('writes without credentials are 401, by a plain user 403, by an admin token 200', async () => {
    const app = await createApp(gw, root, { name: 'Guarded' });
    for (const [method, path, body] of [
      ['POST', '/api/app', { name: 'x' }],
      ['PUT', '/api/app', { id: app.id, name: 'x' }],
      ['DELETE', `/api/app/${app.id}`, undefined],
    ] as const) {
      expect((await gw.call(method, path, { body })).status).toBe(401);
      expect((await gw.call(method, path, { body, cookie: plain.cookie })).status).toBe(403);
      expect((await gw.call(method, path, { body, token: plain.token })).status).toBe(403);
    }
    expect((await gw.call('GET', `/api/app/${app.id}`)).body.data.name).toBe('Guarded');
  });
});

describe('validation', () => {
  const bad: Array<[string, Record<string, unknown>, string]> = [
    ['missing name', { category: 'tools' }, 'name'],
    ['empty name', { name: '   ' }, 'name'],
    ['long name', { name: 'n'.repeat(129) }, 'name'],
    ['unknown category', { name: 'x', category: 'games' }, 'category'],
    ['unknown field', { name: 'x', colour: 'red' }, 'colour'],
    ['ftp URL', { name: 'x', download_url: 'ftp://example.com/a' }, 'download_url'],
    ['relative URL', { name: 'x', source_url: '/just/a/path' }, 'source_url'],
    ['javascript URL', { name: 'x', thumbnail_url: 'javascript:alert(1)' }, 'thumbnail_url'],
    [
      'credentials in URL',
      { name: 'x', documentation_url: 'https://user:pw@example.com/' },
      'documentation_url',
    ],
    // A parser drops an empty user-info part (`https://ex.com/x`): stored, the link read another way.
    ['URL with an empty user-info', { name: 'x', download_url: 'https://@ex.com/x' }, 'download_url'],
    ['URL with an empty user and password', { name: 'x', source_url: 'https://:@ex.com/x' }, 'source_url'],
    ['too long URL', { name: 'x', author_url: `https://example.com/${'a'.repeat(2040)}` }, 'author_url'],
    // Forms the URL parser would repair into another URL than the one stored.
    ['URL without //', { name: 'x', download_url: 'http:example.com' }, 'download_url'],
    ['URL with one /', { name: 'x', download_url: 'http:/example.com' }, 'download_url'],
    ['URL with three /', { name: 'x', download_url: 'https:///example.com' }, 'download_url'],
    ['URL with four /', { name: 'x', author_url: 'HTTP:////example.com/a' }, 'author_url'],
    ['URL with no host', { name: 'x', source_url: 'https://' }, 'source_url'],
    ['URL with backslashes', { name: 'x', download_url: 'https:\\\\x.com' }, 'download_url'],
    ['URL hiding a host', { name: 'x', download_url: 'http://x.com\\@evil.com' }, 'download_url'],
    ['URL with a zero-width space', { name: 'x', download_url: 'http://x.com/\u200b' }, 'download_url'],
    ['name of 129 emoji', { name: '😀'.repeat(129) }, 'name'],
    ['too many tags', { name: 'x', tags: Array.from({ length: 21 }, (_, i) => `t${i}`).join(',') }, 'tags'],
    ['status out of range', { name: 'x', status: 3 }, 'status'],
    ['featured not boolean', { name: 'x', featured: 'yes' }, 'featured'],
    ['name not a string', { name: 12 }, 'name'],
  ];
  for (const [what, body, field] of bad)
    it(`rejects ${what} with a 400 naming ${field}, writing nothing`, async () => {
      const before = (await gw.call('GET', '/api/app?page_size=1', { cookie: root })).body.total;
      const r = await gw.call('POST', '/api/app', { cookie: root, body });
      expect(r.status).toBe(400);
      expect(r.body.success).toBe(false);
      expect(r.body.message).toContain(field);
      expect((await gw.call('GET', '/api/app?page_size=1', { cookie: root })).body.total).toBe(before);
    });

  it('an empty name reads the same on create and update, as does a URL with credentials', async () => {
    const app = await createApp(gw, root, { name: 'Same words' });
    for (const name of ['', '   ']) {
      const post = await gw.call('POST', '/api/app', { cookie: root, body: { name } });
      const put = await gw.call('PUT', '/api/app', { cookie: root, body: { id: app.id, name } });
      expect([post.status, post.body.message, put.status, put.body.message]).toEqual([
        400,
        'name: must not be empty',
        400,
        'name: must not be empty',
      ]);
    }
    for (const url of [
      'https://user:pw@ex.com/',
      'https://@ex.com/x',
      'https://:@ex.com/x',
      'http://a@ex.com',
    ]) {
      const r = await gw.call('PUT', '/api/app', { cookie: root, body: { id: app.id, author_url: url } });
      expect([url, r.status, r.body.message]).toEqual([url, 400, 'author_url: must not contain credentials']);
    }
    // An @ after the host is part of the path, not user-info.
    const at = await gw.call('PUT', '/api/app', {
      cookie: root,
      body: { id: app.id, author_url: 'https://ex.com/@me', source_url: 'https://ex.com/x?by=a@b' },
    });
    expect([at.status, at.body.data?.author_url]).toEqual([200, 'https://ex.com/@me']);
  });

  it('a failed update changes nothing', async () => {
    const app = await createApp(gw, root, { name: 'Stable', version: '1.0' });
    const r = await gw.call('PUT', '/api/app', {
      cookie: root,
      body: { id: app.id, version: '2.0', download_url: 'file:///etc/passwd' },
    });
    expect(r.status).toBe(400);
    expect((await gw.call('GET', `/api/app/${app.id}`)).body.data.version).toBe('1.0');
  });

  it('PUT rejects an unknown field or a name empty after trimming with a 400 naming it, changing nothing', async () => {
    const app = await createApp(gw, root, { name: 'Steady', version: '1.0' });
    const bodies: Array<[Record<string, unknown>, string]> = [
      [{ id: app.id, version: '2.0', colour: 'red' }, 'colour'],
      [{ id: app.id, version: '2.0', name: '   ' }, 'name'],
      [{ id: app.id, version: '2.0', name: ' \t\n ' }, 'name'],
      [{ id: app.id, version: '2.0', name: '' }, 'name'],
    ];
    for (const [body, field] of bodies) {
      const r = await gw.call('PUT', '/api/app', { cookie: root, body });
      // The same words as on create.
      if (field === 'name') expect(r.body.message).toBe('name: must not be empty');
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.success).toBe(false);
      expect(r.body.message).toContain(field);
    }
    expect((await gw.call('GET', `/api/app/${app.id}`)).body.data).toEqual(app);
  });

  it('counts characters, not UTF-16 units', async () => {
    const app = await createApp(gw, root, { name: '😀'.repeat(128), author: '𝔸'.repeat(100) });
    expect(app.name).toBe('😀'.repeat(128));
    const r = await gw.call('GET', `/api/app/search?keyword=${encodeURIComponent('😀'.repeat(60))}`);
    expect(r.status).toBe(200);
  });

  it('accepts exactly 20 tags and a 2048-character URL', async () => {
    const url = `https://example.com/${'a'.repeat(2048 - 'https://example.com/'.length)}`;
    const tags = Array.from({ length: 20 }, (_, i) => `t${i}`);
    const app = await createApp(gw, root, { name: 'Edge', tags: [...tags, 'T1', ' t2 '], download_url: url });
    expect(app.tags).toBe(tags.join(','));
    expect(app.download_url).toBe(url);
  });

  it('takes tags the search treats as equal for one tag, keeping the first spelling', async () => {
    // The fold of search (src/store/search-fold.ts): sharp s, final sigma, Latin and Greek
    // accents, compatibility forms. Cyrillic й and и are two letters there, so two tags here.
    const sent = [
      'Straße',
      'STRASSE',
      'ΟΔΟΣ',
      'οδός',
      'Café',
      'cafe\u0301',
      'CAFE',
      'ＡＢＣ',
      'abc',
      'й',
      'и',
      'Й',
    ];
    const app = await createApp(gw, root, { name: 'Folded tags', tags: sent });
    expect(app.tags).toBe('Straße,ΟΔΟΣ,Café,ＡＢＣ,й,и');
    const put = await gw.call('PUT', '/api/app', {
      cookie: root,
      body: { id: app.id, tags: 'strasse,Strasse,ẞ' },
    });
    expect(put.body.data.tags).toBe('strasse,ẞ');
  });

  it('non-integer and unknown ids', async () => {
    // Only plain decimals are ids: JavaScript's other spellings of 1 are not.
    const spellings = ['0x1', '1e0', '0b1', '0o1', '1.0', '+1', '%201', '1%20'];
    for (const p of [
      '/api/app/abc',
      '/api/app/1.5',
      '/api/app/0',
      '/api/app/-3',
      ...spellings.map((s) => `/api/app/${s}`),
    ]) {
      const r = await gw.call('GET', p);
      expect(r.status, p).toBe(400);
      expect(r.body.message).toContain('id');
    }
    expect((await gw.call('GET', '/api/app/987654')).status).toBe(404);
    expect((await gw.call('POST', '/api/app/download/abc')).status).toBe(400);
    expect((await gw.call('DELETE', '/api/app/abc', { cookie: root })).status).toBe(400);
    expect((await gw.call('DELETE', '/api/app/0x1', { cookie: root })).status).toBe(400);
    expect((await gw.call('POST', '/api/app/download/0x1')).status).toBe(400);
  });
});

describe('hidden records', () => {
  it('the public never sees status 2; admins see it everywhere and may filter by status', async () => {
    const hidden = await createApp(gw, root, {
      name: 'Secret Hiddenapp',
      status: 2,
      featured: true,
      category: 'entertainment',
    });
    const shown = await createApp(gw, root, {
      name: 'Open Hiddenapp',
      featured: true,
      category: 'entertainment',
    });
    const ids = (r: { body: { data: Array<{ id: number }> } }) => r.body.data.map((a) => a.id);
    const pub = [
      await gw.call('GET', '/api/app?page_size=100'),
      await gw.call('GET', '/api/app/featured?page_size=100'),
      await gw.call('GET', '/api/app/category/entertainment?page_size=100'),
      await gw.call('GET', '/api/app/search?keyword=hiddenapp'),
      await gw.call('GET', '/api/app?status=2'),
    ];
    for (const r of pub) {
      expect(r.status).toBe(200);
      expect(ids(r)).not.toContain(hidden.id);
    }
    expect(ids(pub[0]!)).toContain(shown.id);
    expect(pub[4]!.body).toMatchObject({ data: [], total: 0 });
    expect((await gw.call('GET', `/api/app/${hidden.id}`)).status).toBe(404);
    expect((await gw.call('GET', `/api/app/${hidden.id}`, { cookie: plain.cookie })).status).toBe(404);
    expect((await gw.call('POST', `/api/app/download/${hidden.id}`)).status).toBe(404);
    // A bad token on a public route is just a public view.
    expect((await gw.call('GET', '/api/app', { token: 'not-a-token' })).status).toBe(200);

    expect((await gw.call('GET', `/api/app/${hidden.id}`, { token: admin.token })).body.data.status).toBe(2);
    const adminViews = [
      await gw.call('GET', '/api/app?page_size=100', { cookie: admin.cookie }),
      await gw.call('GET', '/api/app/featured?page_size=100', { cookie: admin.cookie }),
      await gw.call('GET', '/api/app/category/entertainment', { token: admin.token }),
      await gw.call('GET', '/api/app/search?keyword=hiddenapp', { cookie: root }),
    ];
    for (const r of adminViews) expect(ids(r)).toContain(hidden.id);
    const onlyHidden = await gw.call('GET', '/api/app?status=2&page_size=100', { cookie: admin.cookie });
    expect(onlyHidden.body.data.every((a: { status: number }) => a.status === 2)).toBe(true);
    expect(ids(onlyHidden)).toContain(hidden.id);
  });
});
