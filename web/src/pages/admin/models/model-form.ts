/** The Models page's form: its fields, and the bodies it sends for a new model and for an edit. */
import { type FieldSpec, type FormValues, numOrNull, str } from '../../../components/SpecForm';
import { splitList } from '../../../format';
import type { ModelEntry } from '../../../types';

const PRICES = ['prompt', 'completion', 'request', 'image', 'input_cache_read', 'input_cache_write'] as const;
/** Prices that cost the prompt price when nothing sets them (src/gateway/registry/cost.ts). */
const CACHE_PRICES = ['pricing_input_cache_read', 'pricing_input_cache_write'];
const LISTS = ['input_modalities', 'output_modalities', 'supported_parameters'] as const;

/**
 * A modality list stored empty, as the console's cleared field was before it sent null: the API
 * refuses `[]` now, but an entry written before keeps it and the model is listed with none. The
 * form shows it as the empty field it is and saves it as null (the default), saying so under it:
 * before, the field looked cleared already and clearing it sent nothing.
 */
function storedEmpty(m: ModelEntry | undefined, k: string): boolean {
  return (k === 'input_modalities' || k === 'output_modalities') && m?.[k]?.length === 0;
}

export function fields(creating: boolean, m?: ModelEntry): FieldSpec[] {
  const list: FieldSpec[] = [
    { name: 'name', label: 'Display name', required: true },
    {
      name: 'upstream_model',
      label: 'Upstream model',
      hint: 'Name sent upstream, when it differs from the id. Empty: the default.',
    },
    {
      name: 'context_length',
      label: 'Context length (tokens)',
      type: 'number',
      min: 1,
      hint: 'Empty: the default (the config file or built-in list, else 8,192).',
    },
    { name: 'max_completion_tokens', label: 'Max completion tokens', type: 'number', min: 1 },
    { name: 'pricing_prompt', label: 'Prompt price (USD per token)', placeholder: '0.000003' },
    { name: 'pricing_completion', label: 'Completion price (USD per token)', placeholder: '0.000015' },
    {
      name: 'pricing_input_cache_read',
      label: 'Cached input price (USD per token)',
      placeholder: '0.0000003',
    },
    {
      name: 'pricing_input_cache_write',
      label: 'Cache write price (USD per token)',
      placeholder: '0.00000375',
    },
    { name: 'pricing_request', label: 'Price per request (USD)', placeholder: '0' },
    { name: 'pricing_image', label: 'Price per image (USD)', placeholder: '0' },
    // The names the server takes (src/gateway/registry/modalities.ts); another is a 400 naming it.
    {
      name: 'input_modalities',
      label: 'Input modalities',
      placeholder: 'text, image',
      hint: 'Any of text, image, file, audio, video.',
    },
    {
      name: 'output_modalities',
      label: 'Output modalities',
      placeholder: 'text',
      hint: 'Any of text, image, embeddings, audio, video, rerank, speech, transcription.',
    },
    {
      name: 'supported_parameters',
      label: 'Supported parameters',
      wide: true,
      placeholder: 'temperature, top_p, max_tokens, tools',
      hint: 'Empty: the default (the config file or built-in list, else none listed).',
    },
  ];
  // A cleared price is sent as null: the admin's price goes, and the one below it applies again.
  for (const f of list)
    if (f.name.startsWith('pricing_'))
      f.hint = CACHE_PRICES.includes(f.name)
        ? 'Empty: the default (the config file or built-in list, else the prompt price).'
        : 'Empty: the default (the config file or built-in list, else 0).';
  if (creating) {
    list.unshift({ name: 'id', label: 'Model id', required: true, placeholder: 'openai/gpt-4o-mini' });
    // What a new model takes for a field left empty, said where it is left empty.
    for (const f of list) {
      if (f.name.startsWith('pricing_'))
        f.hint = CACHE_PRICES.includes(f.name) ? 'Empty: the prompt price.' : 'Empty: 0.';
      if (f.name.endsWith('_modalities')) f.hint = `${f.hint} Empty: text.`;
      if (f.name === 'supported_parameters') f.hint = 'Empty: none.';
    }
  }
  // A cleared list is sent as null too: the model takes the list below the admin's again.
  else
    for (const f of list)
      if (f.name.endsWith('_modalities'))
        f.hint = storedEmpty(m, f.name)
          ? `${f.hint} Stored as an empty list (an older console's cleared field), so no modality filter finds this model. Saving with this field empty takes the default back (the config file or built-in list, else text).`
          : `${f.hint} Empty: the default (the config file or built-in list, else text).`;
  return list;
}

/** The form's values for a model; a new one starts empty (its placeholders show examples). */
export function toValues(m?: ModelEntry): FormValues {
  return {
    id: m?.id ?? '',
    name: m?.name ?? '',
    upstream_model: m?.upstream_model ?? '',
    context_length: m?.context_length ? String(m.context_length) : '',
    max_completion_tokens: m?.max_completion_tokens ? String(m.max_completion_tokens) : '',
    pricing_prompt: m?.pricing?.prompt ?? '',
    pricing_completion: m?.pricing?.completion ?? '',
    pricing_request: m?.pricing?.request ?? '',
    pricing_image: m?.pricing?.image ?? '',
    pricing_input_cache_read: m?.pricing?.input_cache_read ?? '',
    pricing_input_cache_write: m?.pricing?.input_cache_write ?? '',
    input_modalities: (m?.input_modalities ?? []).join(', '),
    output_modalities: (m?.output_modalities ?? []).join(', '),
    supported_parameters: (m?.supported_parameters ?? []).join(', '),
  };
}

/**
 * A new model: the fields the admin filled, nothing else. Empty ones used to go as prices of
 * "0", text only and no parameters, which the server stored as the admin's values; over a
 * built-in model's id that made its chats free (the server now refuses such a POST).
 */
export function createBody(v: FormValues): Record<string, unknown> {
  const body: Record<string, unknown> = { id: str(v.id), name: str(v.name) };
  if (str(v.upstream_model)) body.upstream_model = str(v.upstream_model);
  for (const k of ['context_length', 'max_completion_tokens']) {
    const n = numOrNull(v[k]);
    if (n !== null) body[k] = n;
  }
  const pricing: Record<string, string> = {};
  for (const k of PRICES) if (str(v[`pricing_${k}`])) pricing[k] = str(v[`pricing_${k}`]);
  if (Object.keys(pricing).length) body.pricing = pricing;
  for (const k of LISTS) {
    const list = splitList(str(v[k]));
    if (list.length) body[k] = list;
  }
  return body;
}

/**
 * An edit: the fields changed in the form. Sent as they were, the others pinned the model's
 * current values in the admin's entry (a built-in model renamed kept today's prices over later
 * defaults), and put back what another administrator changed while the form was open. A price
 * goes alone for the same reason (the server keeps the entry's other prices).
 */
export function editBody(v: FormValues, m: ModelEntry): Record<string, unknown> {
  const start = toValues(m);
  const changed = (k: string) => str(v[k]) !== str(start[k]);
  const body: Record<string, unknown> = { id: m.id };
  if (changed('name')) body.name = str(v.name);
  // Fields with a default below the admin's entry: a cleared one is null, which the server takes
  // as "back to the default" (left out, the PUT kept the old value).
  if (changed('upstream_model')) body.upstream_model = str(v.upstream_model) || null;
  if (changed('context_length')) body.context_length = numOrNull(v.context_length);
  if (changed('max_completion_tokens')) body.max_completion_tokens = numOrNull(v.max_completion_tokens);
  // A cleared price is null too: before, it went as "0", which pinned the model free over the
  // price of the built-in list or the config file.
  const pricing: Record<string, string | null> = {};
  for (const k of PRICES) if (changed(`pricing_${k}`)) pricing[k] = str(v[`pricing_${k}`]) || null;
  if (Object.keys(pricing).length) body.pricing = pricing;
  // A cleared list is null as well: sent as [], it pinned an empty list over the built-in one
  // (no modalities at all, or no parameter list).
  // A modality list stored empty goes as null when the field is left empty (storedEmpty).
  for (const k of LISTS) {
    const list = splitList(str(v[k]));
    if (changed(k) || (storedEmpty(m, k) && !list.length)) body[k] = list.length ? list : null;
  }
  return body;
}

/** The fields a "New model" form filled in, carried into the edit form of the model that has that id. */
export function filledIn(v: FormValues): FormValues {
  return Object.fromEntries(Object.entries(v).filter(([k, x]) => k !== 'id' && str(x) !== ''));
}

/** Where a model's description comes from below the admin's changes, in words. */
export const ORIGIN: Record<string, { badge: string; known: string; reset: string; notice: string }> = {
  default: {
    badge: 'built in',
    known: 'built in',
    reset: 'come from the built-in list again.',
    notice: 'to its built-in description',
  },
  config: {
    badge: 'config file',
    known: 'declared in the config file',
    reset: 'come from the config file again.',
    notice: 'to its description in the config file',
  },
  discovered: {
    badge: 'upstream',
    known: 'served by an upstream',
    // An upstream says no prices (at most a context window): a priced model becomes free again.
    reset:
      'go back to what its upstream says, which sets no prices: its requests cost nothing until it is priced again.',
    notice: 'to what its upstream says',
  },
};
