import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';
import { listChannel, startModelListGateway } from './model-list-gateway.js';

/**
 * A model found on an embeddings-only channel (Voyage, Jina, Cohere) that no registry entry
 * describes can only embed: GET /v1/models lists it as an embedding model, as registry
 * embedding models are listed, so `?output_modalities=embeddings` finds it. A registry entry
 * stays authoritative, and a name a chat-capable channel also serves may be either (text, as before).
 */
let gw: TestGateway;
let key: string;

const VOYAGE_NEW = 'voyage-context-3'; // no registry entry
const JINA_NEW = 'jina-embeddings-v5-text-small';
const COHERE_NEW = 'embed-multilingual-v3.0';
const SHARED = 'bge-m3'; // also on an OpenAI-compatible server: may chat or embed
const DISABLED_TOO = 'mxbai-embed-large'; // also on a disabled OpenAI-compatible channel
const DESCRIBED = 'acme/odd-one'; // a config entry says text; it stays text
const CHAT = 'acme/chat-1';
const KNOWN = 'voyage-3.5'; // the registry's voyageai/voyage-3.5

beforeAll(async () => {
  const s = await startModelListGateway({
    channels: [
      listChannel('voy', [VOYAGE_NEW, SHARED, DISABLED_TOO, DESCRIBED, KNOWN], { kind: 'voyage' }),
      listChannel('jin', [JINA_NEW], { kind: 'jina' }),
      listChannel('coh', [COHERE_NEW], { kind: 'cohere', base_url: 'http://127.0.0.1:9' }),
      listChannel('vllm', [SHARED, CHAT], { keys: [] }),
      listChannel('off', [DISABLED_TOO], { keys: [], status: 2 }),
    ],
    models: [{ id: DESCRIBED, output_modalities: ['text'] }, { id: CHAT }],
  });
  gw = s.gw;
  key = await s.newKey();
});
afterAll(async () => gw?.close());

const listed = async (qs: string) => {
  const r = await gw.call('GET', `/v1/models${qs}`, { token: key });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data as Array<Record<string, any>>;
};

describe('GET /v1/models for models found on embeddings-only channels', () => {
  it('lists them as embedding models, found by ?output_modalities=embeddings', async () => {
    const ids = (await listed('?output_modalities=embeddings')).map((m) => m.id).sort();
    expect(ids).toEqual([COHERE_NEW, DISABLED_TOO, JINA_NEW, VOYAGE_NEW, 'voyageai/voyage-3.5'].sort());
    const text = (await listed('?output_modalities=text')).map((m) => m.id).sort();
    expect(text).toEqual([CHAT, DESCRIBED, SHARED].sort());
  });

  it('with the architecture and parameters a registry embedding model shows', async () => {
    const all = await listed('');
    const known = all.find((m) => m.id === 'voyageai/voyage-3.5')!;
    const found = all.find((m) => m.id === VOYAGE_NEW)!;
    expect(found.architecture).toEqual({
      modality: 'text->embeddings',
      input_modalities: ['text'],
      output_modalities: ['embeddings'],
    });
    expect(found.architecture).toEqual(known.architecture);
    expect(found.supported_parameters).toEqual(known.supported_parameters);
    expect(found.supported_parameters).toEqual([
      'input_type',
      'truncation',
      'encoding_format',
      'dimensions',
      'output_dimension',
      'output_dtype',
    ]);
    expect(found.top_provider.max_completion_tokens).toBeNull();
    const one = await gw.call('GET', `/v1/models/${JINA_NEW}`, { token: key });
    expect(one.body.architecture.output_modalities).toEqual(['embeddings']);
  });

  it('still serves them on the embeddings endpoint only', async () => {
    const emb = (await listed('?endpoint=embeddings')).map((m) => m.id);
    expect(emb).toEqual(expect.arrayContaining([VOYAGE_NEW, JINA_NEW, COHERE_NEW, SHARED]));
    const chat = (await listed('?endpoint=chat')).map((m) => m.id).sort();
    expect(chat).toEqual([CHAT, SHARED].sort());
  });
});
