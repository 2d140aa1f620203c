import type { ListedModel } from '../../providers/types.js';
import {
  blankModel,
  defaultUpstreamName,
  isEmbeddingModel,
  MAX_PRICE_USD,
  type ModelInfo,
  type ModelInput,
  mergeModel,
  normalizePrice,
} from './model-info.js';

export interface ModelLayers {
  default?: ModelInfo;
  config?: ModelInput;
  admin?: ModelInput;
  /**
   * Whether some channel names the model (declares it or lists it, enabled or not): without a
   * described layer it is then a discovered model, and stays one when its admin entry goes.
   */
  named: boolean;
}

/** One name a channel serves, with what its upstream listing said about it. */
export interface ListedName extends ListedModel {
  /**
   * True from an enabled embeddings-only channel (Voyage, Jina, Cohere), false from an enabled
   * channel that chats, absent from a disabled one (it serves nothing).
   */
  embeddingsOnly?: boolean;
  /**
   * What the channel's embedding adapter honours of a request (an enabled channel with one,
   * absent otherwise): an embedding model's `supported_parameters` is what its channels take.
   */
  embeddingParameters?: readonly string[];
}

/**
 * Model entries in layers, later ones winning field by field: the maintained default file <
 * what upstream listings say (limits, modalities, parameters, prices, name, `created`,
 * embeddings-only) < the config file's `models` < admin entries from `/api/model`. So a config or
 * admin entry that only prices a discovered model keeps the listed window and date. A listed name
 * no entry describes becomes an entry of its own (`source: 'discovered'`).
 */
export class ModelRegistry {
  private readonly defaults = new Map<string, ModelInfo>();
  private readonly config = new Map<string, ModelInput>();
  private admin = new Map<string, ModelInput>();
  private listed: ListedName[] = [];
  private discovered = new Map<string, ModelInfo>();
  private entries = new Map<string, ModelInfo>();
  /** Ids the channels' names went to: registry ids and discovered names. */
  private namedIds = new Set<string>();
  /** Plain names (upstream names, aliases, id slugs) -> ids that answer to them. */
  private names = new Map<string, Set<string>>();
  /** The plain names exactly one entry answers to, with that entry (what `resolve` finds). */
  private unique = new Map<string, ModelInfo>();

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

  /**
   * `id` and every plain name that resolves to it (aliases, its upstream name, its id's slug):
   * what a request for that model may have said.
   */
  namesOf(id: string): string[] {
    const out = [id];
    for (const [name, m] of this.unique) if (m.id === id) out.push(name);
    return out;
  }

  /** Exact id only. */
  get(id: string): ModelInfo | undefined {
    return this.entries.get(id) ?? this.discovered.get(id);
  }

  list(): ModelInfo[] {
    return [...this.entries.values(), ...this.discovered.values()];
  }

  layers(id: string): ModelLayers {
    return {
      default: this.defaults.get(id),
      config: this.config.get(id),
      admin: this.admin.get(id),
      named: this.namedIds.has(id),
    };
  }

  private lookupName(name: string, withDiscovered: boolean): ModelInfo | undefined {
    // Without building anything: a chat request by a plain name, and an allow-list entry that is
    // one (allow-list.ts), come through here.
    const one = this.unique.get(name);
    if (one) return one;
    return withDiscovered && !this.names.has(name) ? this.discovered.get(name) : undefined;
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
        discovered.set(name, mergeModel(blankModel(name), factsInput(name, f), 'discovered'));
    const unique = new Map<string, ModelInfo>();
    for (const [name, s] of names) if (s.size === 1) unique.set(name, entries.get([...s][0]!)!);
    this.entries = entries;
    this.namedIds = new Set(facts.keys());
    this.names = names;
    this.unique = unique;
    this.discovered = discovered;
  }

  /** An id's entry: default < listing facts (when given) < config < admin, field by field. */
  private layered(id: string, facts?: Facts): ModelInfo {
    let m = this.defaults.get(id);
    if (facts) m = mergeModel(m, factsInput(id, facts, m), m?.source ?? 'discovered');
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
  maxCompletionTokens?: number;
  created?: number;
  name?: string;
  inputModalities?: string[];
  outputModalities?: string[];
  supportedParameters?: string[];
  /** What the enabled channels' embedding adapters honour, all together. */
  embeddingParameters?: string[];
  /** Normalized decimal strings (model-info.ts normalizePrice). */
  pricing?: Record<string, string>;
  embeds: boolean;
  chats: boolean;
}

/**
 * Facts per owner (a registry id, or the listed name itself). Listed by several channels, under
 * one name or several, each fact is merged by a rule of its own that does not depend on the
 * channels' priority or on which listing came last, so every instance reaches the same entry:
 * - context window and output limit: the largest any of them lists (the model can do that much
 *   on some channel; a smaller limit would refuse or cut what that channel serves);
 * - `created`: the earliest;
 * - display name: the first in character-code order (one must win, the same everywhere);
 * - modalities and parameters: every one any of them lists (what the model takes somewhere), in
 *   the order listed, channels by id;
 * - prices: each price at the highest any of them lists, so a quota is never charged less than
 *   the dearest channel may cost.
 */
function gatherFacts(listed: ListedName[], owner: (name: string) => string | undefined): Map<string, Facts> {
  const out = new Map<string, Facts>();
  for (const l of listed) {
    const key = owner(l.name) ?? l.name;
    const f = out.get(key) ?? { embeds: false, chats: false };
    f.contextLength = largest(f.contextLength, l.contextLength);
    f.maxCompletionTokens = largest(f.maxCompletionTokens, l.maxCompletionTokens);
    if (l.created && !(f.created && f.created <= l.created)) f.created = l.created;
    if (typeof l.displayName === 'string' && !(f.name !== undefined && f.name <= l.displayName))
      f.name = l.displayName;
    f.inputModalities = union(f.inputModalities, l.inputModalities);
    f.outputModalities = union(f.outputModalities, l.outputModalities);
    f.supportedParameters = union(f.supportedParameters, l.supportedParameters);
    f.embeddingParameters = union(f.embeddingParameters, l.embeddingParameters as string[] | undefined);
    f.pricing = dearest(f.pricing, l.pricing);
    if (l.embeddingsOnly === true) f.embeds = true;
    else if (l.embeddingsOnly === false) f.chats = true;
    out.set(key, f);
  }
  return out;
}

function largest(a: number | undefined, b: number | undefined): number | undefined {
  return b && !(a && a >= b) ? b : a;
}

function union(a: string[] | undefined, b: readonly string[] | undefined): string[] | undefined {
  if (!Array.isArray(b) || b.length === 0) return a;
  return a ? [...new Set([...a, ...b])] : [...b];
}

/** Each price at the higher of the two; a listed one that is no price, or above the bound, is left out. */
function dearest(
  a: Record<string, string> | undefined,
  b: Record<string, string> | undefined,
): Record<string, string> | undefined {
  if (!b || typeof b !== 'object') return a;
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) {
    let p: string;
    try {
      p = normalizePrice(v, k);
    } catch {
      continue;
    }
    if (Number(p) > MAX_PRICE_USD) continue;
    if (out[k] === undefined || Number(p) > Number(out[k])) out[k] = p;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * The listing facts as a layer: only what some listing said. Laid over an entry of the default
 * file (`file`), they replace what the model can do (limits, modalities, parameters), as the
 * upstream says it now, but not the file's name, date and prices: gateways in front of an
 * upstream (one-api, LiteLLM) list one made-up `created` for every model where the file has the
 * release date, and the file's names and prices are the ones kept up for the gateway (a listed
 * price is one upstream's price to us, a default for models nobody priced).
 *
 * A model only embeddings-only channels serve can only embed, so it is described as the
 * registry's embedding models are (`/v1/models?output_modalities=embeddings` lists it); one a
 * chat-capable channel also serves may be either, and the listing (or the lower layers, or
 * text) stands.
 *
 * An embedding model's parameters are what its channels' embedding adapters honour, all of them
 * together (the file cannot know that a Voyage model is served through an OpenAI-compatible proxy,
 * whose adapter drops `input_type`).
 */
function factsInput(id: string, f: Facts, file?: ModelInfo): ModelInput {
  const input: ModelInput = { id };
  if (f.contextLength) input.context_length = f.contextLength;
  if (f.maxCompletionTokens) input.max_completion_tokens = f.maxCompletionTokens;
  if (f.created && !file?.created) input.created = f.created;
  if (f.name && !file) input.name = f.name;
  if (f.pricing && !file) input.pricing = f.pricing;
  if (f.inputModalities) input.input_modalities = f.inputModalities;
  if (f.outputModalities) input.output_modalities = f.outputModalities;
  if (f.supportedParameters) input.supported_parameters = f.supportedParameters;
  const embeds = f.embeds && !f.chats;
  if (embeds) input.output_modalities = ['embeddings'];
  if ((embeds || (file && isEmbeddingModel(file))) && f.embeddingParameters)
    input.supported_parameters = f.embeddingParameters;
  return input;
}
