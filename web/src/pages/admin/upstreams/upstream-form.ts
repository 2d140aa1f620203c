/**
 * The upstream form: its fields, a channel's values as the form shows them, and the body the API
 * takes from the form (settings sent only when the prices or the headers changed).
 */
import { ApiError } from '../../../api';
import { type FieldSpec, type FormValues, numOrNull, str } from '../../../components/SpecForm';
import { NAME_MAX } from '../../../field-rules';
import { splitList } from '../../../format';
import { CHANNEL_KINDS, type Channel } from '../../../types';

/** The bound of priority and weight (32-bit columns). */
const INT32_MAX = 2_147_483_647;

export function fields(editing: boolean): FieldSpec[] {
  return [
    { name: 'name', label: 'Name', required: true, maxLength: NAME_MAX },
    { name: 'kind', label: 'Kind', type: 'select', options: CHANNEL_KINDS.map((k) => [k, k]) },
    {
      name: 'base_url',
      label: 'Base URL',
      type: 'url',
      placeholder: 'https://api.example.com/v1',
      hint: "Empty: the kind's public API. For an OpenAI-compatible server, the address ending in /v1 (http://127.0.0.1:11434/v1).",
      wide: true,
    },
    {
      name: 'keys',
      label: 'Upstream keys',
      type: 'textarea',
      hint: editing
        ? 'One per line. Leave empty to keep the stored keys; a new base URL on another host needs them again.'
        : 'One per line; used in turn.',
    },
    {
      name: 'models',
      label: 'Models',
      type: 'textarea',
      hint: 'Model ids this upstream serves, comma or line separated. Empty: the models its GET /models lists (OpenAI-compatible, Anthropic, Gemini).',
    },
    {
      name: 'model_mapping',
      label: 'Model mapping (JSON)',
      type: 'textarea',
      hint: 'Optional: {"public-model": "upstream-model"}',
    },
    {
      name: 'settings_pricing',
      label: 'Prices on this upstream (JSON)',
      type: 'textarea',
      hint: 'Optional: what this upstream charges, by model id, over the model\'s own prices (USD per token): {"openai/gpt-4o-mini": {"prompt": "0.0000001", "completion": "0.0000004"}}. Fields left out keep the model\'s price.',
      wide: true,
    },
    {
      name: 'settings_headers',
      label: 'Extra request headers (JSON)',
      type: 'textarea',
      hint: editing
        ? 'Optional: {"x-team": "search"}. Stored values are shown masked: a masked value keeps the stored one; a new base URL on another host needs them again.'
        : 'Optional: headers sent with every request to this upstream: {"x-team": "search"}.',
      wide: true,
    },
    {
      name: 'priority',
      label: 'Priority',
      type: 'number',
      min: -INT32_MAX,
      max: INT32_MAX,
      integer: true,
      hint: 'Higher is tried first.',
    },
    {
      name: 'weight',
      label: 'Weight',
      type: 'number',
      min: 1,
      max: INT32_MAX,
      integer: true,
      hint: 'Share among upstreams of equal priority: a whole number, at least 1.',
    },
    {
      name: 'status',
      label: 'Status',
      type: 'select',
      options: [
        ['1', 'Enabled'],
        ['2', 'Disabled'],
      ],
    },
  ];
}

export function toValues(c?: Channel): FormValues {
  return {
    name: c?.name ?? '',
    kind: c?.kind ?? 'openai-compatible',
    base_url: c?.base_url ?? '',
    keys: '',
    models: (c?.models ?? []).join(', '),
    model_mapping:
      c?.model_mapping && Object.keys(c.model_mapping).length ? JSON.stringify(c.model_mapping, null, 2) : '',
    settings_pricing: pricingText(c),
    settings_headers: headersText(c),
    priority: String(c?.priority ?? 0),
    weight: String(c?.weight ?? 1),
    status: String(c?.status ?? 1),
  };
}

/** The channel's `settings.pricing` as the form shows it; empty when it has none. */
function pricingText(c?: Channel): string {
  const p = c?.settings?.pricing;
  return p && typeof p === 'object' && Object.keys(p).length ? JSON.stringify(p, null, 2) : '';
}

/** The channel's `settings.headers` as the form shows it (values masked by the API); empty when none. */
function headersText(c?: Channel): string {
  const h = c?.settings?.headers;
  return h && typeof h === 'object' && Object.keys(h).length ? JSON.stringify(h, null, 2) : '';
}

/** A settings field the form shows as JSON: its value when changed (null: cleared), else undefined. */
function changedJson(text: string, before: string, field: string, creating: boolean): unknown {
  if (creating ? !text : text === before.trim()) return undefined;
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(400, `settings.${field.replace('settings_', '')}: not valid JSON`, field);
  }
}

export function toBody(v: FormValues, c?: Channel): Record<string, unknown> {
  let mapping: Record<string, string> = {};
  if (str(v.model_mapping)) {
    try {
      mapping = JSON.parse(str(v.model_mapping));
    } catch {
      throw new ApiError(400, 'model_mapping: not valid JSON', 'model_mapping');
    }
  }
  const body: Record<string, unknown> = {
    name: str(v.name),
    kind: v.kind,
    base_url: str(v.base_url),
    models: splitList(str(v.models)),
    model_mapping: mapping,
    priority: numOrNull(v.priority) ?? 0,
    weight: numOrNull(v.weight) ?? 1,
    status: Number(v.status),
  };
  const keys = str(v.keys)
    .split('\n')
    .map((k) => k.trim())
    .filter(Boolean);
  if (keys.length || !c) body.keys = keys;
  // The form sends every field it shows, and save() the settings it opened with: only over the
  // revision it opened with (`edit` reads the channel), or a change made since would be undone.
  if (c) Object.assign(body, { id: c.id, revision: c.revision });
  // `settings` is replaced whole by PUT: it goes only when the prices or the headers changed
  // (save() lays them over the channel's other settings, which the form does not show: rpm...).
  const pricing = changedJson(str(v.settings_pricing), pricingText(c), 'settings_pricing', !c);
  const headers = changedJson(str(v.settings_headers), headersText(c), 'settings_headers', !c);
  if (pricing !== undefined || headers !== undefined) {
    const settings: Record<string, unknown> = {};
    if (pricing !== undefined) settings.pricing = pricing;
    if (headers !== undefined) settings.headers = headers;
    body.settings = settings;
  }
  return body;
}
