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

/** One name a channel serves, with what its upstream listing said about it. */
export interface ListedName {
  name: string;
  contextLength?: number;
  /** Unix seconds, from the listing. */
  created?: number;
  /**
   * True from an enabled embeddings-only channel (Voyage, Jina, Cohere), false from an enabled
   * channel that chats, absent from a disabled one (it serves nothing).
   */
  embeddingsOnly?: boolean;
}

/**
 * Model entries in layers, later ones winning field by field: the maintained default file <
 * what upstream listings say (context window, `created`, embeddings-only) < the config file's
 * `models` < admin entries from `/api/model`. So a config or admin entry that only prices a
 * discovered model keeps the listed window and date. A listed name no entry describes becomes
 * an entry of its own (`source: 'discovered'`).
 */
export class ModelRegistry {
  private readonly defaults = new Map<string, ModelInfo>();
  private readonly config = new Map<string, ModelInput>();
  private admin = new Map<string, ModelInput>();
  private listed: ListedName[] = [];
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
   * Every name the channels serve, one item per channel and name. Kept, so that a later admin
   * change is laid over the same listing facts.
   */
  setDiscovered(found: ListedName[]): void {
    this.listed = found;
    this.rebuild();
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
    // Names come from the described layers only (listings add no names), so listed names can be
    // matched to ids before the listing facts are laid in.
    const names = new Map<string, Set<string>>();
    const add = (name: string, id: string) => {
      if (name === id) return;
      const s = names.get(name) ?? new Set<string>();
      s.add(id);
      names.set(name, s);
    };
    for (const id of ids) {
      const m = this.layered(id);
      add(m.upstream_model, id);
      add(defaultUpstreamName(id), id);
      for (const a of m.aliases) add(a, id);
    }
    // A listed name goes to the entry it resolves to; one that resolves to none, or to several,
    // is a discovered model of its own under that name.
    const owner = (name: string) => {
      if (ids.has(name)) return name;
      const s = names.get(name);
      return s?.size === 1 ? [...s][0]! : undefined;
    };
    const facts = gatherFacts(this.listed, owner);
    const entries = new Map<string, ModelInfo>();
    for (const id of ids) entries.set(id, this.layered(id, facts.get(id)));
    const discovered = new Map<string, ModelInfo>();
    for (const [name, f] of facts)
      if (!ids.has(name))
        discovered.set(name, mergeModel(blankModel(name), factsInput(name, f, false), 'discovered'));
    this.entries = entries;
    this.names = names;
    this.discovered = discovered;
  }

  /** An id's entry: default < listing facts (when given) < config < admin, field by field. */
  private layered(id: string, facts?: Facts): ModelInfo {
    let m = this.defaults.get(id);
    // The default file's date stays: gateways in front of an upstream (one-api, LiteLLM) list
    // one made-up `created` for every model, where the file has the model's release date.
    if (facts) m = mergeModel(m, factsInput(id, facts, !!m?.created), m?.source ?? 'discovered');
    const c = this.config.get(id);
    if (c) m = mergeModel(m, c, 'config');
    const a = this.admin.get(id);
    if (a) m = mergeModel(m, a, 'admin');
    return m!;
  }
}

/** What the listings say about one model, all channels together. */
interface Facts {
  contextLength?: number;
  created?: number;
  embeds: boolean;
  chats: boolean;
}

/**
 * Facts per owner (a registry id, or the listed name itself). Listed by several channels, under
 * one name or several: the largest context window and the earliest `created` any of them lists,
 * whatever the channels' order, so every instance reaches the same entry.
 */
function gatherFacts(listed: ListedName[], owner: (name: string) => string | undefined): Map<string, Facts> {
  const out = new Map<string, Facts>();
  for (const l of listed) {
    const key = owner(l.name) ?? l.name;
    const f = out.get(key) ?? { embeds: false, chats: false };
    if (l.contextLength && !(f.contextLength && f.contextLength >= l.contextLength))
      f.contextLength = l.contextLength;
    if (l.created && !(f.created && f.created <= l.created)) f.created = l.created;
    if (l.embeddingsOnly === true) f.embeds = true;
    else if (l.embeddingsOnly === false) f.chats = true;
    out.set(key, f);
  }
  return out;
}

/**
 * The listing facts as a layer: only what some listing said. A model only embeddings-only
 * channels serve can only embed, so it is described as the registry's embedding models are
 * (`/v1/models?output_modalities=embeddings` lists it); one a chat-capable channel also serves
 * may be either, and the lower layers (or text) stand.
 */
function factsInput(id: string, f: Facts, keepCreated: boolean): ModelInput {
  const input: ModelInput = { id };
  if (f.contextLength) input.context_length = f.contextLength;
  if (f.created && !keepCreated) input.created = f.created;
  if (f.embeds && !f.chats) {
    input.output_modalities = ['embeddings'];
    input.supported_parameters = [...EMBEDDING_PARAMETERS];
  }
  return input;
}
