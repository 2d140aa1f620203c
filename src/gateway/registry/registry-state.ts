import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { ChannelsRepo } from '../../store/channels-repo.js';
import type { ModelsRepo } from '../../store/models-repo.js';
import { Catalog, type DiscoveredModel } from './catalog.js';
import { type Channel, parseChannelRow } from './channel.js';
import type { ModelInput } from './model-info.js';
import type { ModelRegistry } from './model-registry.js';

/** While registry polls keep failing, one log line a minute. */
const OUTAGE_LOG_EVERY_MS = 60_000;

/**
 * Keeps the in-memory registry and catalog equal to the database. A change made here applies
 * at once (`changed()` reloads before returning); other instances see the version token move
 * on their next poll (every `pollMs`, one indexed row read) and reload.
 */
export class RegistryState {
  readonly catalog: Catalog;
  private channels: Channel[] = [];
  private seenVersion: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private reloading: Promise<void> | undefined;
  private again = false;
  /** The poll under way, if any (a slow one is not stacked: the next tick skips). */
  private polling: Promise<void> | undefined;
  private closed = false;
  /**
   * Called when a poll works again after failing (the database is back): the request-log writer
   * retries now instead of at the end of its backoff.
   */
  onDatabaseBack?: () => void;
  /** The poll failures under way (a database outage): when it began, when last logged, how many. */
  private outage: { since: number; logged: number; failures: number } | undefined;

  constructor(
    readonly repos: { channels: ChannelsRepo; models: ModelsRepo },
    readonly registry: ModelRegistry,
    private readonly log?: FastifyBaseLogger,
    private readonly now: () => number = Date.now,
  ) {
    this.catalog = new Catalog(registry);
  }

  /** Channels as last loaded (keys included: callers must mask before answering). */
  allChannels(): Channel[] {
    return this.channels;
  }

  channel(id: number): Channel | undefined {
    return this.channels.find((c) => c.id === id);
  }

  /** Reloads everything from the database; concurrent calls coalesce into one more pass. */
  reload(): Promise<void> {
    if (this.reloading) {
      this.again = true;
      return this.reloading;
    }
    this.reloading = (async () => {
      try {
        do {
          this.again = false;
          await this.loadOnce();
        } while (this.again);
      } finally {
        this.reloading = undefined;
      }
    })();
    return this.reloading;
  }

  /** Call after writing channels or models: tells other instances, then reloads here. */
  async changed(): Promise<void> {
    const token = randomUUID();
    await this.repos.channels.setVersion(token);
    this.seenVersion = token;
    await this.reload();
  }

  /**
   * For a push notification (e.g. Redis pub/sub): reload now instead of at the next poll. Ignored
   * once closed: a notification that arrives while the gateway stops (its own admin write,
   * published a moment before) must not start a read of a database about to close.
   */
  invalidate(): void {
    if (this.closed) return;
    this.reload().catch((err) => this.log?.warn({ err }, 'registry reload failed'));
  }

  startPolling(pollMs: number): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => {
      if (this.polling) return;
      this.polling = this.poll()
        .then(
          () => this.pollWorked(),
          (err) => this.pollFailed(err),
        )
        .finally(() => {
          this.polling = undefined;
        });
    }, pollMs);
    this.timer.unref();
  }

  /**
   * For shutdown, before the database closes: no more polls or pushed reloads, and the poll or
   * reload under way has ended (a failure of it was logged where it started). A `changed()` of a
   * write still running reloads as before; its caller awaits it.
   */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all([this.polling, this.reloading?.catch(() => {})]);
  }

  /**
   * A database outage fails every poll (one a second by default): its first failure is logged
   * with its stack, then one line a minute without it while the outage lasts, and its end once.
   */
  private pollFailed(err: unknown): void {
    const now = this.now();
    const o = this.outage;
    if (!o) {
      this.outage = { since: now, logged: now, failures: 1 };
      this.log?.warn({ err }, 'registry poll failed');
      return;
    }
    o.failures++;
    if (now - o.logged < OUTAGE_LOG_EVERY_MS) return;
    o.logged = now;
    this.log?.warn(
      {
        error: (err as Error)?.message ?? String(err),
        failures: o.failures,
        down_s: Math.round((now - o.since) / 1000),
      },
      'registry poll still failing',
    );
  }

  private pollWorked(): void {
    const o = this.outage;
    if (!o) return;
    this.outage = undefined;
    this.log?.info(
      { failures: o.failures, down_s: Math.round((this.now() - o.since) / 1000) },
      'registry poll works again',
    );
    this.onDatabaseBack?.();
  }

  private async poll(): Promise<void> {
    const v = await this.repos.channels.version();
    if (v === this.seenVersion) return;
    this.seenVersion = v;
    await this.reload();
  }

  private async loadOnce(): Promise<void> {
    const version = await this.repos.channels.version();
    const [rows, models, found] = await Promise.all([
      this.repos.channels.all(),
      this.repos.models.all(),
      this.repos.channels.discovered(),
    ]);
    const discovered = new Map<number, DiscoveredModel[]>();
    for (const [id, json] of found) {
      try {
        discovered.set(id, JSON.parse(json) as DiscoveredModel[]);
      } catch {
        // a damaged listing is ignored; the next refresh rewrites it
      }
    }
    this.registry.setAdminEntries(models.map((m) => JSON.parse(m.data) as ModelInput));
    this.channels = rows.map(parseChannelRow);
    this.catalog.rebuild(this.channels, discovered);
    this.seenVersion ??= version;
  }
}
