import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { userFieldWrites } from '../helpers/users.js';

/** A display name is one line of visible text, as a catalog name is (docs/architecture.md). */
let gw: TestGateway;
let root: string;
beforeAll(async () => {
  gw = await startTestGateway();
  root = await gw.login();
});
afterAll(async () => gw?.close());

const BAD: Array<[string, string]> = [
  ['Ann\nBcc', 'U+000A'],
  ['Ann\tLee', 'U+0009'],
  ['Ann\u001B[31m', 'U+001B'],
  ['abc\u202Etxt.exe', 'U+202E'],
  ['Ann\u2066Lee', 'U+2066'],
  ['An\u200Bn', 'U+200B'],
  ['An\u200Dn', 'U+200D'],
  ['\u3164', 'U+3164'],
  ['\u2800', 'U+2800'],
  ['Ann\u2028Lee', 'U+2028'],
  ['An\uFE0Fn', 'U+FE0F'],
];

describe('display_name characters', () => {
  it('refuses control, invisible and bidi characters with a 400 naming the field and the character, on create, update and self-service', async () => {
    const made = await gw.call('POST', '/api/user', {
      cookie: root,
      body: { username: 'dana', password: 'password-1', display_name: 'Dana' },
    });
    const id = made.body.data.id as number;
    const dana = await gw.login('dana', 'password-1');
    const users = async () =>
      (await gw.call('GET', '/api/user?p=0&page_size=100', { cookie: root })).body.total;
    const before = await users();
    for (const [display_name, found] of BAD) {
      for (const r of await userFieldWrites(gw, root, id, dana, { display_name })) {
        expect(r.status, JSON.stringify(display_name)).toBe(400);
        expect(r.body.message).toBe(
          `display_name: must not contain control, invisible or bidi override characters (found ${found})`,
        );
      }
    }
    expect(await users()).toBe(before);
    expect((await gw.call('GET', `/api/user/${id}`, { cookie: root })).body.data.display_name).toBe('Dana');
  });

  it('trims, and keeps what names in any script and emoji need', async () => {
    const names = [
      '  Zoë Ölund  ',
      'می\u200Cخواهم',
      '\u{1F468}\u200D\u{1F469}\u200D\u{1F467} family',
      'Ann \u2764\uFE0F',
    ];
    const kept = [];
    for (const [i, display_name] of names.entries()) {
      const r = await gw.call('POST', '/api/user', {
        cookie: root,
        body: { username: `script${i}`, password: 'password-1', display_name },
      });
      expect(r.status, display_name).toBe(200);
      kept.push(r.body.data.display_name);
    }
    expect(kept).toEqual(names.map((n) => n.trim()));
  });

  it('keeps a display name stored before the check until it is changed', async () => {
    const made = await gw.call('POST', '/api/user', {
      cookie: root,
      body: { username: 'olden', password: 'password-1', display_name: 'Olden' },
    });
    const id = made.body.data.id as number;
    await gw.services.database.db
      .updateTable('users')
      .set({ display_name: 'Old\u200Bname' })
      .where('id', '=', id)
      .execute();
    // A form sends every field back: the stored name unchanged is no change.
    const kept = await gw.call('PUT', '/api/user', {
      cookie: root,
      body: { id, display_name: 'Old\u200Bname', default_model: 'gpt-x' },
    });
    expect(kept.status).toBe(200);
    expect(kept.body.data).toMatchObject({ display_name: 'Old\u200Bname', default_model: 'gpt-x' });
    const fixed = await gw.call('PUT', '/api/user', { cookie: root, body: { id, display_name: 'Oldname' } });
    expect(fixed.body.data.display_name).toBe('Oldname');
  });
});
