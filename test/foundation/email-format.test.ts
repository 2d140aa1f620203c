import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { userFieldWrites } from '../helpers/users.js';

/** An email is one address (docs/architecture.md, "Accounts and roles"); none is "". */
let gw: TestGateway;
let root: string;
beforeAll(async () => {
  gw = await startTestGateway();
  root = await gw.login();
});
afterAll(async () => gw?.close());

const BAD: Array<[string, RegExp]> = [
  ['no-at-sign', /one @/],
  ['two@at@example.com', /one @/],
  ['@example.com', /before .* after/],
  ['name@', /before .* after/],
  ['na me@example.com', /whitespace/],
  ['name@example.com\r\nBcc: victim@example.com', /whitespace/],
  ['name\t@example.com', /whitespace/],
  ['name\u0000@example.com', /./], // NUL: refused before the route (refuse-nul.ts)
  ['name\u001B@example.com', /control/],
  ['name\u200B@example.com', /control/],
  ['name@exa\u202Emple.com', /control/],
  ['name@example..com', /domain/],
  ['name@.example.com', /domain/],
  ['name@example.com.', /domain/],
  ['name@exam_ple.com', /domain/],
  ['name@example.com,other@example.com', /domain|one @/],
  ['name@<example.com>', /domain/],
  ['"quoted"@[127.0.0.1]', /domain/],
];

describe('email format', () => {
  it('refuses what is not one address with a 400 naming the field, on create, update and self-service', async () => {
    const made = await gw.call('POST', '/api/user', {
      cookie: root,
      body: { username: 'mia', password: 'password-1', email: 'mia@example.com' },
    });
    const id = made.body.data.id as number;
    const mia = await gw.login('mia', 'password-1');
    const users = async () =>
      (await gw.call('GET', '/api/user?p=0&page_size=100', { cookie: root })).body.total;
    const before = await users();
    for (const [email, why] of BAD) {
      for (const r of await userFieldWrites(gw, root, id, mia, { email })) {
        expect(r.status, JSON.stringify(email)).toBe(400);
        expect(r.body.message, JSON.stringify(email)).toMatch(/^email: /);
        expect(r.body.message, JSON.stringify(email)).toMatch(why);
      }
    }
    expect(await users()).toBe(before);
    expect((await gw.call('GET', `/api/user/${id}`, { cookie: root })).body.data.email).toBe(
      'mia@example.com',
    );
  });

  it('takes ordinary and international addresses, trimmed, and "" (or blanks) for none', async () => {
    const cases: Array<[string, string]> = [
      ['first.last+tag@example.co.uk', 'first.last+tag@example.co.uk'],
      ['root@localhost', 'root@localhost'],
      ["o'brien!#$%&*/=?^_`{|}~-@mail-1.example.org", "o'brien!#$%&*/=?^_`{|}~-@mail-1.example.org"],
      ['Jürgen@Bücher.example', 'Jürgen@Bücher.example'],
      ['用户@例子.广告', '用户@例子.广告'],
      ['  padded@example.com \n', 'padded@example.com'],
      ['', ''],
      ['   ', ''],
    ];
    for (const [i, [email, stored]] of cases.entries()) {
      const r = await gw.call('POST', '/api/user', {
        cookie: root,
        body: { username: `ok${i}`, password: 'password-1', email },
      });
      expect(r.status, JSON.stringify(email)).toBe(200);
      expect(r.body.data.email).toBe(stored);
    }
  });

  it('an address stored before the check stays readable, and a form sending it back is no change', async () => {
    const made = await gw.call('POST', '/api/user', {
      cookie: root,
      body: { username: 'old-nick', password: 'password-1' },
    });
    const id = made.body.data.id as number;
    // As an earlier release took it.
    await gw.services.database.db
      .updateTable('users')
      .set({ email: 'nick at example' })
      .where('id', '=', id)
      .execute();
    const read = await gw.call('GET', `/api/user/${id}`, { cookie: root });
    expect(read.body.data.email).toBe('nick at example');
    const form = await gw.call('PUT', '/api/user', {
      cookie: root,
      body: { id, email: 'nick at example', display_name: 'Nick' },
    });
    expect(form.status).toBe(200);
    expect(form.body.data).toMatchObject({ email: 'nick at example', display_name: 'Nick' });
    const nick = await gw.login('old-nick', 'password-1');
    const self = await gw.call('PUT', '/api/user/self', {
      cookie: nick,
      body: { email: 'nick at example', default_model: 'openai/gpt-4o' },
    });
    expect(self.status).toBe(200);
    // A change is checked: to another bad one refused, to a good one taken.
    expect(
      (await gw.call('PUT', '/api/user/self', { cookie: nick, body: { email: 'nick at home' } })).status,
    ).toBe(400);
    const fixed = await gw.call('PUT', '/api/user/self', {
      cookie: nick,
      body: { email: 'nick@example.com' },
    });
    expect(fixed.body.data.email).toBe('nick@example.com');
  });
});
