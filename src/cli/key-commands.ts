import type { Command } from 'commander';
import type { PublicKey } from '../access/api-keys.js';
import { KeyStatus } from '../access/roles.js';
import { CreateKey } from '../http/api/key-routes.js';
import { checkBody } from '../http/validation.js';
import { namingOptions, rootActor, table, withServices } from './cli-support.js';
import { commaList, expiresAt, positiveInt, usd } from './option-parsers.js';

const iso = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString().replace('.000Z', 'Z');

const STATUS_NAMES: Record<number, string> = {
  [KeyStatus.enabled]: 'enabled',
  [KeyStatus.disabled]: 'disabled',
  [KeyStatus.expired]: 'expired',
  [KeyStatus.exhausted]: 'exhausted',
};

interface CreateOptions {
  username: string;
  name: string;
  quota?: number;
  models?: string[];
  rpm?: number;
  tpm?: number;
  expires?: number;
}

/** `modelgate key create | list | revoke`: the admin API's key service, acting as root. */
export function registerKeyCommands(program: Command): void {
  const key = program.command('key').description('manage API keys');
  key
    .command('create')
    .description('create an API key and print its secret (shown this once)')
    .requiredOption('-u, --username <name>', 'owner of the key')
    .option('-n, --name <name>', 'key name', 'cli')
    .option('--quota <usd>', 'spend limit in USD', usd)
    .option('--models <list>', 'comma-separated model allow-list (entries may end in *)', commaList)
    .option('--rpm <n>', 'requests per minute', positiveInt)
    .option('--tpm <n>', 'tokens per minute', positiveInt)
    .option(
      '--expires <when>',
      'ISO date or time (2027-01-31, 2027-01-31T18:00Z), or from now: 12h, 30d, 8w',
      (v) => expiresAt(v),
    )
    .action(async (o: CreateOptions) => {
      const body = {
        name: o.name,
        quota_limit: o.quota ?? null,
        allowed_models: o.models ?? null,
        rpm_limit: o.rpm ?? null,
        tpm_limit: o.tpm ?? null,
        expires_time: o.expires ?? null,
      };
      const options = {
        name: '--name',
        quota_limit: '--quota',
        allowed_models: '--models',
        rpm_limit: '--rpm',
        tpm_limit: '--tpm',
        expires_time: '--expires',
      };
      await namingOptions(options, async () => {
        checkBody(CreateKey, body);
        await withServices(async (s) => {
          // Root first: `key create -u root` on a database never started answered "no user named
          // root", as if root were a name to pick, where it is the start that has not happened.
          const actor = await rootActor(s);
          const owner = await s.repos.users.byUsername(o.username);
          if (!owner) throw new Error(`no user named ${o.username}`);
          // Made by the operator, as root: a key for another user holds its limits, as one an
          // admin makes for them does (src/access/key-hold.ts).
          const { secret, row } = await s.apiKeys.create(actor, { ...body, user_id: owner.id });
          const expires = row.expires_time === null ? '' : `, expires ${iso(row.expires_time)}`;
          process.stdout.write(`created API key ${row.id} for ${owner.username}${expires}:\n${secret}\n`);
        });
      });
    });

  key
    .command('list')
    .description('list API keys (never their secrets)')
    .option('-u, --username <name>', 'only the keys of this user')
    .action(async (o: { username?: string }) => {
      await withServices(async (s) => {
        const actor = await rootActor(s);
        const owner = o.username === undefined ? undefined : await s.repos.users.byUsername(o.username);
        if (o.username !== undefined && !owner) throw new Error(`no user named ${o.username}`);
        const keys: PublicKey[] = [];
        for (;;) {
          const { rows, total } = await s.apiKeys.list(actor, owner?.id, keys.length, 100);
          keys.push(...(await s.apiKeys.publicKeys(rows)));
          if (rows.length === 0 || keys.length >= total) break;
        }
        if (keys.length === 0) {
          process.stdout.write(`no API keys${owner ? ` of ${owner.username}` : ''}\n`);
          return;
        }
        const names = new Map<number, string>();
        for (const id of new Set(keys.map((k) => k.user_id)))
          names.set(id, (await s.repos.users.byId(id))?.username ?? `#${id}`);
        const rows = keys.map((k) => [
          String(k.id),
          k.name,
          names.get(k.user_id)!,
          k.key_prefix,
          STATUS_NAMES[k.status] ?? String(k.status),
          `${k.quota_used}${k.quota_limit === null ? '' : ` / ${k.quota_limit}`}`,
          k.expires_time === null ? '-' : iso(k.expires_time),
          k.rpm_limit === null ? '-' : String(k.rpm_limit),
          k.tpm_limit === null ? '-' : String(k.tpm_limit),
          k.allowed_models === null ? '*' : k.allowed_models.join(','),
        ]);
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
        process.stdout.write(table([head, ...rows]));
      });
    });

  key
    .command('revoke')
    .description('delete an API key: requests with it are refused from then on (as DELETE /api/key/:id)')
    .argument('<id>', 'key id (from key list)', positiveInt)
    .action(async (id: number) => {
      await withServices(async (s) => {
        const actor = await rootActor(s);
        const row = await s.apiKeys.owned(actor, id);
        await s.apiKeys.delete(actor, id);
        const owner = (await s.repos.users.byId(row.user_id))?.username ?? `user ${row.user_id}`;
        process.stdout.write(`revoked API key ${id} (${row.name}) of ${owner}\n`);
      });
    });
}
