import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { nextSteps, startGateway } from '../../src/main.js';
import { migrationsFor } from '../../src/store/migrations/index.js';
import { createTestDatabase } from '../helpers/databases.js';
import { runCli } from '../helpers/run-cli.js';

const run = promisify(execFile);
const cli = (args: string[], env: Record<string, string>) =>
  run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    timeout: 60_000,
  });

describe('modelgate CLI', () => {
  it('migrates, creates a user and a key that then authenticates against a started gateway', async () => {
    const db = await createTestDatabase();
    const env = {
      DATABASE_URL: db.url,
      MODELGATE_ROOT_PASSWORD: 'cli-root-password',
      MODELGATE_LOG_LEVEL: 'silent',
    };
    try {
      expect((await cli(['migrate'], env)).stdout).toMatch(/^applied \d+ migrations\n$/);
      const user = await cli(['user', 'create', '-u', 'ops', '-p', 'ops-password-1', '-r', 'admin'], env);
      expect(user.stdout).toMatch(/created user ops \(id \d+, role admin\)/);
      const key = await cli(['key', 'create', '-u', 'ops', '-n', 'deploy', '--quota', '2.5'], env);
      const secret = key.stdout.trim().split('\n').at(-1)!;
      expect(secret).toMatch(/^sk-[A-Za-z0-9]{48}$/);
      await expect(cli(['user', 'create', '-u', 'ops', '-p', 'ops-password-1'], env)).rejects.toThrow(
        /taken/,
      );
      // What the service refuses is named by the option, not by the stored field.
      const short = await cli(['user', 'create', '-u', 'shorty', '-p', 'short'], env).catch((e) => e);
      expect(short.code).toBe(1);
      expect(short.stderr).toBe("error: option '--password': must be 8..256 characters\n");
      // `-p -` reads the password from standard input, so it stays out of `ps` and the history.
      const piped = await runCli(['user', 'create', '-u', 'piped', '-p', '-'], env, 'piped-password-1\n');
      expect(piped.stdout, piped.stderr).toMatch(/created user piped \(id \d+, role user\)/);
      const empty = await runCli(['user', 'create', '-u', 'nopass', '-p', '-'], env, '');
      expect(empty.stderr).toBe("error: option '--password': must be 8..256 characters\n");

      const config = loadConfig(
        {},
        { server: { host: '127.0.0.1', port: 0 }, database: { url: db.url }, log: { level: 'silent' } },
      );
      const gw = await startGateway(config);
      try {
        const models = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${secret}` } });
        expect(models.status).toBe(200);
        const login = await fetch(`${gw.url}/api/user/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: 'ops', password: 'ops-password-1' }),
        });
        expect(((await login.json()) as { data: { role: number } }).data.role).toBe(10);
        // A key the operator made for ops holds its limits, as one an admin makes for them does.
        const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
        const keys = await fetch(`${gw.url}/api/key`, { headers: { cookie } });
        const made = ((await keys.json()) as { data: Array<{ id: number; admin_managed: boolean }> })
          .data[0]!;
        expect(made.admin_managed).toBe(true);
        const raise = await fetch(`${gw.url}/api/key`, {
          method: 'PUT',
          headers: { cookie, 'content-type': 'application/json' },
          body: JSON.stringify({ id: made.id, quota_limit: null }),
        });
        expect(raise.status).toBe(403);
        const pipedLogin = await fetch(`${gw.url}/api/user/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: 'piped', password: 'piped-password-1' }),
        });
        expect(pipedLogin.status).toBe(200);
      } finally {
        await gw.stop();
      }
    } finally {
      await db.drop();
    }
  }, 120_000); // eight CLI runs, each a Node start with tsx: slow on a loaded machine

  it('creates keys with a tpm limit and an expiry, lists them and revokes one', {
    timeout: 120_000,
  }, async () => {
    const db = await createTestDatabase();
    const env = {
      DATABASE_URL: db.url,
      MODELGATE_ROOT_PASSWORD: 'cli-root-password',
      MODELGATE_LOG_LEVEL: 'silent',
    };
    const iso = (unix: number) => new Date(unix * 1000).toISOString().replace('.000Z', 'Z');
    try {
      expect((await runCli(['user', 'create', '-u', 'dev', '-p', 'dev-password-1'], env)).code).toBe(0);
      const before = Math.floor(Date.now() / 1000);
      const ci = await runCli(
        [
          'key',
          'create',
          '-u',
          'dev',
          '-n',
          'ci',
          '--tpm',
          '1000',
          '--expires',
          '2h',
          '--models',
          'openai/*, llama3:8b,',
        ],
        env,
      );
      const after = Math.floor(Date.now() / 1000);
      const m = /^created API key 1 for dev, expires (\S+):\nsk-[A-Za-z0-9]{48}\n$/.exec(ci.stdout);
      expect(m, ci.stdout + ci.stderr).not.toBeNull();
      const expires = Date.parse(m![1]!) / 1000;
      expect(expires).toBeGreaterThanOrEqual(before + 7200);
      expect(expires).toBeLessThanOrEqual(after + 7200);
      const year = new Date().getUTCFullYear() + 1;
      const later = await runCli(
        ['key', 'create', '-u', 'dev', '-n', 'later', '--expires', `${year}-06-30`],
        env,
      );
      expect(later.stdout).toMatch(
        new RegExp(`^created API key 2 for dev, expires ${year}-06-30T00:00:00Z:\n`),
      );

      const rows = async (args: string[]) =>
        (await runCli(['key', 'list', ...args], env)).stdout
          .trim()
          .split('\n')
          .map((line) => line.split(/\s{2,}/));
      const head = [
        'ID',
        'NAME',
        'OWNER',
        'PREFIX',
        'STATUS',
        'USED/QUOTA USD',
        'EXPIRES',
        'RPM',
        'TPM',
        'MODELS',
      ];
      const listed = await rows(['-u', 'dev']);
      expect(listed[0]).toEqual(head);
      expect(listed.slice(1).map((r) => [r[0], r[1], r[2], r[4], r[6], r[8], r[9]])).toEqual([
        ['2', 'later', 'dev', 'enabled', `${year}-06-30T00:00:00Z`, '-', '*'],
        ['1', 'ci', 'dev', 'enabled', iso(expires), '1000', 'openai/*,llama3:8b'],
      ]);

      expect(await runCli(['key', 'revoke', '1'], env)).toEqual({
        code: 0,
        stdout: 'revoked API key 1 (ci) of dev\n',
        stderr: '',
      });
      expect(await runCli(['key', 'revoke', '1'], env)).toEqual({
        code: 1,
        stdout: '',
        stderr: 'error: API key 1 not found\n',
      });
      expect((await rows([])).map((r) => r[0])).toEqual(['ID', '2']);
      expect((await runCli(['key', 'list', '-u', 'root'], env)).stdout).toBe('no API keys of root\n');
      expect((await runCli(['key', 'list', '-u', 'nobody'], env)).stderr).toBe(
        'error: no user named nobody\n',
      );
    } finally {
      await db.drop();
    }
  });

  it('user create on a new database without MODELGATE_ROOT_PASSWORD shows the root password it generated', async () => {
    const db = await createTestDatabase();
    const env = { DATABASE_URL: db.url, MODELGATE_LOG_LEVEL: 'silent' };
    try {
      const first = await cli(['user', 'create', '-u', 'alice', '-p', 'alice-password-1'], env);
      const pw = /username: root\n\s+password: (\S+) {2}\(printed once/.exec(first.stdout)?.[1];
      expect(pw, first.stdout).toBeDefined();
      expect(first.stdout).toMatch(/created user alice \(id \d+, role user\)/);
      // Once only: root exists from then on, and nothing prints a password again.
      const second = await cli(['user', 'create', '-u', 'bob', '-p', 'bob-password-12'], env);
      expect(second.stdout).not.toContain('password');
      const config = loadConfig(
        {},
        { server: { host: '127.0.0.1', port: 0 }, database: { url: db.url }, log: { level: 'silent' } },
      );
      const gw = await startGateway(config);
      try {
        const login = await fetch(`${gw.url}/api/user/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: 'root', password: pw }),
        });
        expect(login.status).toBe(200);
      } finally {
        await gw.stop();
      }
    } finally {
      await db.drop();
    }
  });

  it('serve on a fresh install prints the root password and how to add an upstream and a key', async () => {
    const db = await createTestDatabase();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve'], {
      env: {
        PATH: process.env.PATH ?? '',
        DATABASE_URL: db.url,
        MODELGATE_PORT: '0',
        MODELGATE_LOG_LEVEL: 'silent',
        MODELGATE_SERVER_SERVE_CONSOLE: 'false',
      },
    });
    try {
      let out = '';
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no hint in time: ${out}`)), 20_000);
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('Then create an API key')) {
            clearTimeout(timer);
            resolve();
          }
        });
        child.once('exit', (code) => reject(new Error(`serve exited (${code}): ${out}`)));
      });
      expect(out).toMatch(/username: root\n\s+password: \S+/);
      expect(out).toContain('no upstream serves a model yet');
      expect(out).toContain('OPENAI_API_KEY=sk-... npm start');
      expect(out).toContain('npx modelgate key create -u root');
      expect(out).toContain('`npx modelgate channel add --name NAME --kind openai-compatible --base-url URL');
      expect(out).toMatch(/http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions/);
      // Not the default SQLite file: the CLI commands it shows need the same database.
      expect(out).toContain('run the CLI with the same DATABASE_URL');
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(null)));
      await db.drop();
    }
    // Once an upstream serves something, nothing more is printed.
    expect(nextSteps('http://127.0.0.1:3000', 1)).toBe('');
  });

  it("the fresh-install hint says the CLI needs the gateway's DATABASE_URL, without its password", () => {
    const pg = nextSteps('http://127.0.0.1:3000', 0, {
      databaseUrl: 'postgres://gateway:pa55-secret@db:5432/modelgate',
    });
    expect(pg).toContain(
      'run the CLI with the same DATABASE_URL (postgres://gateway@db:5432/modelgate) or MODELGATE_CONFIG',
    );
    expect(pg).toContain('./data/modelgate.db');
    expect(pg).not.toContain('pa55-secret');
    // On the default SQLite file the CLI finds the same database by itself.
    const sqlite = nextSteps('http://127.0.0.1:3000', 0, { databaseUrl: './data/modelgate.db' });
    expect(sqlite).toContain('npx modelgate channel add');
    expect(sqlite).not.toContain('DATABASE_URL');
  });

  it('serve starts beside Kubernetes service links, and a second SIGTERM does not cut the drain short', {
    timeout: 60_000,
  }, async () => {
    const db = await createTestDatabase();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve'], {
      env: {
        PATH: process.env.PATH ?? '',
        DATABASE_URL: db.url,
        // What a pod gets from a Service named modelgate: none of them is a setting.
        MODELGATE_PORT: 'tcp://10.96.0.10:80',
        MODELGATE_SERVICE_HOST: '10.96.0.10',
        MODELGATE_SERVICE_PORT: '80',
        MODELGATE_SERVICE_PORT_HTTP: '80',
        MODELGATE_PORT_80_TCP: 'tcp://10.96.0.10:80',
        MODELGATE_PORT_80_TCP_PROTO: 'tcp',
        MODELGATE_PORT_80_TCP_PORT: '80',
        MODELGATE_PORT_80_TCP_ADDR: '10.96.0.10',
        MODELGATE_SERVER_PORT: '0',
        MODELGATE_SERVER_SHUTDOWN_GRACE_MS: '2500',
        MODELGATE_LOG_LEVEL: 'silent',
        MODELGATE_SERVER_SERVE_CONSOLE: 'false',
      },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<{ code: number | null; signal: string | null }>((r) =>
      child.once('exit', (code, signal) => r({ code, signal })),
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`not listening in time: ${out}`)), 30_000);
        const look = () => {
          const m = /listening on (http:\/\/\S+)/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        };
        child.stdout.on('data', look);
        void exited.then(({ code }) => reject(new Error(`serve exited (${code}): ${out}`)));
      });
      // A request still in flight (its body never finishes) holds the drain open.
      const { hostname, port } = new URL(url);
      const socket = connect(Number(port), hostname);
      await new Promise((r) => socket.once('connect', r));
      socket.write(
        'POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{',
      );
      socket.on('error', () => {});
      await new Promise((r) => setTimeout(r, 200));
      child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 300));
      child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 500));
      // Still draining: the second signal was not the default action.
      expect(child.exitCode).toBeNull();
      expect(child.signalCode).toBeNull();
      const end = await exited;
      expect(end).toEqual({ code: 0, signal: null });
      socket.destroy();
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await db.drop();
    }
  });

  it('serve on a fresh install whose port is taken still shows the root password, and how to choose a port', {
    timeout: 90_000,
  }, async () => {
    // The README's "Port 3000 taken? MODELGATE_PORT=3001 npm start": the first start, refused
    // the port, has already made root; its password was printed only after listening, so never.
    const db = await createTestDatabase();
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as { port: number }).port;
    try {
      const first = await runCli(['serve'], {
        DATABASE_URL: db.url,
        MODELGATE_PORT: String(port),
        MODELGATE_LOG_LEVEL: 'silent',
        MODELGATE_SERVER_SERVE_CONSOLE: 'false',
      });
      expect(first.code, first.stderr).toBe(1);
      const pw = /username: root\n\s+password: (\S+) {2}\(printed once/.exec(first.stdout)?.[1];
      expect(pw, first.stdout).toBeDefined();
      expect(first.stderr).toBe(
        `error: listen EADDRINUSE: address already in use 127.0.0.1:${port}: another process listens on 127.0.0.1:${port}; stop it, or start on another port with MODELGATE_PORT=${port + 1} (server.port in the config file)\n`,
      );
      const config = loadConfig(
        {},
        { server: { host: '127.0.0.1', port: 0 }, database: { url: db.url }, log: { level: 'silent' } },
      );
      const gw = await startGateway(config);
      try {
        const login = await fetch(`${gw.url}/api/user/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: 'root', password: pw }),
        });
        expect(login.status).toBe(200);
      } finally {
        await gw.stop();
      }
    } finally {
      await new Promise((r) => taken.close(r));
      await db.drop();
    }
  });

  it('names the option whose value is bad, before touching the database', { timeout: 90_000 }, async () => {
    const refused = (args: string[]) =>
      cli(args, { DATABASE_URL: 'postgres://127.0.0.1:1/none' }).then(
        () => expect.fail(`${args.join(' ')} succeeded`),
        (e) => ({ code: e.code, stderr: e.stderr }),
      );
    const [abc, trailing, rpm, role] = await Promise.all([
      refused(['key', 'create', '-u', 'root', '--quota', 'abc']),
      refused(['key', 'create', '-u', 'root', '--quota', '2.5abc']),
      refused(['key', 'create', '-u', 'root', '--rpm', '0']),
      refused(['user', 'create', '-u', 'x', '-p', 'password-1', '-r', 'boss']),
    ]);
    const [past, feb30, tenYears, tooLate, tpm, longModel, revoke] = await Promise.all([
      refused(['key', 'create', '-u', 'root', '--expires', '2020-01-01']),
      refused(['key', 'create', '-u', 'root', '--expires', '2999-02-30']),
      refused(['key', 'create', '-u', 'root', '--expires', '10y']),
      refused(['key', 'create', '-u', 'root', '--expires', '10000000w']),
      refused(['key', 'create', '-u', 'root', '--tpm', '0']),
      // The admin API's schema bounds each allow-list entry; the CLI took any length before.
      refused(['key', 'create', '-u', 'root', '--models', `openai/*,${'m'.repeat(256)}`]),
      refused(['key', 'revoke', 'abc']),
    ]);
    const when =
      'must be a duration from now (12h, 30d, 8w) or an ISO 8601 date or time (2027-01-31, 2027-01-31T18:00Z)';
    expect(past).toEqual({
      code: 1,
      stderr:
        "error: option '--expires <when>' argument '2020-01-01' is invalid. must be in the future (2020-01-01 has passed)\n",
    });
    expect(feb30.stderr).toBe(`error: option '--expires <when>' argument '2999-02-30' is invalid. ${when}\n`);
    expect(tenYears.stderr).toBe(`error: option '--expires <when>' argument '10y' is invalid. ${when}\n`);
    expect(tooLate.stderr).toBe(
      "error: option '--expires': must be an integer from 0 to 253402300799, or null\n",
    );
    expect(tpm.stderr).toContain("option '--tpm <n>' argument '0' is invalid. must be a whole number from 1");
    expect(longModel).toEqual({
      code: 1,
      stderr: "error: option '--models': item 2: must NOT have more than 255 characters\n",
    });
    expect(revoke.stderr).toContain(
      "value 'abc' is invalid for argument 'id'. must be a whole number from 1",
    );
    expect(abc).toEqual({
      code: 1,
      stderr:
        "error: option '--quota <usd>' argument 'abc' is invalid. must be a number from 0 to 9007199254 (USD)\n",
    });
    expect(trailing.stderr).toContain("option '--quota <usd>' argument '2.5abc' is invalid");
    expect(rpm.stderr).toContain("option '--rpm <n>' argument '0' is invalid. must be a whole number from 1");
    expect(role.stderr).toContain("option '-r, --role <role>' argument 'boss' is invalid");
  });

  it('describes every command and option in its help, and update names no defaults it does not apply', {
    timeout: 90_000,
  }, async () => {
    const help = async (args: string[]) => (await runCli([...args, '--help'], {})).stdout;
    const pages = await Promise.all(
      [['user'], ['user', 'create'], ['key'], ['key', 'create'], ['channel', 'update']].map(
        async (args) => [args.join(' '), await help(args)] as const,
      ),
    );
    for (const [command, text] of pages) {
      // An entry of "Options:" or "Commands:" starts at column 2; its description follows on the line.
      const bare = text.split('\n').filter((line) => /^ {2}\S/.test(line) && !/\S {2,}\S/.test(line));
      expect(bare, `modelgate ${command} --help`).toEqual([]);
    }
    const update = pages.at(-1)![1];
    // `update` keeps what is not given: "(default 0)" was add's default, printed for update too.
    expect(update).not.toContain('default');
    expect(update).toMatch(
      /--models <list> +comma-separated models it serves \('': what its GET \/models\s+lists\)/,
    );
    expect(await help(['channel', 'add'])).toContain('higher is tried first (default 0)');
  });

  it('a command on what a database holds, run where there is none, says so and creates none', {
    timeout: 120_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-cli-nodb-'));
    const env = { MODELGATE_LOG_LEVEL: 'silent', MODELGATE_ROOT_PASSWORD: 'cli-root-password' };
    const none = (at: string) =>
      `error: no database at ${at}: the gateway creates it at its first start; run this with the gateway's DATABASE_URL (or MODELGATE_CONFIG)\n`;
    try {
      const commands = [
        ['key', 'list'],
        // A key is made for a user of the database: there is none to own it yet.
        ['key', 'create', '-u', 'root'],
        ['key', 'revoke', '1'],
        ['channel', 'list'],
        ['channel', 'test', 'x'],
        ['channel', 'update', 'x', '--weight', '2'],
        ['channel', 'refresh', 'x'],
        ['channel', 'remove', 'x'],
        ['channel', 'disable', 'x'],
      ];
      for (const args of commands)
        expect(await runCli(args, env, '', dir), args.join(' ')).toEqual({
          code: 1,
          stdout: '',
          stderr: none(join(dir, 'data', 'modelgate.db')),
        });
      // A database named elsewhere, as a sqlite: URL too, is looked for there.
      const named = await runCli(
        ['channel', 'list'],
        { ...env, DATABASE_URL: 'sqlite:other/gw.db' },
        '',
        dir,
      );
      expect(named.stderr).toBe(none(join(dir, 'other', 'gw.db')));
      expect(readdirSync(dir)).toEqual([]);
      // A command that adds something makes the database, as the gateway's first start would, and
      // says where; the gateway run with the same settings then sees it.
      const add = await runCli(
        [
          'channel',
          'add',
          '--name',
          'local',
          '--kind',
          'openai-compatible',
          '--base-url',
          'http://127.0.0.1:1/v1',
        ],
        env,
        '',
        dir,
      );
      expect(add.stderr).toContain(`note: created a new database at ${join(dir, 'data', 'modelgate.db')}`);
      expect(add.stdout).toContain('added channel');
      const list = await runCli(['channel', 'list'], env, '', dir);
      expect(list).toMatchObject({ code: 0, stderr: '' });
      expect(list.stdout).toContain('local');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('migrate says what it applied, and that no root user exists until the first start or user create', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-migrate-cli-'));
    const env = { MODELGATE_LOG_LEVEL: 'silent', DATABASE_URL: join(dir, 'gw.db') };
    const all = Object.keys(migrationsFor('sqlite')).length;
    const noRoot =
      'note: no root user yet: the first start (modelgate serve) creates it and prints its password, as does modelgate user create\n';
    try {
      // It said "database is up to date" here, hiding that it had made the whole schema.
      const first = await runCli(['migrate'], env, '', dir);
      expect(first).toEqual({
        code: 0,
        stdout: `applied ${all} migrations\n`,
        stderr: `note: created a new database at ${join(dir, 'gw.db')}; a gateway sees it only if it runs with the same DATABASE_URL (or MODELGATE_CONFIG)\n${noRoot}`,
      });
      expect(await runCli(['migrate'], env, '', dir)).toEqual({
        code: 0,
        stdout: 'database is up to date\n',
        stderr: noRoot,
      });
      const root = await runCli(['user', 'create', '-u', 'ops', '-p', 'ops-password-1'], env, '', dir);
      expect(root.code, root.stderr).toBe(0);
      expect(await runCli(['migrate'], env, '', dir)).toEqual({
        code: 0,
        stdout: 'database is up to date\n',
        stderr: '',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('commands that act as root on a migrated database without root say how root comes to be', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-noroot-cli-'));
    const env = { MODELGATE_LOG_LEVEL: 'silent', DATABASE_URL: join(dir, 'gw.db') };
    const hint =
      'no root user yet: the first start (modelgate serve) creates it and prints its password, as does modelgate user create';
    try {
      expect((await runCli(['migrate'], env, '', dir)).code).toBe(0);
      // They said only "no root user to act as" (and `key create -u root` "no user named root"),
      // which left someone who had run migrate, as README's command list suggests, guessing.
      for (const args of [
        ['key', 'list'],
        ['key', 'create', '-u', 'root'],
        ['key', 'revoke', '1'],
      ]) {
        expect(await runCli(args, env, '', dir), args.join(' ')).toEqual({
          code: 1,
          stdout: '',
          stderr: `error: ${hint}\n`,
        });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a bad configuration listing every problem, with exit code 2', async () => {
    const err = await cli(['migrate'], { MODELGATE_PORT: 'abc', MODELGATE_LOG_LEVEL: 'loud' }).catch(
      (e) => e,
    );
    expect(err.code).toBe(2);
    expect(err.stderr).toContain('server.port');
    expect(err.stderr).toContain('log.level');
  });

  it('stops on a database.url or server.trust_proxy it cannot use before creating anything, with exit code 2', {
    timeout: 90_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-cfg-cli-'));
    const silent = { MODELGATE_LOG_LEVEL: 'silent', MODELGATE_ROOT_PASSWORD: 'cli-root-password' };
    // Fastify refused it only at listen, after the migrations and the root user.
    const proxy = {
      ...silent,
      DATABASE_URL: join(dir, 'data', 'modelgate.db'),
      MODELGATE_PORT: '0',
      MODELGATE_SERVER_TRUST_PROXY: 'notanip',
    };
    const stderr =
      "invalid configuration:\n  - server.trust_proxy (from MODELGATE_SERVER_TRUST_PROXY): invalid IP address: notanip; use true, false, or the proxies' addresses or CIDR ranges, comma-separated (or loopback, linklocal, uniquelocal)\n";
    try {
      // Read as a SQLite path, this made the folders ./mysql:/u:pw1234@h/ and a database `x`.
      expect(await runCli(['migrate'], { ...silent, DATABASE_URL: 'mysql://u:pw1234@h/x' }, '', dir)).toEqual(
        {
          code: 2,
          stdout: '',
          stderr:
            'invalid configuration:\n  - database.url (from DATABASE_URL): mysql:// is not a database the gateway opens; use a postgres:// or postgresql:// URL, or a SQLite file path\n',
        },
      );
      expect(await runCli(['migrate'], proxy, '', dir)).toEqual({ code: 2, stdout: '', stderr });
      expect(await runCli(['serve'], proxy, '', dir)).toEqual({ code: 2, stdout: '', stderr });
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
