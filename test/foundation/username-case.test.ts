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

const create = (g: TestGateway, cookie: string, username: string, password = 'password-1') =>
  g.call('POST', '/api/user', { cookie, body: { username, password } });
const login = (g: TestGateway, username: string, password: string) =>
  g.call('POST', '/api/user/login', { body: { username, password } });

describe('usernames are unique ignoring letter case', () => {
  it('creating or renaming to another spelling of a taken name is a 409 naming the holder', async () => {
    expect((await create(gw, root, 'alice')).status).toBe(200);
    const twin = await create(gw, root, 'ALICE');
    expect(twin.status).toBe(409);
    expect(twin.body).toEqual({
      success: false,
      message: 'username: "ALICE" is taken by "alice" (usernames are unique ignoring case)',
    });
    const same = await create(gw, root, 'alice');
    expect(same.status).toBe(409);
    expect(same.body.message).toBe('username: "alice" is taken');

    const carol = await create(gw, root, 'carol');
    const rename = await gw.call('PUT', '/api/user', {
      cookie: root,
      body: { id: carol.body.data.id, username: 'aLiCe' },
    });
    expect(rename.status).toBe(409);
    expect(rename.body.message).toBe(
      'username: "aLiCe" is taken by "alice" (usernames are unique ignoring case)',
    );
    const list = await gw.call('GET', '/api/user?keyword=alice', { cookie: root });
    expect(list.body.data.map((u: { username: string }) => u.username)).toEqual(['alice']);
  });

  it('a user may change the case of their own name; it is shown as stored', async () => {
    const made = await create(gw, root, 'dave');
    const r = await gw.call('PUT', '/api/user', {
      cookie: root,
      body: { id: made.body.data.id, username: 'Dave' },
    });
    expect(r.status).toBe(200);
    expect(r.body.data.username).toBe('Dave');
  });

  it('signs in whatever the case typed, as the stored spelling', async () => {
    await create(gw, root, 'Erin', 'password-e');
    for (const typed of ['Erin', 'erin', 'ERIN']) {
      const r = await login(gw, typed, 'password-e');
      expect(r.status, typed).toBe(200);
      expect(r.body.data.username).toBe('Erin');
    }
    const wrong = await login(gw, 'erin', 'password-x');
    expect(wrong.status).toBe(401);
    expect(wrong.body.message).toBe('invalid username or password');
  });

  it('two instances creating bob and BOB at the same moment: one is created, the other is a 409', async () => {
    const other = await startTestGateway({}, { databaseUrl: gw.databaseUrl });
    try {
      const otherRoot = await other.login();
      for (let round = 0; round < 8; round++) {
        const [a, b] = await Promise.all([
          create(gw, root, `bob${round}`),
          create(other, otherRoot, `BOB${round}`),
        ]);
        expect([a.status, b.status].sort(), `round ${round}`).toEqual([200, 409]);
        const loser = a.status === 409 ? a : b;
        expect(loser.body.message, `round ${round}`).toMatch(
          /is taken by "(bob|BOB)\d+" \(usernames are unique ignoring case\)/,
        );
        const found = await gw.call('GET', `/api/user?keyword=bob${round}`, { cookie: root });
        expect(found.body.total, `round ${round}`).toBe(1);
      }
    } finally {
      await other.stop();
    }
  });
});

describe('a database that already held usernames differing only in case', () => {
  it('starts, keeps every account, warns naming them, and binds new writes', async () => {
    const t = await createTestDatabase();
    const ids = await legacyUsersDatabase(t.url, '0005', [
      ['root', 100, ROOT_PASSWORD],
      ['alice', 1, 'password-lower'],
      ['ALICE', 1, 'password-upper'],
      ['Alice', 1, 'password-title'],
    ]);

    const logged: Array<{ level: number; msg: string; usernames?: string[] }> = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => logged.push(JSON.parse(line)) });
    const old = await startTestGateway({}, { databaseUrl: t.url, log: log as FastifyBaseLogger });
    try {
      const warning = logged.find((l) => l.msg.includes('differ only in letter case'));
      expect(warning?.level).toBe(40);
      expect(warning?.usernames).toEqual([
        `alice (id ${ids.alice})`,
        `ALICE (id ${ids.ALICE})`,
        `Alice (id ${ids.Alice})`,
      ]);
      const rootCookie = await old.login();
      const listed = await old.call('GET', '/api/user?keyword=alice', { cookie: rootCookie });
      expect(listed.body.data.map((u: { id: number; username: string }) => [u.id, u.username])).toEqual([
        [ids.alice, 'alice'],
        [ids.ALICE, 'ALICE'],
        [ids.Alice, 'Alice'],
      ]);

      // Each signs in with its exact spelling, as before; another spelling names none of them.
      for (const [name, password] of [
        ['alice', 'password-lower'],
        ['ALICE', 'password-upper'],
        ['Alice', 'password-title'],
      ] as const) {
        const r = await login(old, name, password);
        expect(r.status, name).toBe(200);
        expect(r.body.data.id).toBe(ids[name]);
      }
      expect((await login(old, 'aLiCe', 'password-lower')).status).toBe(401);

      // No fourth spelling, even once the oldest of them is gone.
      expect((await create(old, rootCookie, 'aLiCe')).status).toBe(409);
      expect((await old.call('DELETE', `/api/user/${ids.alice}`, { cookie: rootCookie })).status).toBe(200);
      const again = await create(old, rootCookie, 'alice');
      expect(again.status).toBe(409);
      expect(again.body.message).toMatch(/is taken by "(ALICE|Alice)"/);

      // Renaming one apart resolves it: the last one may then take any spelling of the name.
      const apart = await old.call('PUT', '/api/user', {
        cookie: rootCookie,
        body: { id: ids.ALICE, username: 'alice2' },
      });
      expect(apart.status).toBe(200);
      const back = await old.call('PUT', '/api/user', {
        cookie: rootCookie,
        body: { id: ids.Alice, username: 'alice' },
      });
      expect(back.status).toBe(200);
      expect((await login(old, 'ALICE', 'password-title')).body.data?.id).toBe(ids.Alice);
      expect((await create(old, rootCookie, 'ALICE2')).status).toBe(409);
    } finally {
      await old.stop();
      await t.drop();
    }
  });

  it('`modelgate migrate` says so on stderr; `key create -u` takes any case of a unique name', async () => {
    const t = await createTestDatabase();
    try {
      const ids = await legacyUsersDatabase(t.url, '0005', [
        ['root', 100, ROOT_PASSWORD],
        ['Carol', 1, 'password-c'],
        ['dan', 1, 'password-d'],
        ['DAN', 1, 'password-e'],
      ]);
      const env = { DATABASE_URL: t.url, MODELGATE_LOG_LEVEL: 'silent' };
      const migrated = await runCli(['migrate'], env);
      expect(migrated.code, migrated.stderr).toBe(0);
      // The migrations after the legacy database's are applied now.
      expect(migrated.stdout).toMatch(/^applied \d+ migrations?\n$/);
      expect(migrated.stderr).toContain(`differ only in letter case`);
      expect(migrated.stderr).toContain(`dan (id ${ids.dan}), DAN (id ${ids.DAN})`);
      const key = await runCli(['key', 'create', '-u', 'carol', '-n', 'k'], env);
      expect(key.stdout, key.stderr).toMatch(/created API key \d+ for Carol/);
      // Between the two dans, only an exact spelling says which.
      const unsure = await runCli(['key', 'create', '-u', 'Dan', '-n', 'k'], env);
      expect(unsure.stderr).toBe('error: no user named Dan\n');
    } finally {
      await t.drop();
    }
  }, 120_000); // three CLI runs, each a Node start with tsx
});
