#!/usr/bin/env -S node --min-semi-space-size=8 --no-memory-reducer --no-allocation-site-pretenuring
import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { Role } from '../access/roles.js';
import { ConfigError } from '../config/load-config.js';
import { announceRoot, serve } from '../main.js';
import { registerChannelCommands } from './channel-commands.js';
import { CREATES, findRoot, NO_ROOT_YET, namingOptions, rootActor, withServices } from './cli-support.js';
import { registerKeyCommands } from './key-commands.js';

const program = new Command('modelgate').description('AI model gateway and application catalog');

program
  .command('serve')
  .description('start the gateway (migrates the database first)')
  .action(() => serve());

program
  .command('migrate')
  .description('apply pending database migrations and exit')
  .action(async () => {
    const { applied, twins, root } = await withServices(
      async (s) => ({
        applied: s.appliedMigrations.length,
        twins: await s.users.duplicatesWarnings(),
        root: await findRoot(s),
      }),
      CREATES,
    );
    // "up to date" alone hid that a new database got its whole schema now.
    process.stdout.write(
      applied > 0 ? `applied ${applied} migration${applied === 1 ? '' : 's'}\n` : 'database is up to date\n',
    );
    for (const t of twins) process.stderr.write(`warning: ${t.message}\n`);
    // Root is made where its password can be shown (a start, or user create), not here: an
    // init container's log is where no one would look for it. Said, so `key create -u root`
    // right after does not come as a surprise.
    if (!root) process.stderr.write(`note: ${NO_ROOT_YET}\n`);
  });

const user = program.command('user').description('manage users');
user
  .command('create')
  .description('create a user, as POST /api/user does (prints the root password on a new database)')
  .requiredOption('-u, --username <name>', 'login name')
  .requiredOption(
    '-p, --password <password>',
    '8 to 256 characters, or - to read its first line from standard input (a pipe or a file: a terminal shows it as typed)',
  )
  .addOption(
    new Option('-r, --role <role>', 'user | admin | root').choices(['user', 'admin', 'root']).default('user'),
  )
  .action(async (o: { username: string; password: string; role: 'user' | 'admin' | 'root' }) => {
    const role = { user: Role.user, admin: Role.admin, root: Role.root }[o.role];
    const options = { username: '--username', password: '--password', role: '--role' };
    await namingOptions(options, () =>
      withServices(async (s) => {
        // On a new database this makes root first: its password, generated when
        // MODELGATE_ROOT_PASSWORD is unset, is shown now or never.
        announceRoot(await s.users.bootstrapRoot(s.config.auth.root_password));
        const created = await s.users.create(await rootActor(s), {
          username: o.username,
          password: o.password === '-' ? stdinLine() : o.password,
          role,
        });
        process.stdout.write(`created user ${created.username} (id ${created.id}, role ${o.role})\n`);
      }, CREATES),
    );
  });

/**
 * The first line of standard input, without its line break: a password given this way stays out
 * of the shell history and the process list (`-p -`, as `channel add --keys -`).
 */
function stdinLine(): string {
  return readFileSync(0, 'utf8').split(/\r?\n/, 1)[0] ?? '';
}

registerKeyCommands(program);
registerChannelCommands(program);

program.parseAsync().catch((err: unknown) => {
  process.stderr.write(`${err instanceof ConfigError ? err.message : `error: ${(err as Error).message}`}\n`);
  process.exit(err instanceof ConfigError ? 2 : 1);
});
