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
 * client filtering by OpenRouter's names would never find a model stored under another. Lists
 * from the config file, the default file and upstream listings are not checked here.
 */
export function checkModalities(input: { input_modalities?: string[]; output_modalities?: string[] }): void {
  for (const [field, known] of [
    ['input_modalities', INPUT_MODALITIES],
    ['output_modalities', OUTPUT_MODALITIES],
  ] as const) {
    const bad = input[field]?.find((m) => !known.includes(m));
    if (bad !== undefined)
      throw badRequest(
        `${field}: ${JSON.stringify(bad)} is not a known modality; use ${known.slice(0, -1).join(', ')} or ${known.at(-1)}`,
        field,
      );
  }
}
