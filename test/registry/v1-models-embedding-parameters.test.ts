import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';
import { listChannel, startModelListGateway } from './model-list-gateway.js';

/**
 * An embedding model's `supported_parameters` in /v1/models is what the gateway forwards to the
 * channels serving it, by each channel's embedding adapter: Voyage and Cohere take input_type,
 * truncation, the dimension and output_dtype; Jina no output_dtype (floats only); an
 * OpenAI-compatible server OpenAI's fields only (no input_type, no truncation). It used to be one
 * list for every embedding model (input_type, encoding_format, dimensions).
 */
let gw: TestGateway;
let key: string;

const VOYAGE = [
  'input_type',
  'truncation',
  'encoding_format',
  'dimensions',
  'output_dimension',
  'output_dtype',
];
const JINA = ['input_type', 'truncation', 'encoding_format', 'dimensions', 'output_dimension'];
const OPENAI = ['encoding_format', 'dimensions', 'output_dimension', 'user'];

beforeAll(async () => {
  const s = await startModelListGateway({
    channels: [
      listChannel('voy', ['voyage-3.5', 'voyage-4-lite', 'voyage-context-3'], { kind: 'voyage' }),
      listChannel('jin', ['jina-embeddings-v3'], { kind: 'jina' }),
      listChannel('coh', ['embed-v4.0'], { kind: 'cohere' }),
      // A proxy (LiteLLM, one-api) in front of OpenAI and Voyage: the OpenAI adapter serves it.
      listChannel('proxy', ['text-embedding-3-small', 'voyage-4', 'voyage-4-lite']),
    ],
  });
  gw = s.gw;
  key = await s.newKey();
});
afterAll(async () => gw?.close());

const params = async () => {
  const r = await gw.call('GET', '/v1/models?output_modalities=embeddings', { token: key });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return Object.fromEntries(
    (r.body.data as Array<{ id: string; supported_parameters: string[] }>).map((m) => [
      m.id,
      [...m.supported_parameters].sort(),
    ]),
  );
};
const sorted = (a: string[]) => [...a].sort();

describe('supported_parameters of embedding models', () => {
  it("lists what each model's channels are sent", async () => {
    expect(await params()).toEqual({
      'voyageai/voyage-3.5': sorted(VOYAGE),
      'voyage-context-3': sorted(VOYAGE),
      'jinaai/jina-embeddings-v3': sorted(JINA),
      'cohere/embed-v4.0': sorted(VOYAGE),
      'openai/text-embedding-3-small': sorted(OPENAI),
      // Only through the OpenAI-compatible proxy: its input_type would be dropped.
      'voyageai/voyage-4': sorted(OPENAI),
      // Voyage itself and the proxy: what some channel takes.
      'voyageai/voyage-4-lite': sorted([...new Set([...VOYAGE, ...OPENAI])]),
    });
  });

  it('filters by them', async () => {
    const r = await gw.call('GET', '/v1/models?supported_parameters=output_dtype,truncation', { token: key });
    expect(r.body.data.map((m: { id: string }) => m.id).sort()).toEqual(
      ['cohere/embed-v4.0', 'voyage-context-3', 'voyageai/voyage-3.5', 'voyageai/voyage-4-lite'].sort(),
    );
    const t = await gw.call('GET', '/v1/models?supported_parameters=input_type', { token: key });
    expect(t.body.data.map((m: { id: string }) => m.id)).not.toContain('openai/text-embedding-3-small');
  });

  it('shows per endpoint what that channel takes', async () => {
    const r = await gw.call('GET', '/v1/models/voyageai/voyage-4-lite/endpoints', { token: key });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const byTag = Object.fromEntries(
      r.body.data.endpoints.map((e: { tag: string; supported_parameters: string[] }) => [
        e.tag,
        sorted(e.supported_parameters),
      ]),
    );
    expect(byTag).toEqual({ voy: sorted(VOYAGE), proxy: sorted(OPENAI) });
  });
});
