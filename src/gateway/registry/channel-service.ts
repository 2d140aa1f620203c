import type { FastifyBaseLogger } from 'fastify';
import type { ChannelRow } from '../../store/channels-repo.js';
import { badRequest, conflict, GatewayError, notFound, UpstreamError } from '../errors.js';
import type { BodyLimits, UpstreamClient } from '../upstream/upstream-client.js';
import type { DiscoveredModel } from './catalog.js';
import {
  type Channel,
  type ChannelInput,
  type ChannelListing,
  explainChannelFailure,
  listingColumns,
  listingOfRow,
  mergeKeys,
  mergeSettings,
  type PublicChannel,
  parseChannelRow,
  toPublicChannel,
  upstreamHost,
  validateChannel,
} from './channel.js';
import { type ChannelTestResult, testChannel } from './channel-test.js';
import { canDiscover, discoverModels } from './model-discovery.js';
import type { RegistryState } from './registry-state.js';

export type ChannelPatch = Partial<ChannelInput>;

/**
 * An update that sends a channel to another host (its base_url, or its kind's default) must send
 * its credentials again, in full: the stored keys and header values are never sent to a server
 * they were not given for, so whoever may edit a channel, seeing only masked keys, cannot point it
 * at a server of theirs and read them there.
 */
function movedCredentials(current: Channel, merged: ChannelInput, patch: ChannelPatch): void {
  if (upstreamHost(merged) === upstreamHost(current)) return;
  const storedKeys = current.keys.filter((k) => merged.keys?.includes(k));
  const sentKeys = (patch.keys ?? []).map((k) => k.trim());
  if (storedKeys.some((k) => !sentKeys.includes(k)))
    throw badRequest(
      `keys: the upstream moves to ${upstreamHost(merged)}: send its keys again (stored keys are not sent to another host)`,
      'keys',
    );
  const sentHeaders = (patch.settings?.headers ?? {}) as Record<string, unknown>;
  for (const [name, value] of Object.entries(merged.settings?.headers ?? {}) as Array<[string, unknown]>) {
    if (current.settings.headers?.[name] === value && sentHeaders[name] !== value)
      throw badRequest(
        `settings.headers.${name}: the upstream moves to ${upstreamHost(merged)}: send its value again`,
        `settings.headers.${name}`,
      );
  }
}

/** How a listing of a channel's models ended: the names found, or why it failed (with the setup hint). */
export type ListingOutcome = { models: string[] } | { error: string };

/**
 * A created or changed channel, and the listing of its models the change started (undefined when
 * none was due: models listed, disabled, a kind that cannot list, `gateway.discover_models: false`).
 * The admin API answers without waiting for it; the CLI waits and prints how it ended.
 */
export interface ChannelChange {
  channel: PublicChannel;
  listing?: Promise<ListingOutcome>;
}

/**
 * The 409 of an update whose `revision` precondition no longer holds (nothing was written): a
 * caller that can redo its change over the channel as it is now (the CLI's `--pricing`) reads
 * it again and does.
 */
export class StaleRevisionError extends GatewayError {
  constructor(message: string) {
    super(409, message);
  }
}

/**
 * The 404 of a listing whose channel was deleted before it could store what it found (nothing
 * was stored): the admin's refresh answers it, a background listing ends with it unlogged.
 */
export class ChannelDeletedError extends GatewayError {
  constructor(id: number) {
    super(404, `channel ${id} was deleted while its models were listed`);
  }
}

/**
 * A listing of a channel's models that failed: the upstream's failure (its message with the setup
 * hint), and the outcome stored on the channel for it, which the admin's refresh answers in its
 * `data` as `GET /api/channel` answers it in `listing`.
 */
export class ListingFailedError extends UpstreamError {
  constructor(
    err: UpstreamError,
    readonly listing: ChannelListing,
  ) {
    super(err.kind, err.message, {
      upstreamStatus: err.upstreamStatus,
      retryAfterMs: err.retryAfterMs,
      cause: err.cause,
    });
  }
}

/**
 * The 404 of a channel that is not stored (never was, or deleted): a round of discovery, which
 * works from the channels it loaded before, meets it for a channel deleted since and skips it.
 */
class ChannelNotFoundError extends GatewayError {
  constructor(id: number) {
    super(404, `channel ${id} not found`);
  }
}

const now = () => Math.floor(Date.now() / 1000);

/** Writes of one update before it gives up with a 409, each lost to another write of the row. */
const UPDATE_ATTEMPTS = 5;

/**
 * Admin management of upstream channels, discovery and the test action (the config import is
 * channel-declarations.ts).
 */
export class ChannelService {
  constructor(
    private readonly state: RegistryState,
    private readonly client: UpstreamClient,
    private readonly opts: {
      timeoutMs: number;
      limits?: Partial<BodyLimits>;
      log?: FastifyBaseLogger;
      /** `gateway.discover_models`: false lists models only on an explicit refresh. */
      discover?: boolean;
    },
  ) {}

  /** Listings of models that creates and updates started in the background, until they end. */
  private readonly listings = new Set<{ listing: Promise<ListingOutcome>; stop: AbortController }>();
  private closed = false;

  async list(offset: number, limit: number): Promise<{ rows: PublicChannel[]; total: number }> {
    const { rows, total } = await this.state.repos.channels.list(offset, limit);
    return { rows: rows.map(publicOf), total };
  }

  async get(id: number): Promise<PublicChannel> {
    const row = await this.state.repos.channels.byId(id);
    if (!row) throw new ChannelNotFoundError(id);
    return publicOf(row);
  }

  async byName(name: string): Promise<PublicChannel | undefined> {
    const row = await this.state.repos.channels.byName(name);
    return row && publicOf(row);
  }

  /** Model ids the channel serves, enabled or not (declared, discovered or its provider's own). */
  servedModels(id: number): string[] {
    return this.state.catalog.channelTargets(id).map((t) => t.model.id);
  }

  async create(input: ChannelInput): Promise<ChannelChange> {
    const row = validateChannel(input);
    if (await this.state.repos.channels.byName(row.name))
      throw conflict(`channel ${row.name} already exists`);
    const t = now();
    const created = await this.state.repos.channels
      .insert({ ...row, source: 'api', created_time: t, updated_time: t })
      .catch(async (err) => {
        // Lost a race with another create of the same name.
        if (await this.state.repos.channels.byName(row.name))
          throw conflict(`channel ${row.name} already exists`);
        throw err;
      });
    await this.state.changed();
    const channel = parseChannelRow(created);
    return { channel: publicOf(created), listing: this.refreshInBackground(channel) };
  }

  /**
   * Changes only the fields present; omitted or masked keys keep the stored ones. `revision`, when
   * given, must be the stored one, else 409 and nothing is written.
   */
  async update(id: number, patch: ChannelPatch, revision?: number): Promise<ChannelChange> {
    const { current, updated } = await this.writePatch(id, patch, revision);
    await this.state.changed();
    const after = parseChannelRow(updated);
    // A channel whose address, keys or model list changed (an operator fixing a base_url that
    // lacked /v1) lists its models again, as at creation: before, it kept serving the listing
    // of the old address, or nothing, until a refresh or a restart.
    const relist = DISCOVERY_FIELDS.some(
      (f) => JSON.stringify(discoveryView(current, f)) !== JSON.stringify(discoveryView(after, f)),
    );
    return { channel: publicOf(updated), listing: relist ? this.refreshInBackground(after) : undefined };
  }

  async delete(id: number): Promise<void> {
    // Its stored listing goes with it, and a listing still under way will not store one.
    if (!(await this.state.repos.channels.delete(id))) throw notFound(`channel ${id} not found`);
    await this.state.changed();
  }

  /**
   * Fetches the upstream's model list and stores it; returns the names found. A listing equal to
   * the stored one writes nothing, so the periodic refresh of an upstream that did not change
   * moves no version and reloads no other instance. This one still reloads: the stored listing
   * may be another write's (the listing a create started, another instance's) that it has not
   * loaded yet, and what a refresh found applies before it returns.
   *
   * Its outcome is stored on the channel (`GET /api/channel`'s `listing`, on every instance): the
   * number of models listed, or why it failed (a ListingFailedError carries it), or an empty
   * list kept from storing (`keepOnEmpty`). A listing `signal` cut (the gateway stopping) stores
   * none, and one whose channel was deleted meanwhile ends with ChannelDeletedError.
   */
  async refreshModels(
    id: number,
    signal?: AbortSignal,
    opts: { keepOnEmpty?: boolean } = {},
  ): Promise<string[]> {
    const channel = await this.stored(id);
    if (!canDiscover(channel)) throw badRequest(`a ${channel.kind} channel cannot list its models`);
    let found: DiscoveredModel[];
    try {
      found = await discoverModels(channel, this.client, { ...this.opts, signal });
    } catch (err) {
      // Cut by the gateway stopping: no outcome of the upstream's, nothing stored.
      if (signal?.aborted || !(err instanceof UpstreamError)) throw err;
      const failure = new UpstreamError(err.kind, explainChannelFailure(channel, err), {
        upstreamStatus: err.upstreamStatus,
        retryAfterMs: err.retryAfterMs,
        cause: err,
      });
      const listing = failed(failure.kind, failure.upstreamStatus ?? null, failure.message);
      await this.recordListing(id, listing);
      throw new ListingFailedError(failure, listing);
    }
    const json = JSON.stringify(found);
    const stored = await this.state.repos.channels.discoveredFor(id);
    // An empty answer where models were listed is more often an upstream's bad moment than every
    // model withdrawn: a round nobody asked for keeps the stored listing (an admin's refresh writes).
    if (opts.keepOnEmpty && found.length === 0 && stored !== undefined && stored !== '[]') {
      const message = `${channel.name} listed no models; kept the ${(JSON.parse(stored) as unknown[]).length} it listed before (refresh its models to clear them)`;
      await this.recordListing(id, { ...failed('empty', null, message), models: 0 });
      throw new Error(message);
    }
    if (stored !== json) {
      if (!(await this.state.repos.channels.setDiscovered(id, json))) throw new ChannelDeletedError(id);
      await this.recordListing(id, listed(found.length));
      await this.state.changed();
    } else {
      await this.recordListing(id, listed(found.length));
      await this.state.reload();
    }
    return found.map((f) => f.name);
  }

  /** Stores a listing's outcome on its channel; a channel deleted meanwhile stores none. */
  private async recordListing(id: number, listing: ChannelListing): Promise<void> {
    if (!(await this.state.repos.channels.setListing(id, listingColumns(listing))))
      throw new ChannelDeletedError(id);
  }

  /**
   * Discovers models of enabled channels that list none, in parallel; failures are logged (not
   * those of listings `signal` cut: the gateway is stopping) and keep the stored listing.
   */
  async discoverAll(signal?: AbortSignal): Promise<void> {
    const pending = this.state
      .allChannels()
      .filter((c) => c.status === 1 && c.models.length === 0 && canDiscover(c))
      .map((c) =>
        this.refreshModels(c.id, signal, { keepOnEmpty: true }).catch((err) => {
          if (!signal?.aborted) this.logDiscoveryFailure(c, err);
        }),
      );
    await Promise.all(pending);
  }

  async test(id: number, model?: string): Promise<ChannelTestResult> {
    const channel = await this.stored(id);
    const served = this.state.catalog.channelTargets(id);
    const chosen = model
      ? served.find((t) => t.model.id === model || t.upstreamModel === model)
      : (served.find((t) => t.model.source !== 'discovered') ?? served[0]);
    if (!chosen)
      throw badRequest(
        model
          ? `model: channel ${id} does not serve ${model}`
          : canDiscover(channel) && channel.models.length === 0
            ? `channel serves no models: its model list could not be read (fix base_url or keys, then refresh its models: Refresh in the console's Upstreams, or POST /api/channel/${id}/models/refresh), or list them in models`
            : 'channel serves no models',
        'model',
      );
    return testChannel(channel, chosen.model, chosen.upstreamModel, this.client, this.opts);
  }

  /**
   * Lays the patch over the stored row and writes it only over that row (compare-and-swap on its
   * revision). When another write came in between (a second admin, another instance), the patch
   * is laid again over the row as it is now, so neither change is lost; a delete in between is a
   * 404. Returns the row read and the row written.
   */
  private async writePatch(
    id: number,
    patch: ChannelPatch,
    revision: number | undefined,
  ): Promise<{ current: Channel; updated: ChannelRow }> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.stored(id);
      if (revision !== undefined && current.revision !== revision)
        throw new StaleRevisionError(
          `channel ${id} was changed after revision ${revision} (it is at ${current.revision}): nothing was written; read it again and redo the change`,
        );
      const keys = patch.keys === undefined ? current.keys : mergeKeys(patch.keys, current.keys);
      const settings =
        patch.settings === undefined ? current.settings : mergeSettings(patch.settings, current.settings);
      const merged: ChannelInput = { ...current, ...definedOnly(patch), keys, settings };
      movedCredentials(current, merged, patch);
      const row = validateChannel(merged, current.name);
      if (row.name !== current.name) {
        const other = await this.state.repos.channels.byName(row.name);
        if (other && other.id !== id) throw conflict(`channel ${row.name} already exists`);
      }
      const updated = await this.state.repos.channels.update(id, current.revision, {
        ...row,
        updated_time: now(),
      });
      if (updated) return { current, updated };
      if (attempt >= UPDATE_ATTEMPTS)
        throw conflict(
          `channel ${id} is being changed by others at the same time: nothing was written; try again`,
        );
    }
  }

  /**
   * At shutdown, after the HTTP server drained and before the database closes: the listings
   * creates and updates started in the background (the admin API answered without waiting for
   * them) are cut and waited for, so none writes to a closed database or holds an upstream
   * connection open. A channel left without its list is listed at the next start.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const l of this.listings) l.stop.abort();
    await Promise.all([...this.listings].map((l) => l.listing));
  }

  private refreshInBackground(c: Channel): Promise<ListingOutcome> | undefined {
    if (this.closed || this.opts.discover === false) return undefined;
    if (c.models.length > 0 || c.status !== 1 || !canDiscover(c)) return undefined;
    const stop = new AbortController();
    const listing = this.refreshModels(c.id, stop.signal).then(
      (models): ListingOutcome => ({ models }),
      (err: unknown): ListingOutcome => {
        if (stop.signal.aborted) return { error: 'the gateway stopped before the listing ended' };
        this.logDiscoveryFailure(c, err);
        return { error: (err as Error).message };
      },
    );
    const entry = { listing, stop };
    this.listings.add(entry);
    // The listing never rejects (failures are its outcome).
    void listing.then(() => this.listings.delete(entry));
    return listing;
  }

  private logDiscoveryFailure(c: Channel, err: unknown): void {
    // A channel deleted meanwhile (here or on another instance), before its lookup or before its
    // listing was stored, is not a discovery that failed.
    if (err instanceof ChannelDeletedError || err instanceof ChannelNotFoundError) {
      this.opts.log?.debug({ channel: c.name }, 'model discovery skipped a deleted channel');
      return;
    }
    this.opts.log?.warn({ channel: c.name, reason: (err as Error).message }, 'model discovery failed');
  }

  private async stored(id: number): Promise<Channel> {
    const row = await this.state.repos.channels.byId(id);
    if (!row) throw new ChannelNotFoundError(id);
    return parseChannelRow(row);
  }
}

/** A channel as the admin API answers it: keys masked, with its last listing's outcome. */
function publicOf(row: ChannelRow): PublicChannel {
  return toPublicChannel(parseChannelRow(row), listingOfRow(row));
}

const listed = (models: number): ChannelListing => ({
  time: now(),
  ok: true,
  models,
  error_kind: null,
  upstream_status: null,
  message: null,
});

const failed = (kind: string, status: number | null, message: string): ChannelListing => ({
  time: now(),
  ok: false,
  models: null,
  error_kind: kind,
  upstream_status: status,
  message,
});

/** Fields that change what a channel's `GET /models` answers (or whether it is asked). */
const DISCOVERY_FIELDS = [
  'kind',
  'base_url',
  'keys',
  'models',
  'model_mapping',
  'status',
  'settings',
] as const;

/** A field as the listing sees it: prices (`settings.pricing`) change nothing it answers. */
function discoveryView(c: Channel, f: (typeof DISCOVERY_FIELDS)[number]): unknown {
  if (f !== 'settings' || c.settings.pricing === undefined) return c[f];
  const { pricing: _, ...rest } = c.settings;
  return rest;
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
