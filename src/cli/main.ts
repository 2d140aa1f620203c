#!/usr/bin/env -S node --min-semi-space-size=8
import { Command, InvalidArgumentError } from 'commander';
import { Role } from '../access/roles.js';
import { ConfigError, loadConfig } from '../config/load-config.js';
import { serve } from '../main.js';
import { createServices } from '../services.js';

const program = new Command('modelgate').description('AI model gateway and application catalog');

const int = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n)) throw new InvalidArgumentError('not an integer');
  return n;
};

async function withServices<T>(
  fn: (s: Awaited<ReturnType<typeof createServices>>) => Promise<T>,
): Promise<T> {
  const services = await createServices(loadConfig());
  try {
    return await fn(services);
  } finally {
    await services.close();
  }
}

program
  .command('serve')
  .description('start the gateway (migrates the database first)')
  .action(() => serve());

program
  .command('migrate')
  .description('apply pending database migrations and exit')
  .action(async () => {
    await withServices(async () => {});
    process.stdout.write('database is up to date\n');
  });

const user = program.command('user').description('manage users');
user
  .command('create')
  .requiredOption('-u, --username <name>')
  .requiredOption('-p, --password <password>')
  .option('-r, --role <role>', 'user | admin | root', 'user')
  .action(async (o: { username: string; password: string; role: string }) => {
    const role = { user: Role.user, admin: Role.admin, root: Role.root }[o.role];
    if (!role) throw new InvalidArgumentError('role must be user, admin or root');
    await withServices(async (s) => {
      await s.users.bootstrapRoot(s.config.auth.root_password);
      const root = (await s.repos.users.byUsername('root')) ?? (await s.repos.users.byId(1));
      if (!root) throw new Error('no root user to act as');
      const created = await s.users.create(
        { ...root, role: Role.root },
        { username: o.username, password: o.password, role },
      );
      process.stdout.write(`created user ${created.username} (id ${created.id}, role ${o.role})\n`);
    });
  });

const key = program.command('key').description('manage API keys');
key
  .command('create')
  .requiredOption('-u, --username <name>', 'owner of the key')
  .option('-n, --name <name>', 'key name', 'cli')
  .option('--quota <usd>', 'spend limit in USD', Number.parseFloat)
  .option('--models <list>', 'comma-separated model allow-list')
  .option('--rpm <n>', 'requests per minute', int)
  .action(async (o: { username: string; name: string; quota?: number; models?: string; rpm?: number }) => {
    await withServices(async (s) => {
      const owner = await s.repos.users.byUsername(o.username);
      if (!owner) throw new Error(`no user named ${o.username}`);
      const { secret, row } = await s.apiKeys.create(owner, {
        name: o.name,
        quota_limit: o.quota ?? null,
        allowed_models: o.models ? o.models.split(',') : null,
        rpm_limit: o.rpm ?? null,
      });
      process.stdout.write(`created API key ${row.id} for ${owner.username}:\n${secret}\n`);
    });
  });

program.parseAsync().catch((err: unknown) => {
  process.stderr.write(`${err instanceof ConfigError ? err.message : `error: ${(err as Error).message}`}\n`);
  process.exit(err instanceof ConfigError ? 2 : 1);
});
