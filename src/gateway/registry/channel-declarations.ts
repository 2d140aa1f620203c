import type { FastifyBaseLogger } from 'fastify';
import type { ChannelDeclaration } from '../../config/schema.js';
import type { NewChannelRow } from '../../store/channels-repo.js';
import { validateChannel } from './channel.js';
import type { RegistryState } from './registry-state.js';

/**
 * The config file's `channels:` and the environment shortcuts (`env-<p>`) are the source of
 * truth for the channels they declare (docs/configuration.md, "Upstreams (channels)"):
 *
 * - each is upserted by name with source `config` (`env` for an `env-` name), its revision
 *   moved on; unchanged ones write nothing, so restarts are no-ops. A console channel (source
 *   `api`) of the same name is taken over: the file wins, and the row is the file's from then on.
 * - with `removeUndeclared` (`modelgate serve`, never the CLI's one-off commands, which may run
 *   with a partial environment), a `config`/`env` channel the declarations no longer name is
 *   deleted. Console channels are never touched.
 *
 * Every write is one statement that is safe to run twice at once (upsert by name, delete by
 * source and name), so instances starting together on one database do not trip on each other.
 */
export async function importDeclarations(
  state: RegistryState,
  decls: ChannelDeclaration[],
  opts: { removeUndeclared: boolean; log?: FastifyBaseLogger },
): Promise<void> {
  const repo = state.repos.channels;
  // All checked before anything is written: a bad declaration changes nothing.
  const rows = decls.map((d) => {
    const row = validateChannel(d);
    return { ...row, source: row.name.startsWith('env-') ? 'env' : 'config' };
  });
  let wrote = false;
  // Rows another instance wrote after this one loaded (instances starting together): nothing to
  // write, but this instance's catalog must hold them before it serves, not a poll later.
  let behind = false;
  for (const row of rows) {
    const existing = await repo.byName(row.name);
    if (existing && sameRow(existing, row)) {
      if (state.channel(existing.id)?.revision !== Number(existing.revision)) behind = true;
      continue;
    }
    if (existing?.source === 'api')
      opts.log?.warn(
        { channel: row.name, id: existing.id },
        `channel ${row.name} was created in the console and is now declared with the same name: the config file owns it from now on`,
      );
    const t = now();
    await repo.upsertByName({ ...row, created_time: t, updated_time: t } satisfies NewChannelRow);
    wrote = true;
  }
  if (opts.removeUndeclared && (await removeUndeclared(state, rows, opts.log))) wrote = true;
  if (wrote) await state.changed();
  else if (behind) await state.reload();
}

async function removeUndeclared(
  state: RegistryState,
  declared: Array<{ name: string }>,
  log?: FastifyBaseLogger,
): Promise<boolean> {
  const repo = state.repos.channels;
  const names = declared.map((r) => r.name);
  let changed = false;
  if (!(await repo.declarationsOwned())) {
    // The first start under this rule on this database. Before it, a channel removed from the
    // file stayed (as documented then), and may be relied on: what the declarations no longer
    // name is handed to the console rather than deleted. Not a schema migration: it needs the
    // configuration, which migrations do not see.
    for (const c of await repo.adoptUndeclared(names, now())) {
      log?.warn(
        { channel: c.name, id: c.id },
        `channel ${c.name} was imported from the config file or environment, which no longer declare it: kept as a console channel (delete it in the console if it is not wanted)`,
      );
      changed = true;
    }
    await repo.setDeclarationsOwned();
  }
  // Their stored listings go with them (deleteUndeclared).
  for (const c of await repo.deleteUndeclared(names)) {
    log?.warn(
      { channel: c.name, id: c.id },
      `channel ${c.name} deleted: the config file or environment no longer declares it`,
    );
    changed = true;
  }
  return changed;
}

const now = () => Math.floor(Date.now() / 1000);

function sameRow(existing: Record<string, unknown>, row: Record<string, unknown>): boolean {
  return Object.entries(row).every(([k, v]) => existing[k] === v);
}
