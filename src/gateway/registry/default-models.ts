import data from './default-models.json' with { type: 'json' };
import { type ModelInfo, type ModelInput, mergeModel } from './model-info.js';

interface RawDefaults {
  parameter_sets: Record<string, string[]>;
  models: Array<Omit<ModelInput, 'supported_parameters'> & { supported_parameters?: string | string[] }>;
}

/** The maintained data file, parsed once; `supported_parameters` may name a shared set. */
export function defaultModels(): ModelInfo[] {
  const raw = data as unknown as RawDefaults;
  return raw.models.map((m) => {
    const params = m.supported_parameters;
    const expanded = typeof params === 'string' ? raw.parameter_sets[params] : params;
    if (typeof params === 'string' && !expanded) throw new Error(`${m.id}: unknown parameter set ${params}`);
    return mergeModel(undefined, { ...m, supported_parameters: expanded ?? [] }, 'default');
  });
}
