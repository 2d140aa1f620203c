import { badRequest, conflict, notFound } from '../errors.js';
import { checkModalities } from './modalities.js';
import {
  type ModelInfo,
  type ModelInput,
  type ModelSource,
  mergeModel,
  normalizePricing,
  priceBoundProblems,
} from './model-info.js';
import type { RegistryState } from './registry-state.js';

export interface ModelView extends ModelInfo {
  /** Whether some enabled channel serves it. */
  servable: boolean;
  /** True when an admin entry exists (DELETE reverts to the config, listing and default layers). */
  overridden: boolean;
  /**
   * What describes the model below its admin entry, so what DELETE leaves: the config file, the
   * default file (`default`, a built-in model), a channel that serves it (`discovered`: declared
   * or listed, with what the listing says), or nothing (null: only the admin entry describes it,
   * and DELETE removes the model). Equal to `source` for a model without an admin entry.
   */
  base_source: Exclude<ModelSource, 'admin'> | null;
}

/** How a 409 names the layer that already describes a model. */
const DESCRIBED_BY: Record<'config' | 'default', string> = {
  config: 'from the config file',
  default: 'built in',
};

const now = () => Math.floor(Date.now() / 1000);

/** Reads and compare-and-swap writes of one update before it gives up with a 409. */
const UPDATE_ATTEMPTS = 5;

/**
 * Fields an admin may unset with null: the entry then takes them from the config file, the
 * upstream listings or the default data file again, or from the id (`acme/tiny` is sent as `tiny`),
 * the fallback context length and a blank model's lists (no aliases, text in and out, parameters
 * not known). (`max_completion_tokens: null` is a value of its own: no limit.) An empty list is a
 * value too: refused for modalities (checkModalities), stored for the others.
 */
const UNSETTABLE = [
  'upstream_model',
  'context_length',
  'aliases',
  'input_modalities',
  'output_modalities',
  'supported_parameters',
] as const;

/**
 * What `POST`/`PUT /api/model` carry: a model input whose unsettable fields may be null, and
 * whose prices may be null one by one (the admin's price for that key removed, so the lower
 * layers' price shows through, else 0; an unset cache price falls back to the prompt price).
 */
export type ModelPatch = Omit<ModelInput, (typeof UNSETTABLE)[number] | 'pricing'> & {
  upstream_model?: string | null;
  context_length?: number | null;
  aliases?: string[] | null;
  input_modalities?: string[] | null;
  output_modalities?: string[] | null;
  supported_parameters?: string[] | null;
  pricing?: Record<string, string | number | null>;
};

/** `/api/model`: admin entries layered over the config file, upstream listings and the default data file. */
export class ModelService {
  constructor(private readonly state: RegistryState) {}

  list(filter: { servable?: boolean; q?: string } = {}): ModelView[] {
    const q = filter.q?.toLowerCase();
    return this.state.registry
      .list()
      .map((m) => this.view(m))
      .filter((m) => filter.servable === undefined || m.servable === filter.servable)
      .filter((m) => !q || m.id.toLowerCase().includes(q) || m.name.toLowerCase().includes(q))
      .sort((a, b) => a.id.localeCompare(b.id));
  }

  get(id: string): ModelView {
    const m = this.state.registry.get(id) ?? this.state.registry.resolve(id);
    if (!m) throw notFound(`model ${id} not found`);
    return this.view(m);
  }

  /**
   * A new admin entry; 409 when one exists already, or when the default file or the config file
   * describes the model: a create sends a whole description, and laid over a built-in model it
   * replaced the fields the sender left at their blank values (prices of 0 made its chats free).
   * PUT changes such a model field by field. A model only the channels name (a discovered one)
   * takes a POST: that is how it is priced (docs/configuration.md). An id another model answers
   * to by another name is a 409 too.
   */
  async create(input: ModelPatch): Promise<ModelView> {
    checkModalities(input);
    if (await this.state.repos.models.byId(input.id))
      throw conflict(`model ${input.id} already exists: change it with PUT /api/model`);
    const base = this.baseSource(input.id);
    if (base === 'config' || base === 'default')
      throw conflict(
        `model ${input.id} is already in the registry (${DESCRIBED_BY[base]}): change its fields with PUT /api/model, which keeps the ones not sent`,
      );
    // A name another model answers to (its slug `gpt-4o-mini`, an alias, an upstream name): an
    // entry of that id would take the name's requests from that model, unpriced.
    const named = this.state.registry.resolve(input.id);
    if (named && named.id !== input.id)
      throw conflict(
        `model ${input.id} names ${named.id} (its alias, upstream name or short name): change that model with PUT /api/model, or choose an id no model answers to`,
      );
    // Insert only: of two creates of one id at once (two instances), the second is the 409 above.
    if (!(await this.state.repos.models.swap(input.id, undefined, JSON.stringify(clean(input)), now())))
      throw conflict(`model ${input.id} already exists: change it with PUT /api/model`);
    return this.written(input.id);
  }

  /**
   * Changes the fields present, on top of whatever the entry is now (any layer); null unsets.
   * The admin entry is read from the database, not this instance's copy (up to a second behind
   * another instance's change), and written only if it is still what was read: two admins
   * changing different fields at once, on one instance or two, both land.
   */
  async update(input: ModelPatch): Promise<ModelView> {
    checkModalities(input);
    const models = this.state.repos.models;
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      const row = await models.byId(input.id);
      const layers = this.state.registry.layers(input.id);
      if (!row && !layers.config && !layers.default && !this.state.registry.get(input.id))
        throw notFound(`model ${input.id} not found`);
      const admin = row ? (JSON.parse(row.data) as ModelPatch) : undefined;
      const merged = { ...(admin ?? { id: input.id }), ...definedOnly(input) } as ModelPatch;
      if (input.pricing) merged.pricing = { ...(admin?.pricing ?? {}), ...input.pricing };
      if (await models.swap(input.id, row?.data, JSON.stringify(clean(merged)), now()))
        return this.written(input.id);
    }
    throw conflict(`model ${input.id} kept changing while this change was written: send it again`);
  }

  /** Removes the admin entry; the model reverts to its config, listing and default description. */
  async delete(id: string): Promise<void> {
    if (!(await this.state.repos.models.delete(id))) throw notFound(`model ${id} has no admin entry`);
    await this.state.changed();
  }

  /** After a write: every copy of the registry reloads, this one before the answer. */
  private async written(id: string): Promise<ModelView> {
    await this.state.changed();
    return this.get(id);
  }

  private view(m: ModelInfo): ModelView {
    return {
      ...m,
      servable: this.state.catalog.isServable(m.id),
      overridden: this.state.registry.layers(m.id).admin !== undefined,
      base_source: this.baseSource(m.id),
    };
  }

  /** The highest layer below the admin entry: config over default over the channels' names. */
  private baseSource(id: string): ModelView['base_source'] {
    const layers = this.state.registry.layers(id);
    if (layers.config) return 'config';
    if (layers.default) return 'default';
    return layers.named ? 'discovered' : null;
  }
}

/**
 * The entry to store: only the fields sent, so later default-file updates still show through the
 * rest; an unset field (and each unset price) is left out for the same reason. A 400 when the
 * entry does not make a model.
 */
function clean(input: ModelPatch): ModelInput {
  try {
    const copy: ModelPatch = { ...input };
    for (const k of UNSETTABLE) if (copy[k] === null) delete copy[k];
    const set = Object.entries(input.pricing ?? {}).filter(
      (e): e is [string, string | number] => e[1] !== null,
    );
    // Every price unset: the entry keeps no pricing, and each price follows the lower layers.
    if (set.length === 0) delete copy.pricing;
    const entry = copy as ModelInput;
    if (set.length > 0) {
      const pricing = normalizePricing(Object.fromEntries(set));
      entry.pricing = Object.fromEntries(set.map(([k]) => [k, pricing[k] ?? '0']));
      const [tooHigh] = priceBoundProblems(entry.pricing);
      if (tooHigh) throw new RangeError(tooHigh);
    }
    mergeModel(undefined, entry, 'admin');
    return entry;
  } catch (err) {
    throw badRequest((err as Error).message, 'pricing');
  }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
