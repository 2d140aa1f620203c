import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { nextSteps, startGateway } from '../../src/main.js';
import { createTestDatabase } from '../helpers/databases.js';

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
      expect((await cli(['migrate'], env)).stdout).toContain('up to date');
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
      expect(out).toMatch(/http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions/);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(null)));
      await db.drop();
    }
    // Once an upstream serves something, nothing more is printed.
    expect(nextSteps('http://127.0.0.1:3000', 1)).toBe('');
  });

  it('names the option whose value is bad, before touching the database', async () => {
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
    expect(abc).toEqual({
      code: 1,
      stderr:
        "error: option '--quota <usd>' argument 'abc' is invalid. must be a number from 0 to 9007199254 (USD)\n",
    });
    expect(trailing.stderr).toContain("option '--quota <usd>' argument '2.5abc' is invalid");
    expect(rpm.stderr).toContain("option '--rpm <n>' argument '0' is invalid. must be a whole number from 1");
    expect(role.stderr).toContain("option '-r, --role <role>' argument 'boss' is invalid");
  });

  it('refuses a bad configuration listing every problem, with exit code 2', async () => {
    const err = await cli(['migrate'], { MODELGATE_PORT: 'abc', MODELGATE_LOG_LEVEL: 'loud' }).catch(
      (e) => e,
    );
    expect(err.code).toBe(2);
    expect(err.stderr).toContain('server.port');
    expect(err.stderr).toContain('log.level');
  });
});
