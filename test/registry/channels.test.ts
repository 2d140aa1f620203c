import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let root: string;

beforeAll(async () => {
  gw = await startTestGateway({ gateway: { discover_models: false } });
  root = await gw.login();
});
afterAll(async () => gw?.close());

const KEY = 'sk-abcdefghijklmnopqrstuvwxyz';

async function create(body: Record<string, unknown>) {
  return gw.call('POST', '/api/channel', { cookie: root, body });
}

describe('/api/channel', () => {
  it('creates a channel with defaults per kind and answers keys masked', async () => {
    const r = await create({
      name: 'anthropic-main',
      kind: 'anthropic',
      keys: [KEY],
      models: ['anthropic/claude-sonnet-4'],
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      name: 'anthropic-main',
      kind: 'anthropic',
      base_url: 'https://api.anthropic.com',
      keys: ['sk-a…wxyz'],
      priority: 0,
      weight: 1,
      status: 1,
      source: 'api',
    });
    expect(JSON.stringify(r.body)).not.toContain(KEY);
    const one = await gw.call('GET', `/api/channel/${r.body.data.id}`, { cookie: root });
    expect(one.body.data.keys).toEqual(['sk-a…wxyz']);
    const list = await gw.call('GET', '/api/channel?p=0&page_size=10', { cookie: root });
    expect(list.body.total).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(list.body)).not.toContain(KEY);
  });

  it('keeps stored keys when PUT omits them or sends them masked, and adds new ones', async () => {
    const { body } = await create({
      name: 'keys',
      kind: 'openai-compatible',
      keys: [KEY, 'sk-second-key-0123456789'],
      models: ['gpt-4o'],
    });
    const id = body.data.id;
    const target = () =>
      gw.services.registry.targetsFor('openai/gpt-4o', { endpoint: 'chat' }).find((t) => t.channelId === id)!;
    expect(target().keys).toEqual([KEY, 'sk-second-key-0123456789']);

    await gw.call('PUT', '/api/channel', { cookie: root, body: { id, priority: 5 } });
    expect(target().keys).toEqual([KEY, 'sk-second-key-0123456789']);
    expect(target().priority).toBe(5);

    const r = await gw.call('PUT', '/api/channel', {
      cookie: root,
      body: { id, keys: ['sk-a…wxyz', 'sk-third-key-abcdefgh'] },
    });
    expect(r.status).toBe(200);
    expect(r.body.data.keys).toEqual(['sk-a…wxyz', 'sk-t…efgh']);
    expect(target().keys).toEqual([KEY, 'sk-third-key-abcdefgh']);

    const bad = await gw.call('PUT', '/api/channel', { cookie: root, body: { id, keys: ['sk-z…zzzz'] } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/keys\[0\]/);
  });

  it('masks the values of settings.headers too, and keeps a stored value a PUT sends back masked', async () => {
    const SECRET = 'gw-token-0123456789abcdef';
    const { body } = await create({
      name: 'headers',
      kind: 'openai-compatible',
      base_url: 'https://llm.internal.example/v1',
      keys: [KEY],
      models: ['gpt-4o'],
      settings: { headers: { 'x-gateway-token': SECRET, 'x-team': 'search-platform' } },
    });
    const id = body.data.id;
    expect(body.data.settings.headers).toEqual({ 'x-gateway-token': 'gw-t…cdef', 'x-team': 'sear…form' });
    const one = await gw.call('GET', `/api/channel/${id}`, { cookie: root });
    expect(JSON.stringify(one.body)).not.toContain(SECRET);
    const sent = () =>
      gw.services.registry.targetsFor('openai/gpt-4o', { endpoint: 'chat' }).find((t) => t.channelId === id)!;
    // The console sends back what it was shown: the stored values stay.
    const echo = await gw.call('PUT', '/api/channel', {
      cookie: root,
      body: { id, settings: { ...one.body.data.settings, rpm: 100 } },
    });
    expect(echo.status).toBe(200);
    expect((sent().settings as any).headers).toEqual({
      'x-gateway-token': SECRET,
      'x-team': 'search-platform',
    });
    const wrong = await gw.call('PUT', '/api/channel', {
      cookie: root,
      body: { id, settings: { headers: { 'x-gateway-token': 'gw-x…zzzz' } } },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toContain('settings.headers.x-gateway-token');
  });

  it('moving an upstream to another host needs its keys and header values sent again in full', async () => {
    const SECRET = 'gw-token-0123456789abcdef';
    const { body } = await create({
      name: 'moving',
      kind: 'openai-compatible',
      base_url: 'https://llm.internal.example/v1',
      keys: [KEY],
      models: ['gpt-4o'],
      settings: { headers: { 'x-gateway-token': SECRET } },
    });
    const id = body.data.id;
    const put = (b: Record<string, unknown>) =>
      gw.call('PUT', '/api/channel', { cookie: root, body: { id, ...b } });
    // The same host, another path: nothing to send again.
    expect((await put({ base_url: 'https://llm.internal.example/openai/v1' })).status).toBe(200);
    const elsewhere = 'https://collector.example.net/v1';
    for (const b of [{}, { keys: body.data.keys }]) {
      const r = await put({ base_url: elsewhere, ...b });
      expect(r.status).toBe(400);
      expect(r.body.message).toContain('keys: the upstream moves to collector.example.net');
    }
    const noHeader = await put({ base_url: elsewhere, keys: [KEY] });
    expect(noHeader.status).toBe(400);
    expect(noHeader.body.message).toContain('settings.headers.x-gateway-token');
    const moved = await put({
      base_url: elsewhere,
      keys: ['sk-new-key-for-the-new-host'],
      settings: { headers: { 'x-gateway-token': 'another-token-for-there' } },
    });
    expect(moved.status).toBe(200);
    // Dropping the header on the move is fine too.
    expect((await put({ base_url: 'https://third.example.org/v1', keys: [KEY], settings: {} })).status).toBe(
      200,
    );
  });

  it('rejects bad input with a 400 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ name: 'x1', kind: 'nope' }, /kind/],
      [{ name: 'x2', kind: 'openai-compatible', base_url: 'ftp://host' }, /base_url/],
      [{ name: 'x3', kind: 'openai-compatible', base_url: 'not a url' }, /base_url/],
      [{ name: 'x4', kind: 'openai-compatible', base_url: 'https://u:secret@host/v1' }, /credentials/],
      [{ name: 'x5', kind: 'openai-compatible', base_url: 'https://token@host/v1' }, /credentials/],
      [{ name: 'x4', kind: 'openai-compatible', priority: 1.5 }, /priority/],
      [{ name: 'x5', kind: 'openai-compatible', weight: 0 }, /weight/],
      [{ name: 'x6', kind: 'openai-compatible', colour: 'red' }, /colour/],
      [{ name: 'x7', kind: 'openai-compatible', settings: { data_collection: 'maybe' } }, /data_collection/],
      [{ kind: 'openai-compatible' }, /name/],
      [{ name: 'x8', kind: 'openai-compatible', model_mapping: { ['m'.repeat(256)]: 'x' } }, /model_mapping/],
    ];
    for (const [body, field] of cases) {
      const r = await create(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.success).toBe(false);
      expect(r.body.message).toMatch(field);
    }
    expect((await create({ name: 'anthropic-main', kind: 'anthropic' })).status).toBe(409);
    // Deeper than any recursive walk should be asked to go (settings are stored as JSON text);
    // written by hand, as JSON.stringify cannot write it either.
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const r = await gw.call('POST', '/api/channel', {
      cookie: root,
      rawBody: `{"name":"x9","kind":"anthropic","settings":{"x":${deep}}}`,
    });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/^settings\.x(\.0)+: nested more than 128 levels/);
  });

  it('refuses control characters, line separators, bidi controls and invisible characters in names, which would split a log line or a listing or disguise a name', async () => {
    const before = (await gw.call('GET', '/api/channel?p=0&page_size=100', { cookie: root })).body.total;
    for (const name of [
      'a\r\nb',
      'a\nb',
      'a\tb',
      'a\u001B[31mb',
      'a\u007Fb',
      'a\u0085b',
      'a\u2028b',
      'a\u2029b',
    ]) {
      const r = await create({ name, kind: 'openai-compatible' });
      expect(r.status, JSON.stringify(name)).toBe(400);
      expect(r.body.message).toMatch(
        /^name: must not contain control characters or line breaks \(found U\+[0-9A-F]{4}\)$/,
      );
    }
    expect((await gw.call('GET', '/api/channel?p=0&page_size=100', { cookie: root })).body.total).toBe(
      before,
    );
    // Bidi controls and invisible characters, by the one-line rule of catalog names: a name
    // "abc\u202Etxt" would display reordered, one with a zero-width space copies another.
    for (const [name, found] of [
      ['abc\u202Etxt', 'U+202E'],
      ['a\u202Ab', 'U+202A'],
      ['a\u2066b\u2069', 'U+2066'],
      ['a\u200Fb', 'U+200F'],
      ['open\u200Bai', 'U+200B'],
      ['open\u200Dai', 'U+200D'],
      ['open\u2060ai', 'U+2060'],
      ['open\uFEFFai', 'U+FEFF'],
      ['open\u3164ai', 'U+3164'],
    ]) {
      const r = await create({ name, kind: 'openai-compatible' });
      expect(r.status, JSON.stringify(name)).toBe(400);
      expect(r.body.message).toBe(
        `name: must not contain control, invisible or bidi override characters (found ${found})`,
      );
    }
    expect((await gw.call('GET', '/api/channel?p=0&page_size=100', { cookie: root })).body.total).toBe(
      before,
    );
    const made = await create({ name: 'clean-name', kind: 'openai-compatible' });
    const id = made.body.data.id;
    const hidden = await gw.call('PUT', '/api/channel', {
      cookie: root,
      body: { id, name: 'clean\u202Ename' },
    });
    expect(hidden.status).toBe(400);
    const rename = await gw.call('PUT', '/api/channel', { cookie: root, body: { id, name: 'clean\nname' } });
    expect(rename.status).toBe(400);
    expect(rename.body.message).toMatch(/^name: /);
    expect((await gw.call('GET', `/api/channel/${id}`, { cookie: root })).body.data.name).toBe('clean-name');
    // A name stored before this check stays usable: a change of another field (a form sends the
    // name back) is no rename, and renaming it to a clean name is how it is fixed.
    for (const [old, priority] of [
      ['old\nname', 3],
      ['old\u202Ename', 4],
    ] as const) {
      await gw.services.database.db.updateTable('channels').set({ name: old }).where('id', '=', id).execute();
      const kept = await gw.call('PUT', '/api/channel', { cookie: root, body: { id, name: old, priority } });
      expect(kept.status, JSON.stringify(old)).toBe(200);
      expect(kept.body.data).toMatchObject({ name: old, priority });
    }
    const fixed = await gw.call('PUT', '/api/channel', { cookie: root, body: { id, name: 'old-name' } });
    expect(fixed.body.data.name).toBe('old-name');
    // Names in any script, and emoji with their joiners and selectors, stay welcome.
    const script = await create({
      name: '\u{1F680}\uFE0F \u05E2\u05E8\u05D5\u05E5 vLLM',
      kind: 'openai-compatible',
    });
    expect(script.status).toBe(200);
    expect((await gw.call('DELETE', `/api/channel/${script.body.data.id}`, { cookie: root })).status).toBe(
      200,
    );
    // It serves the kind's own models, which the next test counts the upstreams of.
    expect((await gw.call('DELETE', `/api/channel/${id}`, { cookie: root })).status).toBe(200);
  });

  it('takes settings.provider as a name, trimmed, and refuses anything else naming it', async () => {
    const r = await create({
      name: 'named-provider',
      kind: 'openai-compatible',
      base_url: 'http://127.0.0.1:9/v1',
      models: ['acme/provider-named'],
      settings: { provider: '  Acme Cloud/eu ' },
    });
    expect(r.status).toBe(200);
    expect(r.body.data.settings).toEqual({ provider: 'Acme Cloud/eu' });
    // What routing's provider.order/only/ignore compare (routing/plan.ts matchesAny).
    const [target] = gw.services.registry.targetsFor('acme/provider-named', { endpoint: 'chat' });
    expect(target?.settings.provider).toBe('Acme Cloud/eu');
    for (const provider of [7, '', '   ', null, true, ['Acme'], 'p'.repeat(129)]) {
      const bad = await create({ name: 'bad-provider', kind: 'openai-compatible', settings: { provider } });
      expect(bad.status, JSON.stringify(provider)).toBe(400);
      expect(bad.body.message).toMatch(/^settings\.provider: must be a provider name/);
    }
    const put = await gw.call('PUT', '/api/channel', {
      cookie: root,
      body: { id: r.body.data.id, settings: { provider: 42 } },
    });
    expect(put.status).toBe(400);
    expect(put.body.message).toMatch(/^settings\.provider:/);
  });

  it('is admin-only', async () => {
    await gw.call('POST', '/api/user', { cookie: root, body: { username: 'plain', password: 'password-1' } });
    const user = await gw.login('plain', 'password-1');
    expect((await gw.call('GET', '/api/channel', { cookie: user })).status).toBe(403);
    expect((await gw.call('GET', '/api/channel')).status).toBe(401);
    // model reads are open to any signed-in user
    expect((await gw.call('GET', '/api/model', { cookie: user })).status).toBe(200);
  });

  it('a channel disabled via PUT leaves targetsFor at once, and comes back when enabled', async () => {
    const { body } = await create({
      name: 'toggle',
      kind: 'openai-compatible',
      base_url: 'http://127.0.0.1:9/v1',
      models: ['toggle-model'],
    });
    const id = body.data.id;
    const targets = () => gw.services.registry.targetsFor('toggle-model', { endpoint: 'chat' });
    expect(targets().map((t) => t.channelId)).toEqual([id]);
    expect(targets()[0]).toMatchObject({
      upstreamModel: 'toggle-model',
      baseUrl: 'http://127.0.0.1:9/v1',
      keys: [],
    });
    await gw.call('PUT', '/api/channel', { cookie: root, body: { id, status: 2 } });
    expect(targets()).toEqual([]);
    await gw.call('PUT', '/api/channel', { cookie: root, body: { id, status: 1 } });
    expect(targets()).toHaveLength(1);
  });

  it('orders targets by priority and maps model names', async () => {
    const a = await create({
      name: 'prio-low',
      kind: 'openai-compatible',
      base_url: 'http://127.0.0.1:9/v1',
      models: ['openai/gpt-4.1'],
      priority: 1,
    });
    const b = await create({
      name: 'prio-high',
      kind: 'openai-compatible',
      base_url: 'http://127.0.0.1:10/v1',
      models: ['gpt-4.1'],
      model_mapping: { 'gpt-4.1': 'gpt-4.1-2025-04-14' },
      priority: 9,
    });
    const t = gw.services.registry.targetsFor('gpt-4.1', { endpoint: 'chat' });
    expect(t.map((x) => x.channelId)).toEqual([b.body.data.id, a.body.data.id]);
    expect(t[0]!.upstreamModel).toBe('gpt-4.1-2025-04-14');
    // an aggregator-style channel sends the listed id unchanged
    expect(t[1]!.upstreamModel).toBe('openai/gpt-4.1');
    expect(t[0]!.model.id).toBe('openai/gpt-4.1');
    expect(gw.services.registry.targetsFor('openai/gpt-4.1', { endpoint: 'embeddings' })).toEqual([]);
  });

  it('deletes, then 404s', async () => {
    const { body } = await create({ name: 'doomed', kind: 'jina', keys: ['jina_abcdefghijklmnop'] });
    expect(
      gw.services.registry.targetsFor('jinaai/jina-embeddings-v3', { endpoint: 'embeddings' }).length,
    ).toBe(1);
    expect(gw.services.registry.targetsFor('jinaai/jina-embeddings-v3', { endpoint: 'chat' })).toEqual([]);
    expect((await gw.call('DELETE', `/api/channel/${body.data.id}`, { cookie: root })).status).toBe(200);
    expect(gw.services.registry.targetsFor('jinaai/jina-embeddings-v3', { endpoint: 'embeddings' })).toEqual(
      [],
    );
    expect((await gw.call('DELETE', `/api/channel/${body.data.id}`, { cookie: root })).status).toBe(404);
    expect((await gw.call('GET', `/api/channel/${body.data.id}`, { cookie: root })).status).toBe(404);
  });
});
