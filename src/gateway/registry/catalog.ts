import { getEmbeddingAdapter } from '../../providers/embedding-registry.js';
import { isChatProviderKind } from '../../providers/registry.js';
import type { ListedModel } from '../../providers/types.js';
import type { Channel, ChannelSettings } from './channel.js';
import type { ChannelKind } from './channel-kinds.js';
import { nativeAuthor } from './channel-kinds.js';
import { authorOf, effectivePricing, isEmbeddingModel, type ModelInfo, type Pricing } from './model-info.js';
import type { ModelRegistry } from './model-registry.js';

export type Endpoint = 'chat' | 'embeddings';

/** One way to serve one model: a channel, the name to send it, and the model's registry entry. */
export interface Target {
  channelId: number;
  channelName: string;
  kind: ChannelKind;
  baseUrl: string;
  /** All keys of the channel; empty for upstreams without authentication (a local server). */
  keys: string[];
  upstreamModel: string;
  priority: number;
  weight: number;
  settings: ChannelSettings;
  model: ModelInfo;
  /**
   * What this channel charges for the model: the model's prices with the channel's
   * `settings.pricing` for its id laid over them (`model.pricing` itself when it has none).
   * Routing (price sort, `max_price`, `:free`), the quota reservation and the bill read this.
   */
  pricing: Pricing;
}

/**
 * What a channel's upstream listing said about one model (stored per channel as JSON; a listing
 * stored before a fact was read lacks it until the next refresh).
 */
export type DiscoveredModel = ListedModel;

/**
 * The in-memory answer to "who can serve model X": rebuilt from scratch (channels, their
 * discovered listings, the registry) whenever anything changes. Reads never touch the database.
 */
export class Catalog {
  private byModel = new Map<string, Target[]>();
  private byChannel = new Map<number, Target[]>();
  /**
   * `targetsFor` answers per endpoint and model id, until the next rebuild: the request path
   * asks on every call, and the same array each time lets callers derive from it once.
   */
  private readonly answers = { chat: new Map<string, Target[]>(), embeddings: new Map<string, Target[]>() };

  constructor(private readonly registry: ModelRegistry) {}

  rebuild(channels: Channel[], discovered: Map<number, DiscoveredModel[]>): void {
    const served = channels.map((c) => ({
      channel: c,
      names: servedNames(c, discovered.get(c.id), this.registry),
    }));
    // What each channel's listing says is laid under the config and admin entries, and names
    // nobody described still need an entry (a local server's `llama3:8b`).
    this.registry.setDiscovered(
      served.flatMap(({ channel, names }) => {
        const found = new Map((discovered.get(channel.id) ?? []).map((d) => [d.name, d]));
        // Whether this channel can only embed (a disabled one serves nothing, so says nothing).
        const embeddingsOnly = channel.status === 1 ? !isChatProviderKind(channel.kind) : undefined;
        return names.map((name) => {
          const embeddingParameters =
            channel.status === 1 ? getEmbeddingAdapter(channel.kind, name)?.parameters : undefined;
          return { ...found.get(name), name, embeddingsOnly, embeddingParameters };
        });
      }),
    );
    const byModel = new Map<string, Target[]>();
    const byChannel = new Map<number, Target[]>();
    for (const { channel, names } of served) {
      const targets: Target[] = [];
      for (const name of names) {
        const model = this.registry.resolve(name);
        if (!model || targets.some((t) => t.model.id === model.id)) continue;
        const target = toTarget(channel, name, model);
        targets.push(target);
        if (channel.status !== 1) continue;
        const list = byModel.get(model.id) ?? [];
        list.push(target);
        byModel.set(model.id, list);
      }
      byChannel.set(channel.id, targets);
    }
    for (const list of byModel.values())
      list.sort((a, b) => b.priority - a.priority || b.weight - a.weight || a.channelId - b.channelId);
    this.byModel = byModel;
    this.byChannel = byChannel;
    this.answers.chat.clear();
    this.answers.embeddings.clear();
  }

  /**
   * Enabled targets for a model id or unambiguous plain name, best priority first. The same
   * array until the catalog is rebuilt: callers must not change it.
   */
  targetsFor(modelId: string, opts: { endpoint: Endpoint }): Target[] {
    const model = this.registry.resolve(modelId);
    if (!model) return [];
    const answers = this.answers[opts.endpoint];
    let list = answers.get(model.id);
    if (!list) {
      list = (this.byModel.get(model.id) ?? []).filter((t) => servesEndpoint(t, opts.endpoint));
      answers.set(model.id, list);
    }
    return list;
  }

  /** Models some enabled channel serves, on any endpoint (what `/v1/models` lists). */
  servableModels(): ModelInfo[] {
    return [...this.byModel.values()]
      .map((targets) => targets[0]!.model)
      .sort((a, b) => a.id.localeCompare(b.id));
  }

  isServable(modelId: string): boolean {
    const model = this.registry.resolve(modelId);
    return model !== undefined && this.byModel.has(model.id);
  }

  /** What a channel serves, whether enabled or not (its test action, the console). */
  channelTargets(channelId: number): Target[] {
    return this.byChannel.get(channelId) ?? [];
  }
}

function servedNames(c: Channel, found: DiscoveredModel[] | undefined, registry: ModelRegistry): string[] {
  const declared = [...c.models, ...Object.keys(c.model_mapping)];
  if (declared.length > 0) return [...new Set(declared)];
  const names = (found ?? []).map((d) => d.name);
  const author = nativeAuthor(c.kind, c.base_url);
  if (author)
    for (const m of registry.list())
      if (m.source !== 'discovered' && authorOf(m.id) === author) names.push(m.upstream_model);
  return [...new Set(names)];
}

function toTarget(c: Channel, name: string, model: ModelInfo): Target {
  // A channel listing a registry id of its own provider (`anthropic/claude-sonnet-4` on an
  // Anthropic key) sends the provider's name; any other listed name is sent as written,
  // which is what an aggregator such as OpenRouter expects.
  const native = name === model.id && authorOf(model.id) === nativeAuthor(c.kind, c.base_url);
  const upstreamModel =
    c.model_mapping[name] ?? c.model_mapping[model.id] ?? (native ? model.upstream_model : name);
  return {
    channelId: c.id,
    channelName: c.name,
    kind: c.kind,
    baseUrl: c.base_url,
    keys: c.keys,
    upstreamModel,
    priority: c.priority,
    weight: c.weight,
    settings: c.settings,
    model,
    pricing: effectivePricing(model, c.settings.pricing),
  };
}

function servesEndpoint(t: Target, endpoint: Endpoint): boolean {
  const embedding = isEmbeddingModel(t.model);
  if (endpoint === 'chat') return isChatProviderKind(t.kind) && !embedding;
  // Models a local server listed without a description may be either; let the upstream decide.
  const unknown = t.model.source === 'discovered';
  return (embedding || unknown) && getEmbeddingAdapter(t.kind, t.upstreamModel) !== undefined;
}
