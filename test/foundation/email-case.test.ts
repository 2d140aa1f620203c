import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/databases.js';
import { ROOT_PASSWORD, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { runCli } from '../helpers/run-cli.js';
import { legacyUsersDatabase } from '../helpers/users.js';

let gw: TestGateway;
let root: string;
beforeAll(async () => {
  gw = await startTestGateway();
  root = await gw.login();
});
afterAll(async () => gw?.close());

const create = (g: TestGateway, cookie: string, username: string, email?: string) =>
  g.call('POST', '/api/user', {
    cookie,
    body: { username, password: 'password-1', ...(email === undefined ? {} : { email }) },
  });
const update = (g: TestGateway, cookie: string, id: number, body: Record<string, unknown>) =>
  g.call('PUT', '/api/user', { cookie, body: { id, ...body } });

describe('emails are unique ignoring letter case', () => {
  it('creating or changing to an address another user has is a 409 naming the field and the holder', async () => {
    const alice = await create(gw, root, 'alice', 'alice@example.com');
    expect(alice.status).toBe(200);
    const other = await create(gw, root, 'bob', 'ALICE@Example.com');
    expect(other.status).toBe(409);
    expect(other.body).toEqual({
      success: false,
      message: 'email: "ALICE@Example.com" is taken by user "alice" (emails are unique ignoring case)',
    });
    const same = await create(gw, root, 'bob', 'alice@example.com');
    expect(same.status).toBe(409);
    expect(same.body.message).toBe('email: "alice@example.com" is taken by user "alice"');
    // Nothing was created by either.
    expect((await gw.call('GET', '/api/user?keyword=bob', { cookie: root })).body.total).toBe(0);

    const carol = await create(gw, root, 'carol', 'carol@example.com');
    const moved = await update(gw, root, carol.body.data.id, { email: 'Alice@EXAMPLE.com' });
    expect(moved.status).toBe(409);
    expect(moved.body.message).toBe(
      'email: "Alice@EXAMPLE.com" is taken by user "alice" (emails are unique ignoring case)',
    );
    const kept = await gw.call('GET', `/api/user/${carol.body.data.id}`, { cookie: root });
    expect(kept.body.data.email).toBe('carol@example.com');
  });

  it('no email collides with nothing: any number of users have none', async () => {
    for (const [name, email] of [
      ['none1', undefined],
      ['none2', undefined],
      ['empty1', ''],
      ['empty2', ''],
    ] as const)
      expect((await create(gw, root, name, email)).status, name).toBe(200);
    const made = await create(gw, root, 'frank', 'frank@example.com');
    // Cleared, the address is free for another user.
    expect((await update(gw, root, made.body.data.id, { email: '' })).status).toBe(200);
    expect((await create(gw, root, 'frank2', 'Frank@example.com')).status).toBe(200);
  });

  it('a user may change the case of their own address, and a form may send it back unchanged', async () => {
    const made = await create(gw, root, 'gina', 'gina@example.com');
    const id = made.body.data.id;
    const r = await update(gw, root, id, { email: 'Gina@Example.com' });
    expect(r.status).toBe(200);
    expect(r.body.data.email).toBe('Gina@Example.com');
    const again = await update(gw, root, id, { email: 'Gina@Example.com', display_name: 'Gina' });
    expect(again.status).toBe(200);
  });

  it('PUT /api/user/self: another user’s address is a 409 naming the field, not whose it is', async () => {
    await create(gw, root, 'hank', 'hank@example.com');
    await create(gw, root, 'ivy');
    const ivy = await gw.login('ivy', 'password-1');
    const r = await gw.call('PUT', '/api/user/self', { cookie: ivy, body: { email: 'HANK@example.com' } });
    expect(r.status).toBe(409);
    expect(r.body).toEqual({
      success: false,
      message: 'email: "HANK@example.com" is taken by another user (emails are unique ignoring case)',
    });
    const own = await gw.call('PUT', '/api/user/self', { cookie: ivy, body: { email: 'Ivy@example.com' } });
    expect(own.status).toBe(200);
    expect(own.body.data.email).toBe('Ivy@example.com');
  });

  it('two instances giving one address to two users at the same moment: one is written, the other is a 409', async () => {
    const other = await startTestGateway({}, { databaseUrl: gw.databaseUrl });
    try {
      const otherRoot = await other.login();
      for (let round = 0; round < 8; round++) {
        const [a, b] = await Promise.all([
          create(gw, root, `race-a${round}`, `race${round}@example.com`),
          create(other, otherRoot, `race-b${round}`, `RACE${round}@example.com`),
        ]);
        expect([a.status, b.status].sort(), `round ${round}`).toEqual([200, 409]);
        const loser = a.status === 409 ? a : b;
        expect(loser.body.message, `round ${round}`).toMatch(
          /^email: "(race|RACE)\d+@example.com" is taken by user "race-[ab]\d+" \(emails are unique ignoring case\)$/,
        );
      }
    } finally {
      await other.stop();
    }
  });
});

describe('a database that already held an email twice', () => {
  it('starts, keeps every account and address, warns naming the users, and binds new writes', async () => {
    const t = await createTestDatabase();
    const ids = await legacyUsersDatabase(t.url, '0006', [
      ['root', 100, ROOT_PASSWORD],
      ['ann', 1, 'password-1', 'ann@example.com'],
      ['ann2', 1, 'password-1', 'ANN@example.com'],
      ['ben', 1, 'password-1', 'ben@example.com'],
      ['ben2', 1, 'password-1', 'ben@example.com'],
      ['cat', 1, 'password-1', 'cat@example.com'],
    ]);

    const logged: Array<{ level: number; msg: string; email_users?: string[] }> = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => logged.push(JSON.parse(line)) });
    const old = await startTestGateway({}, { databaseUrl: t.url, log: log as FastifyBaseLogger });
    try {
      const warning = logged.find((l) => l.msg.includes('sharing an email'));
      expect(warning?.level).toBe(40);
      expect(warning?.email_users).toEqual([
        `ann (id ${ids.ann})`,
        `ann2 (id ${ids.ann2})`,
        `ben (id ${ids.ben})`,
        `ben2 (id ${ids.ben2})`,
      ]);
      // No address in the log line: it names users.
      expect(JSON.stringify(warning)).not.toContain('@example.com');
      const rootCookie = await old.login();
      const emailOf = async (id: number) =>
        (await old.call('GET', `/api/user/${id}`, { cookie: rootCookie })).body.data.email;
      expect(await emailOf(ids.ann2!)).toBe('ANN@example.com');
      expect(await emailOf(ids.ben2!)).toBe('ben@example.com');

      // The younger one keeps its address through other changes (a form sends it back as it is).
      const edited = await update(old, rootCookie, ids.ben2!, {
        email: 'ben@example.com',
        display_name: 'Ben Two',
      });
      expect(edited.status).toBe(200);
      // No third user, nor another spelling for one of them, even once the oldest is gone.
      expect((await create(old, rootCookie, 'ann3', 'Ann@Example.com')).status).toBe(409);
      expect((await update(old, rootCookie, ids.cat!, { email: 'BEN@example.com' })).status).toBe(409);
      expect((await old.call('DELETE', `/api/user/${ids.ann}`, { cookie: rootCookie })).status).toBe(200);
      const again = await create(old, rootCookie, 'ann3', 'ann@example.com');
      expect(again.status).toBe(409);
      expect(again.body.message).toMatch(/is taken by user "ann2"/);
      // Given another address, a duplicate is resolved; the last one may then change its case.
      expect((await update(old, rootCookie, ids.ben2!, { email: 'ben.two@example.com' })).status).toBe(200);
      expect((await update(old, rootCookie, ids.ben!, { email: 'Ben@example.com' })).status).toBe(200);
    } finally {
      await old.stop();
      await t.drop();
    }
  });

  it('`modelgate migrate` says so on stderr', async () => {
    const t = await createTestDatabase();
    try {
      const ids = await legacyUsersDatabase(t.url, '0006', [
        ['root', 100, ROOT_PASSWORD],
        ['dee', 1, 'password-1', 'dee@example.com'],
        ['dee2', 1, 'password-1', 'Dee@Example.com'],
      ]);
      const migrated = await runCli(['migrate'], { DATABASE_URL: t.url, MODELGATE_LOG_LEVEL: 'silent' });
      expect(migrated.code, migrated.stderr).toBe(0);
      // The migrations after the legacy database's are applied now.
      expect(migrated.stdout).toMatch(/^applied \d+ migrations?\n$/);
      expect(migrated.stderr).toContain(
        `warning: users sharing an email (ignoring case), made before emails were unique: dee (id ${ids.dee}) and dee2 (id ${ids.dee2}).`,
      );
    } finally {
      await t.drop();
    }
  }, 60_000); // a CLI run, a Node start with tsx
});
