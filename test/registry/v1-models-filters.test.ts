import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';
import { listChannel, startModelListGateway } from './model-list-gateway.js';

/**
 * GET /v1/models filtered as OpenRouter's list is (reference openrouter.md §11):
 * `output_modalities` (a comma list, or `all`) and `supported_parameters` (a comma list, every
 * one supported). Without them the list is what it always was: every model this key can use.
 */
let gw: TestGateway;
let key: string;

const CHAT = 'acme/chat-1'; // text -> text, tools and temperature
const PAINTER = 'acme/painter'; // text + image -> image + text
const SPEAKER = 'acme/speaker'; // text -> audio
const EMBED = 'openai/text-embedding-3-small'; // text -> embeddings (default model list)
const ALL = [CHAT, PAINTER, SPEAKER, EMBED].sort();

beforeAll(async () => {
  const s = await startModelListGateway({
    channels: [listChannel('up', [CHAT, PAINTER, SPEAKER, EMBED])],
    models: [
      { id: CHAT, supported_parameters: ['tools', 'tool_choice', 'temperature'] },
      {
        id: PAINTER,
        input_modalities: ['text', 'image'],
        output_modalities: ['image', 'text'],
        supported_parameters: ['temperature'],
      },
      { id: SPEAKER, output_modalities: ['audio'] },
    ],
  });
  gw = s.gw;
  key = await s.newKey();
});
afterAll(async () => gw?.close());

const list = (qs: string, path = '/v1/models') => gw.call('GET', `${path}${qs}`, { token: key });
const listed = async (qs: string, path = '/v1/models') => {
  const r = await list(qs, path);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.total_count).toBe(r.body.data.length);
  return (r.body.data as { id: string }[]).map((m) => m.id).sort();
};

describe('GET /v1/models?output_modalities=', () => {
  it('keeps every model without the parameter, and with `all`', async () => {
    expect(await listed('')).toEqual(ALL);
    expect(await listed('?output_modalities=all')).toEqual(ALL);
    expect(await listed('?output_modalities=embeddings,all')).toEqual(ALL);
    // The openai SDK's models.list() sends no query: it sees every model, embeddings included.
    const sdk = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const ids: string[] = [];
    for await (const m of sdk.models.list()) ids.push(m.id);
    expect(ids.sort()).toEqual(ALL);
  });

  it('keeps the models that output any of the listed modalities', async () => {
    expect(await listed('?output_modalities=text')).toEqual([CHAT, PAINTER].sort());
    expect(await listed('?output_modalities=embeddings')).toEqual([EMBED]);
    expect(await listed('?output_modalities=image')).toEqual([PAINTER]);
    expect(await listed('?output_modalities=audio,embeddings')).toEqual([SPEAKER, EMBED].sort());
    expect(await listed('?output_modalities=text,%20image')).toEqual([CHAT, PAINTER].sort());
    // A modality OpenRouter knows and no model here has: an empty list, not an error.
    expect(await listed('?output_modalities=video')).toEqual([]);
    expect(await listed('?output_modalities=embeddings', '/api/v1/models')).toEqual([EMBED]);
  });

  it('combines with the key allow-list and `endpoint`', async () => {
    expect(await listed('?output_modalities=text&endpoint=chat')).toEqual([CHAT, PAINTER].sort());
    const cookie = await gw.login();
    const only = (
      await gw.call('POST', '/api/key', { cookie, body: { name: 'only-chat', allowed_models: ['acme/*'] } })
    ).body.data.key;
    const r = await gw.call('GET', '/v1/models?output_modalities=embeddings,audio', { token: only });
    expect(r.status).toBe(200);
    expect(r.body.data.map((m: { id: string }) => m.id)).toEqual([SPEAKER]);
  });

  it.each([
    ['output_modalities=', 'empty'],
    ['output_modalities=text,,image', 'empty item'],
    ['output_modalities=pictures', 'unknown modality'],
    ['output_modalities=TEXT', 'modalities are lower case'],
    ['output_modalities=all,pictures', 'unknown beside all'],
  ])('answers 400 naming the parameter for %s (%s)', async (qs) => {
    const r = await list(`?${qs}`);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 400, param: 'output_modalities' });
    expect(r.body.error.message).toContain('output_modalities');
  });
});

describe('GET /v1/models?supported_parameters=', () => {
  it('keeps the models that support every listed parameter', async () => {
    expect(await listed('?supported_parameters=tools')).toEqual([CHAT]);
    expect(await listed('?supported_parameters=temperature')).toEqual([CHAT, PAINTER].sort());
    expect(await listed('?supported_parameters=tools,temperature')).toEqual([CHAT]);
    expect(await listed('?supported_parameters=tools,seed')).toEqual([]);
    expect(await listed('?supported_parameters=temperature&output_modalities=image')).toEqual([PAINTER]);
  });

  it('answers 400 naming the parameter for an empty list or item', async () => {
    for (const qs of ['supported_parameters=', 'supported_parameters=tools,']) {
      const r = await list(`?${qs}`);
      expect(r.status, qs).toBe(400);
      expect(r.body.error).toMatchObject({ code: 400, param: 'supported_parameters' });
    }
  });
});
