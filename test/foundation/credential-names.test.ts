import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { userFieldWrites } from '../helpers/users.js';

/**
 * API key names, access token names and a user's `default_model` are one line of visible text,
 * as display names and catalog names are (docs/architecture.md): before, `"a\u202Eb"` and
 * `"a\nb"` were stored as sent, a token name of blanks was kept as blanks, and a lone surrogate
 * was stored as U+FFFD without a word.
 */
let gw: TestGateway;
let root: string;
beforeAll(async () => {
  gw = await startTestGateway();
  root = await gw.login();
});
afterAll(async () => gw?.close());

const BAD: Array<[string, string]> = [
  ['a\u202Eb', 'U+202E'],
  ['a\nb', 'U+000A'],
  ['a\tb', 'U+0009'],
  ['a\u200Bb', 'U+200B'],
  ['a\u2066b', 'U+2066'],
  ['a\uD800b', 'U+D800'],
  ['\u3164', 'U+3164'],
];
const refused = (field: string, found: string) =>
  `${field}: must not contain control, invisible or bidi override characters (found ${found})`;

describe('API key names', () => {
  it('refuse control, invisible and bidi characters on create and update, naming the field and the character', async () => {
    const made = await gw.call('POST', '/api/key', { cookie: root, body: { name: 'plain' } });
    const id = made.body.data.id as number;
    for (const [name, found] of BAD) {
      const create = await gw.call('POST', '/api/key', { cookie: root, body: { name } });
      const update = await gw.call('PUT', '/api/key', { cookie: root, body: { id, name } });
      for (const r of [create, update]) {
        expect(r.status, JSON.stringify(name)).toBe(400);
        expect(r.body.message).toBe(refused('name', found));
      }
    }
    const keys = await gw.call('GET', '/api/key', { cookie: root });
    expect(keys.body.data.map((k: { name: string }) => k.name)).toEqual(['plain']);
  });

  it('are trimmed, and keep what names in any script and emoji need', async () => {
    const r = await gw.call('POST', '/api/key', { cookie: root, body: { name: '  Zoë \u2764\uFE0F  ' } });
    expect(r.status).toBe(200);
    expect(r.body.data.name).toBe('Zoë \u2764\uFE0F');
  });

  it('keep a name stored before the check until it is changed', async () => {
    const made = await gw.call('POST', '/api/key', { cookie: root, body: { name: 'olden' } });
    const id = made.body.data.id as number;
    await gw.services.database.db
      .updateTable('api_keys')
      .set({ name: 'old\u202Ename' })
      .where('id', '=', id)
      .execute();
    // A form sends every field back: the stored name unchanged is no change.
    const kept = await gw.call('PUT', '/api/key', {
      cookie: root,
      body: { id, name: 'old\u202Ename', rpm_limit: 5 },
    });
    expect(kept.status).toBe(200);
    expect(kept.body.data).toMatchObject({ name: 'old\u202Ename', rpm_limit: 5 });
    const fixed = await gw.call('PUT', '/api/key', { cookie: root, body: { id, name: 'oldname' } });
    expect(fixed.body.data.name).toBe('oldname');
  });
});

describe('access token names', () => {
  it('refuse control, invisible and bidi characters and lone surrogates, naming the field and the character', async () => {
    for (const [name, found] of BAD) {
      const r = await gw.call('POST', '/api/user/tokens', { cookie: root, body: { name } });
      expect(r.status, JSON.stringify(name)).toBe(400);
      expect(r.body.message).toBe(refused('name', found));
    }
    expect((await gw.call('GET', '/api/user/tokens', { cookie: root })).body.total).toBe(0);
  });

  it('are trimmed, and a name of blanks is a 400 as for a key', async () => {
    const blank = await gw.call('POST', '/api/user/tokens', { cookie: root, body: { name: '   ' } });
    const blankKey = await gw.call('POST', '/api/key', { cookie: root, body: { name: '   ' } });
    for (const r of [blank, blankKey]) {
      expect(r.status).toBe(400);
      expect(r.body.message).toBe('name: must be 1..128 characters');
    }
    const r = await gw.call('POST', '/api/user/tokens', { cookie: root, body: { name: '  ci  ' } });
    expect(r.status).toBe(200);
    expect(r.body.data.name).toBe('ci');
  });
});

describe('default_model', () => {
  it('refuses control, invisible and bidi characters on create, update and self-service', async () => {
    const made = await gw.call('POST', '/api/user', {
      cookie: root,
      body: { username: 'modeler', password: 'password-1', default_model: 'openai/gpt-4o-mini' },
    });
    const id = made.body.data.id as number;
    const own = await gw.login('modeler', 'password-1');
    for (const [default_model, found] of [...BAD, ['fake\u202Emodel', 'U+202E'] as const]) {
      for (const r of await userFieldWrites(gw, root, id, own, { default_model })) {
        expect(r.status, JSON.stringify(default_model)).toBe(400);
        expect(r.body.message).toBe(refused('default_model', found));
      }
    }
    expect((await gw.call('GET', `/api/user/${id}`, { cookie: root })).body.data.default_model).toBe(
      'openai/gpt-4o-mini',
    );
  });

  it('is trimmed as a model id is, and blank is none', async () => {
    const own = await gw.login('modeler', 'password-1');
    const set = await gw.call('PUT', '/api/user/self', {
      cookie: own,
      body: { default_model: ' openai/gpt-4o ' },
    });
    expect(set.body.data.default_model).toBe('openai/gpt-4o');
    const none = await gw.call('PUT', '/api/user/self', { cookie: own, body: { default_model: '  ' } });
    expect(none.status).toBe(200);
    expect(none.body.data.default_model).toBe('');
  });

  it('keeps a value stored before the check until it is changed', async () => {
    const made = await gw.call('POST', '/api/user', {
      cookie: root,
      body: { username: 'oldmodel', password: 'password-1' },
    });
    const id = made.body.data.id as number;
    await gw.services.database.db
      .updateTable('users')
      .set({ default_model: 'bad\nmodel' })
      .where('id', '=', id)
      .execute();
    const own = await gw.login('oldmodel', 'password-1');
    const kept = await gw.call('PUT', '/api/user/self', {
      cookie: own,
      body: { default_model: 'bad\nmodel', display_name: 'Old' },
    });
    expect(kept.status).toBe(200);
    expect(kept.body.data).toMatchObject({ default_model: 'bad\nmodel', display_name: 'Old' });
  });
});

describe('allowed_models entries', () => {
  it('refuse control, invisible and bidi characters on create and update, naming the entry', async () => {
    const made = await gw.call('POST', '/api/key', { cookie: root, body: { name: 'listed' } });
    const id = made.body.data.id as number;
    for (const [entry, found] of BAD) {
      const allowed_models = ['openai/gpt-4o-mini', entry];
      const create = await gw.call('POST', '/api/key', {
        cookie: root,
        body: { name: 'l2', allowed_models },
      });
      const update = await gw.call('PUT', '/api/key', { cookie: root, body: { id, allowed_models } });
      for (const r of [create, update]) {
        expect(r.status, JSON.stringify(entry)).toBe(400);
        expect(r.body.message).toBe(refused('allowed_models.1', found));
      }
    }
    const ok = await gw.call('PUT', '/api/key', {
      cookie: root,
      body: { id, allowed_models: ['  openai/gpt-4o-mini ', 'anthropic/*'] },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.data.allowed_models).toEqual(['openai/gpt-4o-mini', 'anthropic/*']);
  });

  it('keep an entry stored before the check while the key is saved again', async () => {
    const made = await gw.call('POST', '/api/key', { cookie: root, body: { name: 'old-list' } });
    const id = made.body.data.id as number;
    await gw.services.database.db
      .updateTable('api_keys')
      .set({ allowed_models: JSON.stringify(['old\u202Emodel']) })
      .where('id', '=', id)
      .execute();
    const kept = await gw.call('PUT', '/api/key', {
      cookie: root,
      body: { id, allowed_models: ['old\u202Emodel', 'openai/gpt-4o-mini'] },
    });
    expect(kept.status).toBe(200);
    expect(kept.body.data.allowed_models).toEqual(['old\u202Emodel', 'openai/gpt-4o-mini']);
  });
});
