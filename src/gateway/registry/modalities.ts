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

/**
 * A 400 naming the first modality an admin entry gives that is not a known one (`picture`,
 * `Text`, `embedding`): `GET /v1/models` lists a model's modalities as they are stored, and a
 * client filtering by OpenRouter's names would never find a model stored under another. An empty
 * list is a 400 too: a model takes and gives something (`/v1/models` would call it `->`, and no
 * modality filter would find it); null (unset: the lower layers' list) is what a cleared list
 * means. Lists from the config file, the default file and upstream listings are not checked here.
 */
export function checkModalities(input: {
  input_modalities?: string[] | null;
  output_modalities?: string[] | null;
}): void {
  for (const [field, known] of [
    ['input_modalities', INPUT_MODALITIES],
    ['output_modalities', OUTPUT_MODALITIES],
  ] as const) {
    const names = known.slice(0, -1).join(', ');
    if (input[field]?.length === 0)
      throw badRequest(
        `${field}: must name at least one modality (${names} or ${known.at(-1)}); null takes the default back`,
        field,
      );
    const bad = input[field]?.find((m) => !known.includes(m));
    if (bad !== undefined)
      throw badRequest(
        `${field}: ${JSON.stringify(bad)} is not a known modality; use ${names} or ${known.at(-1)}`,
        field,
      );
  }
}
