import { badRequest } from '../errors.js';

/** OpenRouter's input modalities (its SDK's `InputModality`): what a request to a model may carry. */
export const INPUT_MODALITIES: readonly string[] = ['text', 'image', 'file', 'audio', 'video'];

/** OpenRouter's output modalities (its SDK's `OutputModality`); embedding models output `embeddings`. */
export const OUTPUT_MODALITIES: readonly string[] = [
  'text',
  'image',
  'embeddings',
  'audio',
  'video',
  'rerank',
  'speech',
  'transcription',
];

type ModalityField = 'input_modalities' | 'output_modalities';

/**
 * What is wrong with an entry's modality lists, in order, each with its field and message: a
 * name that is not a known one (`picture`, `Text`, `embedding`: `GET /v1/models` lists a model's
 * modalities as they are stored, and a client filtering by OpenRouter's names would never find a
 * model stored under another), or an empty list (a model takes and gives something: `/v1/models`
 * would call it `->`, and no modality filter would find it; null, unset, takes the lower layers'
 * list back). The admin API (checkModalities) and the config file's `models` (load-config.ts) are
 * checked; the default file and upstream listings are not.
 */
export function unknownModalities(input: {
  input_modalities?: unknown;
  output_modalities?: unknown;
}): Array<{ field: ModalityField; message: string }> {
  const out: Array<{ field: ModalityField; message: string }> = [];
  for (const [field, known] of [
    ['input_modalities', INPUT_MODALITIES],
    ['output_modalities', OUTPUT_MODALITIES],
  ] as const) {
    const given = input[field];
    if (!Array.isArray(given)) continue;
    const names = `${known.slice(0, -1).join(', ')} or ${known.at(-1)}`;
    if (given.length === 0)
      out.push({
        field,
        message: `must name at least one modality (${names}); leave it out, or null over the API, for the default list`,
      });
    // Not a string: the schema's problem (the admin route's, the config file's).
    for (const m of given)
      if (typeof m === 'string' && !known.includes(m))
        out.push({ field, message: `${JSON.stringify(m)} is not a known modality; use ${names}` });
  }
  return out;
}

/** A 400 naming the first problem of an admin entry's modality lists (unknownModalities). */
export function checkModalities(input: {
  input_modalities?: string[] | null;
  output_modalities?: string[] | null;
}): void {
  const bad = unknownModalities(input)[0];
  if (bad) throw badRequest(`${bad.field}: ${bad.message}`, bad.field);
}
