/**
 * Upstream channels and the model registry: "which upstream targets can serve model X, and
 * what does it cost". Built once per process in src/services.ts as `services.registry`.
 *
 * For the chat and embeddings routes:
 *
 *   const model = services.registry.resolve(body.model);
 *   // 'openai/gpt-4o-mini' or plain 'gpt-4o-mini' (plain names resolve when exactly one entry
 *   // answers to them: its upstream name, an alias such as a dated snapshot, or the id's slug).
 *   // undefined -> 404 unknown model.
 *
 *   const targets = services.registry.targetsFor(model.id, { endpoint: 'chat' });
 *   // Target[] of ENABLED channels only, best first: priority desc, then weight desc, then id.
 *   // Each: { channelId, channelName, kind, baseUrl, keys, upstreamModel, priority, weight,
 *   //         settings, model, pricing }; `pricing` is what that channel charges (the model's
 *   //         prices under the channel's `settings.pricing` for it). Pick among equal
 *   // priorities by weight and a key from `keys` (empty = no auth, e.g. a local server).
 *   // `endpoint: 'embeddings'` returns only channels whose kind has an embedding adapter.
 *   // [] with a known model -> 503 no upstream.
 *   const upstream = toUpstreamTarget(targets[0], targets[0].keys[0]);  // adapter's UpstreamTarget
 *
 *   const micros = services.registry.costOf(model, { prompt_tokens, completion_tokens,
 *     cached_tokens, cache_write_tokens, cache_write_1h_tokens, images, requests });  // micro-USD
 *   const usd = costUsd(model, usage);                          // for `usage.cost`
 *
 *   model.context_length / max_completion_tokens / supported_parameters / pricing
 *
 * Freshness: reads are in memory. A change through this instance (`/api/channel`, `/api/model`,
 * discovery) applies before the request that made it returns; other instances poll a version
 * row every second and reload, or reload at once on `registry.invalidate()` (for a Redis
 * pub/sub hook). Listings are read again every `gateway.discovery_interval_ms`, by one instance
 * a round (discovery-refresh.ts). Key allow-lists:
 * `isAllowed(model, allowedModels, registry)` (allow-list.ts).
 */

import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config/schema.js';
import type { UpstreamTarget } from '../../providers/types.js';
import type { ChannelsRepo } from '../../store/channels-repo.js';
import type { ModelsRepo } from '../../store/models-repo.js';
import type { UpstreamClient } from '../upstream/upstream-client.js';
import { upstreamLimits } from '../upstream/upstream-limits.js';
import type { Endpoint, Target } from './catalog.js';
import { importDeclarations } from './channel-declarations.js';
import { ChannelService } from './channel-service.js';
import { costOf, type Usage } from './cost.js';
import { defaultModels } from './default-models.js';
import { type DiscoveryRefresh, startDiscoveryRefresh } from './discovery-refresh.js';
import type { ModelInfo, ModelInput } from './model-info.js';
import { ModelRegistry } from './model-registry.js';
import { ModelService } from './model-service.js';
import { RegistryState } from './registry-state.js';

export { isAllowed, type NameResolver, unknownAllowed } from './allow-list.js';
export type { Endpoint, Target } from './catalog.js';
export type { Channel, ChannelSettings, PublicChannel } from './channel.js';
export type { ChannelTestResult } from './channel-test.js';
export { costOf, costUsd, type Usage } from './cost.js';
export type { ModelInfo, Pricing } from './model-info.js';

export interface Registry {
  resolve(modelId: string): ModelInfo | undefined;
  /** The model's id and the plain names that resolve to it (aliases, upstream name, slug). */
  namesOf(modelId: string): string[];
  targetsFor(modelId: string, opts: { endpoint: Endpoint }): Target[];
  /** Models some enabled channel serves (what `/v1/models` lists). */
  servableModels(): ModelInfo[];
  costOf(model: Pick<ModelInfo, 'pricing'>, usage: Usage): number;
  /** Reload from the database now (another instance changed something). */
  invalidate(): void;
  readonly channels: ChannelService;
  readonly models: ModelService;
  /**
   * Imports config channels (and removes the config/env channels no longer declared, with
   * `removeUndeclaredChannels`), loads, starts polling and background discovery.
   */
  start(): Promise<void>;
  close(): Promise<void>;
}

export interface RegistryDeps {
  config: Config;
  repos: { channels: ChannelsRepo; models: ModelsRepo };
  client: UpstreamClient;
  log?: FastifyBaseLogger;
  /** How often other instances' changes are looked for; default 1000 ms. */
  pollMs?: number;
  /** How long start() waits for discovery before going on in the background; default 3000 ms. */
  discoveryWaitMs?: number;
  /**
   * Deletes the `config`/`env` channels the configuration no longer declares (`modelgate
   * serve`). Off for the CLI's one-off commands, which may run without the full configuration.
   */
  removeUndeclaredChannels?: boolean;
  /**
   * Lists the models of channels that name none, at start and then every
   * `gateway.discovery_interval_ms` (default true). Off for the CLI's one-off commands: `key
   * list` should not wait on (or for) every upstream's model list.
   */
  discoverAtStart?: boolean;
  /** Called when the registry's poll reaches the database again after failing. */
  onDatabaseBack?: () => void;
}

export function createRegistry(deps: RegistryDeps): Registry {
  const models = new ModelRegistry(defaultModels(), deps.config.models as ModelInput[]);
  const state = new RegistryState(deps.repos, models, deps.log);
  state.onDatabaseBack = deps.onDatabaseBack;
  const timeoutMs = Math.min(deps.config.gateway.connect_timeout_ms, 10_000);
  const limits = upstreamLimits(deps.config.gateway);
  const channels = new ChannelService(state, deps.client, {
    timeoutMs,
    limits,
    log: deps.log,
    discover: deps.config.gateway.discover_models,
  });
  let discovery: Promise<void> = Promise.resolve();
  let refresh: DiscoveryRefresh | undefined;
  return {
    resolve: (id) => models.resolve(id),
    namesOf: (id) => models.namesOf(id),
    targetsFor: (id, opts) => state.catalog.targetsFor(id, opts),
    servableModels: () => state.catalog.servableModels(),
    costOf,
    invalidate: () => state.invalidate(),
    channels,
    models: new ModelService(state),
    async start() {
      await state.reload();
      await importDeclarations(state, deps.config.channels, {
        removeUndeclared: deps.removeUndeclaredChannels ?? false,
        log: deps.log,
      });
      state.startPolling(deps.pollMs ?? 1000);
      if (!deps.config.gateway.discover_models || deps.discoverAtStart === false) return;
      const intervalMs = deps.config.gateway.discovery_interval_ms;
      if (intervalMs > 0)
        refresh = startDiscoveryRefresh({
          intervalMs,
          claim: (now, round) => deps.repos.channels.claimDiscoveryRound(now, round),
          round: (signal) => channels.discoverAll(signal),
          log: deps.log,
        });
      discovery = channels.discoverAll();
      let timer: NodeJS.Timeout | undefined;
      const wait = new Promise<void>((r) => {
        timer = setTimeout(r, deps.discoveryWaitMs ?? 3000);
      });
      await Promise.race([discovery, wait]);
      clearTimeout(timer);
    },
    async close() {
      // Discovery writes to the database; let it finish (it is bounded by its timeouts). The
      // listings creates and updates started are cut (see ChannelService.close). A poll or a
      // pushed reload under way ends too, and no new one starts (RegistryState.close). A periodic
      // refresh round under way is cut (DiscoveryRefresh.close).
      await Promise.all([state.close(), discovery, channels.close(), refresh?.close()]);
    },
  };
}

/** The adapter-facing target for one key (settings.headers become request headers). */
export function toUpstreamTarget(t: Target, apiKey = t.keys[0] ?? ''): UpstreamTarget {
  return {
    baseUrl: t.baseUrl,
    apiKey,
    upstreamModel: t.upstreamModel,
    headers: t.settings.headers,
    extra: t.settings,
    maxOutputTokens: t.model.max_completion_tokens ?? undefined,
  };
}
