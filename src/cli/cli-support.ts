import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Role } from '../access/roles.js';
import { loadConfig } from '../config/load-config.js';
import { GatewayError } from '../gateway/errors.js';
import { createServices, type Services } from '../services.js';
import { isPostgresUrl, sqliteFile } from '../store/database.js';
import type { UserRow } from '../store/users-repo.js';

/**
 * What the services and the admin API's schemas refuse is named by its field
 * (`password: ...`, `allowed_models.0: ...`); from the CLI it is the option's name that says
 * what to fix (`option '--models': item 1: ...`). `options` maps fields to option names.
 */
export async function namingOptions(options: Record<string, string>, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    const m =
      err instanceof GatewayError ? /^(\w+)((?:\.\w+|\[\d+\]|\["[^"]*"\])*): (.*)$/s.exec(err.message) : null;
    const option = m ? options[m[1]!] : undefined;
    if (!m || !option) throw err;
    // A comma list's items are numbered from 1, as a reader counts them.
    const index = /^(?:\.(\d+)|\[(\d+)\])$/.exec(m[2]!);
    const where = index ? `item ${Number(index[1] ?? index[2]) + 1}: ` : m[2] ? `${m[1]}${m[2]}: ` : '';
    throw new Error(`option '${option}': ${where}${m[3]}`);
  }
}

/** For `withServices`: the command adds something, so it may make the database (migrate, add). */
export const CREATES = { creates: true };

/**
 * Runs `fn` on the database the configuration names. A SQLite file that does not exist yet is
 * created only by a command that adds something (`creates`), as the gateway's first start would,
 * with a note saying where; any other command (a listing, a change to what is there) stops with
 * one line instead: run without the gateway's DATABASE_URL, it made an empty `./data/modelgate.db`
 * and answered from that.
 */
export async function withServices<T>(
  fn: (s: Services) => Promise<T>,
  opts: { creates?: boolean } = {},
): Promise<T> {
  const config = loadConfig();
  const url = config.database.url;
  const file = isPostgresUrl(url) ? undefined : sqliteFile(url);
  const missing = file !== undefined && file !== ':memory:' && !existsSync(file) ? resolve(file) : undefined;
  if (missing && !opts.creates)
    throw new Error(
      `no database at ${missing}: the gateway creates it at its first start; run this with the gateway's DATABASE_URL (or MODELGATE_CONFIG)`,
    );
  // A one-off command lists no upstream's models at start (a down upstream would hold every
  // command for seconds); `channel add`, `update` and `refresh` list the one they change.
  const services = await createServices(config, undefined, { discoverAtStart: false });
  if (missing)
    process.stderr.write(
      `note: created a new database at ${missing}; a gateway sees it only if it runs with the same DATABASE_URL (or MODELGATE_CONFIG)\n`,
    );
  try {
    return await fn(services);
  } finally {
    await services.close();
  }
}

/**
 * What a database that was migrated but never started lacks, and how it gets it: said by
 * `migrate` and by every command that acts as root, so whoever ran `migrate` first (as a deploy
 * step or the README's command list does) is told what to run next, not just what is missing.
 */
export const NO_ROOT_YET =
  'no root user yet: the first start (modelgate serve) creates it and prints its password, as does modelgate user create';

/** The root user, or undefined on a database that no start or `user create` has given one. */
export async function findRoot(s: Services): Promise<UserRow | undefined> {
  return (await s.repos.users.byUsername('root')) ?? (await s.repos.users.byId(1));
}

/** The CLI acts as root: whoever runs it can read the database anyway. */
export async function rootActor(s: Services): Promise<UserRow> {
  const root = await findRoot(s);
  if (!root) throw new Error(NO_ROOT_YET);
  return { ...root, role: Role.root };
}

/** Left-aligned columns, two spaces apart; the last column is not padded. */
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '))
    .join('\n')
    .concat('\n');
}

/** `a, b, c` up to `max` names, then how many more. */
export function someOf(names: string[], max = 10): string {
  const shown = names.slice(0, max).join(', ');
  return names.length > max ? `${shown}, and ${names.length - max} more` : shown;
}
