import type { ModelInfo } from '../../gateway/registry/index.js';
import { authorOf } from '../../gateway/registry/model-info.js';

/** One model in the OpenAI list shape with OpenRouter's fields (openrouter.md §11, §13). */
export function toWireModel(m: ModelInfo) {
  const input = m.input_modalities;
  const output = m.output_modalities;
  return {
    id: m.id,
    object: 'model' as const,
    created: Math.trunc(m.created),
    owned_by: authorOf(m.id) ?? 'modelgate',
    name: m.name,
    canonical_slug: m.id,
    description: '',
    context_length: m.context_length,
    architecture: {
      modality: `${input.join('+')}->${output.join('+')}`,
      input_modalities: [...input],
      output_modalities: [...output],
    },
    pricing: { ...m.pricing },
    top_provider: {
      context_length: m.context_length,
      max_completion_tokens: m.max_completion_tokens,
      is_moderated: false,
    },
    per_request_limits: null,
    supported_parameters: [...m.supported_parameters],
    // Required (nullable) by @openrouter/sdk's strict Model schema.
    default_parameters: null,
    supported_voices: null,
    links: { details: `/v1/models/${m.id}` },
  };
}
