import { describe, expect, it } from 'vitest';
import { parseOpenAiModelList } from './openai-model-list.js';

const parse = (data: unknown) => parseOpenAiModelList(JSON.stringify({ object: 'list', data }));

describe('parseOpenAiModelList', () => {
  it('reads the fields each OpenAI-compatible server adds', () => {
    expect(
      parse([
        // Groq: its window and output limit at the top level.
        {
          id: 'llama-3.3-70b-versatile',
          object: 'model',
          created: 1733447754,
          owned_by: 'Meta',
          active: true,
          context_window: 131072,
          public_apps: null,
          max_completion_tokens: 32768,
        },
        // llama.cpp: the training window under `meta`.
        {
          id: 'qwen2.5-7b',
          object: 'model',
          created: 1735000000,
          owned_by: 'llamacpp',
          meta: { n_ctx_train: 32768 },
        },
        // OpenAI itself: nothing but the date.
        { id: 'gpt-4o-mini', object: 'model', created: 1721172741, owned_by: 'system' },
      ]),
    ).toEqual(
      [
        {
          name: 'llama-3.3-70b-versatile',
          contextLength: 131072,
          maxCompletionTokens: 32768,
          created: 1733447754,
        },
        { name: 'qwen2.5-7b', contextLength: 32768, created: 1735000000 },
        { name: 'gpt-4o-mini', created: 1721172741 },
      ].map((m) => expect.objectContaining(m)),
    );
  });

  it('leaves out a fact that does not check, and keeps the model', () => {
    const [m] = parse([
      {
        id: 'odd/model',
        name: ' \u0007 ',
        created: 1.5,
        context_length: '4096',
        architecture: { input_modalities: ['text', 7, 'Image!'], output_modalities: [] },
        pricing: { prompt: '-1', completion: 0.000002, request: '0', discount: '0.1', audio: '0.0001' },
        top_provider: { max_completion_tokens: 0 },
        supported_parameters: [],
      },
    ]);
    expect(m).toEqual({
      name: 'odd/model',
      contextLength: undefined,
      maxCompletionTokens: undefined,
      created: undefined,
      displayName: undefined,
      inputModalities: ['text'],
      outputModalities: undefined,
      supportedParameters: undefined,
      // Only price strings, and only the prices a bill reads.
      pricing: { request: '0' },
    });
  });

  it('skips items that are no models; a list that is no array is no listing', () => {
    expect(parse([null, 'x', { object: 'model' }, { id: 'ok' }]).map((m) => m.name)).toEqual(['ok']);
    expect(parseOpenAiModelList('{"object":"list"}')).toEqual([]);
    expect(() => parse({ id: 'x' })).toThrow(TypeError);
  });
});
