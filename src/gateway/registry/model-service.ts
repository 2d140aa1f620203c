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

/**
 * Fields an admin may unset with null: the entry then takes them from the config file, the
 * upstream listings or the default data file again, or from the id (`acme/tiny` is sent as `tiny`)
 * and the fallback context length. (`max_completion_tokens: null` is a value of its own: no limit.)
 */
const UNSETTABLE = ['upstream_model', 'context_length'] as const;

/**
 * What `POST`/`PUT /api/model` carry: a model input whose unsettable fields may be null, and
 * whose prices may be null one by one (the admin's price for that key removed, so the lower
 * layers' price shows through, else 0; an unset cache price falls back to the prompt price).
 */
export type ModelPatch = Omit<ModelInput, (typeof UNSETTABLE)[number] | 'pricing'> & {
  upstream_model?: string | null;
  context_length?: number | null;
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
    return this.save(input);
  }

  /** Changes the fields present, on top of whatever the entry is now (any layer); null unsets. */
  async update(input: ModelPatch): Promise<ModelView> {
    checkModalities(input);
    const layers = this.state.registry.layers(input.id);
    if (!layers.admin && !layers.config && !layers.default && !this.state.registry.get(input.id))
      throw notFound(`model ${input.id} not found`);
    const merged = { ...(layers.admin ?? { id: input.id }), ...definedOnly(input) } as ModelPatch;
    if (input.pricing) merged.pricing = { ...(layers.admin?.pricing ?? {}), ...input.pricing };
    return this.save(merged);
  }

  /** Removes the admin entry; the model reverts to its config, listing and default description. */
  async delete(id: string): Promise<void> {
    if (!(await this.state.repos.models.delete(id))) throw notFound(`model ${id} has no admin entry`);
    await this.state.changed();
  }

  private async save(input: ModelPatch): Promise<ModelView> {
    let clean: ModelInput;
    try {
      // Only the fields sent are stored, so later default-file updates still show through the rest;
      // an unset field is left out for the same reason.
      const copy: ModelPatch = { ...input };
      for (const k of UNSETTABLE) if (copy[k] === null) delete copy[k];
      const set = Object.entries(input.pricing ?? {}).filter(
        (e): e is [string, string | number] => e[1] !== null,
      );
      // Every price unset: the entry keeps no pricing, and each price follows the lower layers.
      if (set.length === 0) delete copy.pricing;
      clean = copy as ModelInput;
      if (set.length > 0) {
        const pricing = normalizePricing(Object.fromEntries(set));
        clean.pricing = Object.fromEntries(set.map(([k]) => [k, pricing[k] ?? '0']));
        const [tooHigh] = priceBoundProblems(clean.pricing);
        if (tooHigh) throw new RangeError(tooHigh);
      }
      mergeModel(undefined, clean, 'admin');
    } catch (err) {
      throw badRequest((err as Error).message, 'pricing');
    }
    await this.state.repos.models.put(clean.id, JSON.stringify(clean), now());
    await this.state.changed();
    return this.get(clean.id);
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

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
