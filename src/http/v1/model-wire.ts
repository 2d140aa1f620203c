import type { ModelInfo } from '../../gateway/registry/index.js';
import { authorOf } from '../../gateway/registry/model-info.js';

/** Where a model was asked for: the OpenAI path (`/v1`) or the OpenRouter SDK's (`/api/v1`). */
export type ModelsPrefix = '/v1' | '/api/v1';

/** One model in the OpenAI list shape with OpenRouter's fields (openrouter.md §11, §13). */
export function toWireModel(m: ModelInfo, prefix: ModelsPrefix = '/v1') {
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
    links: { details: detailsLink(m.id, prefix) },
  };
}

/**
 * OpenRouter's `links.details`: the model's endpoints list, under the prefix the model was asked
 * on. That route takes `{author}/{slug}`, and a one-segment id (a model known only from a local
 * server's listing, `llama3:8b`) as `{id}`; an id of another shape (more segments) links to the
 * model itself.
 */
function detailsLink(id: string, prefix: ModelsPrefix): string {
  const parts = id.split('/');
  // Escaped for a path, but `:` (`gpt-4o:free`, `llama3:8b`) kept as written: a path allows it.
  const path = parts.map((x) => encodeURIComponent(x).replace(/%3A/gi, ':')).join('/');
  return parts.length <= 2 && parts.every((p) => p !== '')
    ? `${prefix}/models/${path}/endpoints`
    : `/v1/models/${path}`;
}
