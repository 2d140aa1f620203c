/**
 * `GET {base}/models` of OpenAI and the servers that copy it, read for what each server adds to
 * OpenAI's `{id, created, owned_by}`: the context window (vLLM `max_model_len`, OpenRouter and
 * llama.cpp `context_length` or `meta.n_ctx_train`, Groq `context_window`, and the Gemini and
 * Anthropic names a proxy of those may pass on), the output limit at the top level (Groq
 * `max_completion_tokens`), and OpenRouter's model object (openrouter.md
 * §11), which any gateway speaking OpenRouter's list format also answers: `name`,
 * `top_provider.max_completion_tokens`, `architecture.input_modalities`/`output_modalities`,
 * `supported_parameters` and `pricing`.
 */
import {
  field,
  label,
  listItems,
  modalities,
  parameters,
  prices,
  tokenCount,
  unixSeconds,
} from '../shared/model-listing.js';
import type { ListedModel } from '../types.js';

/** Where servers put the context window, in the order read (the first that checks wins). */
const CONTEXT_FIELDS = [
  'context_length',
  'max_model_len',
  'context_window',
  'inputTokenLimit',
  'max_input_tokens',
];

export function parseOpenAiModelList(body: string): ListedModel[] {
  const parsed = JSON.parse(body) as { data?: unknown };
  const out: ListedModel[] = [];
  for (const m of listItems(parsed.data)) {
    if (typeof m.id !== 'string') continue;
    const arch = m.architecture;
    out.push({
      name: m.id,
      contextLength: contextLength(m),
      maxCompletionTokens:
        tokenCount(field(m.top_provider, 'max_completion_tokens')) ?? tokenCount(m.max_completion_tokens),
      created: unixSeconds(m.created),
      displayName: label(m.name),
      inputModalities: modalities(field(arch, 'input_modalities')),
      outputModalities: modalities(field(arch, 'output_modalities')),
      supportedParameters: parameters(m.supported_parameters),
      pricing: prices(m.pricing),
    });
  }
  return out;
}

function contextLength(m: Record<string, unknown>): number | undefined {
  for (const f of CONTEXT_FIELDS) {
    // llama.cpp gives its training window under `meta`.
    const n = tokenCount(m[f]) ?? tokenCount(field(m.meta, f === 'context_length' ? 'n_ctx_train' : f));
    if (n !== undefined) return n;
  }
  return tokenCount(field(m.top_provider, 'context_length'));
}
