#!/usr/bin/env -S node --min-semi-space-size=8
import { Command, InvalidArgumentError, Option } from 'commander';
import { Role } from '../access/roles.js';
import { MAX_QUOTA_USD } from '../access/users.js';
import { ConfigError, loadConfig } from '../config/load-config.js';
import { GatewayError } from '../gateway/errors.js';
import { serve } from '../main.js';
import { createServices } from '../services.js';

const program = new Command('modelgate').description('AI model gateway and application catalog');

// Option values are checked as they are parsed, so commander's message names the option
// (`option '--quota <usd>' argument 'abc' is invalid. must be ...`), not the stored field.
const INT32_MAX = 2 ** 31 - 1;

const positiveInt = (v: string) => {
  const n = v.trim() === '' ? Number.NaN : Number(v);
  if (!Number.isInteger(n) || n < 1 || n > INT32_MAX)
    throw new InvalidArgumentError(`must be a whole number from 1 to ${INT32_MAX}`);
  return n;
};

const usd = (v: string) => {
  // Number, not parseFloat: `2.5abc` is a mistake, not 2.5.
  const n = v.trim() === '' ? Number.NaN : Number(v);
  if (!Number.isFinite(n) || n < 0 || n > MAX_QUOTA_USD)
    throw new InvalidArgumentError(`must be a number from 0 to ${MAX_QUOTA_USD} (USD)`);
  return n;
};

/**
 * What the services still refuse (a name too long, a password too short) is named by its field
 * (`password: ...`); from the CLI it is the option's name that says what to fix.
 */
async function namingOptions(options: Record<string, string>, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    const m = err instanceof GatewayError ? /^(\w+): (.*)$/s.exec(err.message) : null;
    const option = m ? options[m[1]!] : undefined;
    if (!m || !option) throw err;
    throw new Error(`option '${option}': ${m[2]}`);
  }
}

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
  .addOption(
    new Option('-r, --role <role>', 'user | admin | root').choices(['user', 'admin', 'root']).default('user'),
  )
  .action(async (o: { username: string; password: string; role: 'user' | 'admin' | 'root' }) => {
    const role = { user: Role.user, admin: Role.admin, root: Role.root }[o.role];
    const options = { username: '--username', password: '--password', role: '--role' };
    await namingOptions(options, () =>
      withServices(async (s) => {
        await s.users.bootstrapRoot(s.config.auth.root_password);
        const root = (await s.repos.users.byUsername('root')) ?? (await s.repos.users.byId(1));
        if (!root) throw new Error('no root user to act as');
        const created = await s.users.create(
          { ...root, role: Role.root },
          { username: o.username, password: o.password, role },
        );
        process.stdout.write(`created user ${created.username} (id ${created.id}, role ${o.role})\n`);
      }),
    );
  });

const key = program.command('key').description('manage API keys');
key
  .command('create')
  .requiredOption('-u, --username <name>', 'owner of the key')
  .option('-n, --name <name>', 'key name', 'cli')
  .option('--quota <usd>', 'spend limit in USD', usd)
  .option('--models <list>', 'comma-separated model allow-list')
  .option('--rpm <n>', 'requests per minute', positiveInt)
  .action(async (o: { username: string; name: string; quota?: number; models?: string; rpm?: number }) => {
    const options = {
      name: '--name',
      quota_limit: '--quota',
      allowed_models: '--models',
      rpm_limit: '--rpm',
    };
    await namingOptions(options, () =>
      withServices(async (s) => {
        const owner = await s.repos.users.byUsername(o.username);
        if (!owner) throw new Error(`no user named ${o.username}`);
        const { secret, row } = await s.apiKeys.create(owner, {
          name: o.name,
          quota_limit: o.quota ?? null,
          allowed_models: o.models ? o.models.split(',') : null,
          rpm_limit: o.rpm ?? null,
        });
        process.stdout.write(`created API key ${row.id} for ${owner.username}:\n${secret}\n`);
      }),
    );
  });

program.parseAsync().catch((err: unknown) => {
  process.stderr.write(`${err instanceof ConfigError ? err.message : `error: ${(err as Error).message}`}\n`);
  process.exit(err instanceof ConfigError ? 2 : 1);
});
