import { EMBEDDING_PARAMETERS } from './default-models.js';
import {
  blankModel,
  defaultUpstreamName,
  type ModelInfo,
  type ModelInput,
  mergeModel,
} from './model-info.js';

export interface ModelLayers {
  default?: ModelInfo;
  config?: ModelInput;
  admin?: ModelInput;
}

/**
 * Model entries in three layers, later ones winning field by field: the maintained default
 * file < the config file's `models` < admin entries from `/api/model`. Models that upstreams
 * list but nobody described come last and only fill gaps.
 */
export class ModelRegistry {
  private readonly defaults = new Map<string, ModelInfo>();
  private readonly config = new Map<string, ModelInput>();
  private admin = new Map<string, ModelInput>();
  private discovered = new Map<string, ModelInfo>();
  private entries = new Map<string, ModelInfo>();
  /** Plain names (upstream names, aliases, id slugs) -> ids that answer to them. */
  private names = new Map<string, Set<string>>();

  constructor(defaults: ModelInfo[], configModels: ModelInput[]) {
    for (const m of defaults) this.defaults.set(m.id, m);
    for (const m of configModels) this.config.set(m.id, m);
    this.rebuild();
  }

  setAdminEntries(entries: ModelInput[]): void {
    this.admin = new Map(entries.map((e) => [e.id, e]));
    this.rebuild();
  }

  /**
   * Upstream-listed models: `{ name, contextLength, created }`; known names are ignored (their
   * default, config or admin entry wins). Listed by several channels: the largest context
   * window, and the earliest `created`.
   */
  setDiscovered(
    found: Array<{ name: string; contextLength?: number; created?: number; embeddingsOnly?: boolean }>,
  ): void {
    this.discovered = new Map();
    // `embeddingsOnly`: true from an enabled embeddings-only channel (Voyage, Jina, Cohere), false
    // from an enabled channel that chats, absent from a disabled one (it serves nothing).
    const embeds = new Set<string>();
    const chats = new Set<string>();
    for (const f of found) {
      if (f.embeddingsOnly === true) embeds.add(f.name);
      else if (f.embeddingsOnly === false) chats.add(f.name);
      if (this.entries.has(f.name) || this.lookupName(f.name, false)) continue;
      const prev = this.discovered.get(f.name);
      const next =
        !prev || (f.contextLength && prev.context_length < f.contextLength)
          ? blankModel(f.name, f.name, f.contextLength)
          : prev;
      // The earliest date any channel lists (0: none listed one).
      const a = prev?.created || 0;
      const b = f.created || 0;
      next.created = a && b ? Math.min(a, b) : a || b;
      this.discovered.set(f.name, next);
    }
    // A model only embeddings-only channels serve can only embed: described as the registry's
    // embedding models are, so `/v1/models?output_modalities=embeddings` lists it. One a
    // chat-capable channel also serves may be either and stays text (the upstream decides).
    for (const [name, m] of this.discovered)
      if (embeds.has(name) && !chats.has(name)) {
        m.output_modalities = ['embeddings'];
        m.supported_parameters = [...EMBEDDING_PARAMETERS];
      }
  }

  /**
   * The entry for an id (`openai/gpt-4o-mini`) or a plain name (`gpt-4o-mini`, a dated
   * snapshot, an alias) when exactly one entry answers to it.
   */
  resolve(idOrName: string): ModelInfo | undefined {
    return this.entries.get(idOrName) ?? this.lookupName(idOrName, true);
  }

  /** Exact id only. */
  get(id: string): ModelInfo | undefined {
    return this.entries.get(id) ?? this.discovered.get(id);
  }

  list(): ModelInfo[] {
    return [...this.entries.values(), ...this.discovered.values()];
  }

  layers(id: string): ModelLayers {
    return { default: this.defaults.get(id), config: this.config.get(id), admin: this.admin.get(id) };
  }

  private lookupName(name: string, withDiscovered: boolean): ModelInfo | undefined {
    const ids = this.names.get(name);
    if (ids?.size === 1) return this.entries.get([...ids][0]!);
    return withDiscovered && !ids ? this.discovered.get(name) : undefined;
  }

  private rebuild(): void {
    const ids = new Set([...this.defaults.keys(), ...this.config.keys(), ...this.admin.keys()]);
    const entries = new Map<string, ModelInfo>();
    for (const id of ids) {
      let m = this.defaults.get(id);
      const c = this.config.get(id);
      if (c) m = mergeModel(m, c, 'config');
      const a = this.admin.get(id);
      if (a) m = mergeModel(m, a, 'admin');
      entries.set(id, m!);
    }
    const names = new Map<string, Set<string>>();
    const add = (name: string, id: string) => {
      if (name === id) return;
      const s = names.get(name) ?? new Set<string>();
      s.add(id);
      names.set(name, s);
    };
    for (const m of entries.values()) {
      add(m.upstream_model, m.id);
      add(defaultUpstreamName(m.id), m.id);
      for (const a of m.aliases) add(a, m.id);
    }
    this.entries = entries;
    this.names = names;
  }
}
