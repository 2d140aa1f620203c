import { readFileSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { GatewayError } from '../gateway/errors.js';
import type { ChannelInput, PublicChannel } from '../gateway/registry/channel.js';
import { CHANNEL_KINDS } from '../gateway/registry/channel-kinds.js';
import {
  type ChannelChange,
  type ChannelPatch,
  type ChannelService,
  StaleRevisionError,
} from '../gateway/registry/channel-service.js';
import { CreateChannel, UpdateChannel } from '../http/api/channel-routes.js';
import { checkBody } from '../http/validation.js';
import type { Services } from '../services.js';
import { INT32_MAX } from '../store/column-bounds.js';
import { CREATES, namingOptions, someOf, table, withServices } from './cli-support.js';
import { commaList, pricingJson, wholeNumber } from './option-parsers.js';

const out = (line: string) => process.stdout.write(`${line}\n`);

/** The option each field of the admin API's channel body is set with. */
const OPTIONS = {
  name: '--name',
  kind: '--kind',
  base_url: '--base-url',
  keys: '--keys',
  models: '--models',
  priority: '--priority',
  weight: '--weight',
  // The only setting the command line sets: a `settings.pricing[...]` error is about it.
  settings: '--pricing',
};

interface ChannelOptions {
  name?: string;
  kind?: string;
  baseUrl?: string;
  keys?: string;
  models?: string[];
  priority?: number;
  weight?: number;
  pricing?: Record<string, unknown>;
}

/** `modelgate channel ...`: the admin API's channel service (`/api/channel`), from a shell. */
export function registerChannelCommands(program: Command): void {
  const channel = program
    .command('channel')
    .description('manage upstreams (channels); a running gateway sees changes within a second');

  channel
    .command('list')
    .description('list upstreams (keys are counted, never shown)')
    .action(() => withServices(list));

  withChannelFields(
    channel.command('add').description('add an upstream, then list its models as the admin API does'),
    true,
  ).action(async (o: ChannelOptions) => {
    const body = channelBody(o);
    await namingOptions(OPTIONS, async () => {
      checkBody(CreateChannel, body);
      await withServices(async (s) => {
        // --name and --kind are mandatory options.
        const change = await s.registry.channels.create(body as ChannelInput);
        const c = change.channel;
        const keys = `${c.keys.length} key${c.keys.length === 1 ? '' : 's'}`;
        out(`added channel ${c.name} (id ${c.id}, ${c.kind} at ${c.base_url}, ${keys})`);
        await reportModels(s, change);
      }, CREATES);
    });
  });

  withChannelFields(
    channel
      .command('update')
      .description('change the options given, keeping the others')
      .argument('<channel>', 'id or name'),
    false,
  ).action(async (ref: string, o: ChannelOptions) => {
    const given = channelBody(o);
    if (Object.keys(given).length === 0)
      throw new Error(`nothing to change: give one or more of ${Object.values(OPTIONS).join(', ')}`);
    await namingOptions(OPTIONS, () =>
      withServices(async (s) => {
        const c = await findChannel(s, ref);
        const change = await updateChannel(s.registry.channels, c, given);
        const changed = Object.keys(given).map((k) => (k === 'settings' ? 'pricing' : k));
        out(`updated channel ${change.channel.name} (id ${c.id}): ${changed.join(', ')}`);
        sourceNote(c);
        await reportModels(s, change);
      }),
    );
  });

  channel
    .command('test')
    .description('send a tiny request through the upstream, as POST /api/channel/:id/test does')
    .argument('<channel>', 'id or name')
    .option('--model <id>', 'model to test (default: one the channel serves)')
    .action((ref: string, o: { model?: string }) =>
      namingOptions({ model: '--model' }, () =>
        withServices(async (s) => {
          const c = await findChannel(s, ref);
          await readModelsIfNeverRead(s, c);
          const r = await s.registry.channels.test(c.id, o.model);
          if (!r.success) {
            // As the console shows it: the model as sent when mapped, and the kind and status.
            const sent = r.upstream_model !== r.model ? ` (sent as ${r.upstream_model})` : '';
            const how = [r.upstream_status !== null ? `HTTP ${r.upstream_status}` : '', r.error_kind ?? '']
              .filter(Boolean)
              .join(', ');
            throw new Error(
              `channel ${c.name} failed with ${r.model}${sent} after ${r.latency_ms} ms${how ? ` (${how})` : ''}: ${r.message}`,
            );
          }
          out(
            `channel ${c.name} works: ${r.model} answered in ${r.latency_ms} ms: ${JSON.stringify(r.message)}`,
          );
        }),
      ),
    );

  channel
    .command('refresh')
    .description(
      "list the upstream's models again (GET /models), as POST /api/channel/:id/models/refresh does",
    )
    .argument('<channel>', 'id or name')
    .action((ref: string) =>
      withServices(async (s) => {
        const c = await findChannel(s, ref);
        const found = await s.registry.channels.refreshModels(c.id);
        out(
          `${c.name} lists ${found.length} model${found.length === 1 ? '' : 's'}${found.length ? `: ${someOf(found)}` : ''}`,
        );
        await reportModels(s, { channel: c });
      }),
    );

  channel
    .command('remove')
    .description('delete an upstream')
    .argument('<channel>', 'id or name')
    .action((ref: string) =>
      withServices(async (s) => {
        const c = await findChannel(s, ref);
        await s.registry.channels.delete(c.id);
        out(`removed channel ${c.name} (id ${c.id})`);
        sourceNote(c);
      }),
    );

  for (const [verb, status] of [
    ['enable', 1],
    ['disable', 2],
  ] as const)
    channel
      .command(verb)
      .description(`${verb} an upstream (status ${status})`)
      .argument('<channel>', 'id or name')
      .action((ref: string) =>
        withServices(async (s) => {
          const c = await findChannel(s, ref);
          const change = await s.registry.channels.update(c.id, { status });
          out(`${verb}d channel ${c.name} (id ${c.id})`);
          sourceNote(c);
          if (status === 1) await reportModels(s, change);
        }),
      );
}

function withChannelFields(cmd: Command, adding: boolean): Command {
  const kind = new Option('--kind <kind>', 'upstream wire format').choices(CHANNEL_KINDS);
  // `update` keeps what is not given: its help names no defaults, and says what '' clears.
  const unless = (added: string, updated: string) => (adding ? added : updated);
  return cmd
    .addOption(new Option('--name <name>', 'unique name').makeOptionMandatory(adding))
    .addOption(adding ? kind.makeOptionMandatory() : kind)
    .option(
      '--base-url <url>',
      `API base URL; openai-compatible: the one ending in /v1${unless(" (default: the kind's)", '')}`,
    )
    .option(
      '--keys <list>',
      `comma-separated API keys, or - to read them from standard input${unless(' (none: no auth)', " ('': no auth)")}`,
    )
    .option(
      '--models <list>',
      `comma-separated models it serves${unless(' (none: what its GET /models lists)', " ('': what its GET /models lists)")}`,
      commaList,
    )
    .option('--priority <n>', `higher is tried first${unless(' (default 0)', '')}`, wholeNumber)
    .option(
      '--weight <n>',
      `share among channels of equal priority${unless(' (default 1)', '')}`,
      wholeNumber,
    )
    .option(
      '--pricing <json>',
      `what this upstream charges, over the models' own prices: '{"<model id>": {"prompt": "0.000001", "completion": "0.000002"}}' (USD per token, request, image); '{}' for none`,
      pricingJson,
    );
}

/** Writes of `update --pricing` before it gives up, each lost to another change of the channel. */
const PRICING_ATTEMPTS = 5;

/**
 * Writes the options given over the channel read (`c`). The prices replace the channel's, beside
 * the settings it has (headers, rpm, ...), so they are written only over the settings they were
 * laid on (the revision read), or a change made meanwhile would be undone. When one was (another
 * administrator, the console, a gateway start), the channel is read again and the prices laid
 * over it as it is now; after a few such losses in a row, an error and nothing written.
 */
async function updateChannel(
  channels: ChannelService,
  c: PublicChannel,
  given: ChannelPatch,
): Promise<ChannelChange> {
  if (!given.settings) {
    checkBody(UpdateChannel, { id: c.id, ...given });
    return channels.update(c.id, given);
  }
  let read = c;
  for (let attempt = 1; ; attempt++) {
    const patch = { ...given, settings: { ...read.settings, ...given.settings } };
    checkBody(UpdateChannel, { id: read.id, revision: read.revision, ...patch });
    try {
      return await channels.update(read.id, patch, read.revision);
    } catch (err) {
      if (!(err instanceof StaleRevisionError)) throw err;
      if (attempt >= PRICING_ATTEMPTS)
        throw new Error(
          `channel ${c.name} (id ${c.id}) was changed by others ${attempt} times while its prices were being set: nothing was written; try again`,
        );
    }
    read = await channels.get(read.id);
  }
}

/** The admin API's body for the options given (absent ones left out). */
function channelBody(o: ChannelOptions): ChannelPatch {
  // From standard input, so a key stays out of the shell history and the process list.
  const keys =
    o.keys === '-'
      ? readFileSync(0, 'utf8')
          .split(/[\s,]+/)
          .filter(Boolean)
      : o.keys;
  const body: ChannelPatch = {
    name: o.name,
    kind: o.kind,
    base_url: o.baseUrl,
    keys: typeof keys === 'string' ? commaList(keys) : keys,
    models: o.models,
    priority: o.priority,
    weight: o.weight,
    settings: o.pricing && { pricing: o.pricing },
  };
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}

/**
 * An enabled channel that names no models and serves none had its list never read (the upstream
 * was down when it was added, or was fixed since): read it now, as a gateway start would, so the
 * test has a model to try, and say why when it cannot be read.
 */
async function readModelsIfNeverRead(s: Services, c: PublicChannel): Promise<void> {
  const channels = s.registry.channels;
  if (c.status !== 1 || c.models.length > 0 || channels.servedModels(c.id).length > 0) return;
  try {
    await channels.refreshModels(c.id);
  } catch (err) {
    throw new Error(`channel ${c.name} serves no models: listing them failed: ${(err as Error).message}`);
  }
}

/** A plain number is an id first (a channel may be named `7`), else a name. */
async function findChannel(s: Services, ref: string): Promise<PublicChannel> {
  const channels = s.registry.channels;
  if (/^\d+$/.test(ref) && Number(ref) >= 1 && Number(ref) <= INT32_MAX) {
    const byId = await channels.get(Number(ref)).catch((err: unknown) => {
      if (err instanceof GatewayError && err.status === 404) return undefined;
      throw err;
    });
    if (byId) return byId;
  }
  const named = await channels.byName(ref);
  if (!named) throw new Error(`no channel with id or name ${ref} (see modelgate channel list)`);
  return named;
}

async function list(s: Services): Promise<void> {
  const channels = s.registry.channels;
  const all: PublicChannel[] = [];
  for (;;) {
    const { rows, total } = await channels.list(all.length, 100);
    all.push(...rows);
    if (rows.length === 0 || all.length >= total) break;
  }
  if (all.length === 0) {
    out(
      'no channels yet: add one with modelgate channel add --name NAME --kind KIND --base-url URL --keys KEY',
    );
    return;
  }
  const head = ['ID', 'NAME', 'KIND', 'STATUS', 'PRIORITY', 'WEIGHT', 'MODELS', 'KEYS', 'SOURCE', 'BASE_URL'];
  const rows = all.map((c) => [
    String(c.id),
    c.name,
    c.kind,
    c.status === 1 ? 'enabled' : 'disabled',
    String(c.priority),
    String(c.weight),
    String(channels.servedModels(c.id).length),
    String(c.keys.length),
    c.source,
    c.base_url,
  ]);
  process.stdout.write(table([head, ...rows]));
}

/**
 * Waits for the model listing the change started (the admin API answers without waiting and
 * logs a failure), then says what the channel serves and how to check it.
 */
async function reportModels(s: Services, change: ChannelChange): Promise<void> {
  const c = change.channel;
  const outcome = change.listing ? await change.listing : undefined;
  const failed = outcome !== undefined && 'error' in outcome;
  if (failed) process.stderr.write(`warning: listing the models of ${c.name} failed: ${outcome.error}\n`);
  const served = s.registry.channels.servedModels(c.id);
  if (served.length > 0) {
    out(`${c.name} serves ${served.length} model${served.length === 1 ? '' : 's'}: ${someOf(served)}`);
    out(`check it with: modelgate channel test ${c.name}`);
  } else if (failed) {
    out(
      `${c.name} serves no models until its model list can be read: fix it with modelgate channel update ${c.name} --base-url URL (or --keys KEYS), or name its models with --models`,
    );
  } else {
    out(
      `${c.name} serves no models yet: name them with modelgate channel update ${c.name} --models A,B, or list what the upstream serves with modelgate channel refresh ${c.name}`,
    );
  }
}

/** Channels from the config file or the environment are imported again at every start. */
function sourceNote(c: PublicChannel): void {
  if (c.source === 'api') return;
  const where = c.source === 'env' ? 'the environment' : 'the config file';
  out(
    `note: ${c.name} is declared in ${where}: the next start (of the gateway or any modelgate command) restores it from there`,
  );
}
