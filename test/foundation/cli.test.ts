import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { startGateway } from '../../src/main.js';
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

  it('refuses a bad configuration listing every problem, with exit code 2', async () => {
    const err = await cli(['migrate'], { MODELGATE_PORT: 'abc', MODELGATE_LOG_LEVEL: 'loud' }).catch(
      (e) => e,
    );
    expect(err.code).toBe(2);
    expect(err.stderr).toContain('server.port');
    expect(err.stderr).toContain('log.level');
  });
});
