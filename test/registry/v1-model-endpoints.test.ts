import { OpenRouter } from '@openrouter/sdk';
import { NotFoundResponseError } from '@openrouter/sdk/models/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';
import { listChannel, startModelListGateway } from './model-list-gateway.js';

/**
 * OpenRouter's `GET /api/v1/models/{author}/{slug}/endpoints` (reference openrouter.md §11;
 * @openrouter/sdk `endpoints.list`): the upstreams (channels) serving a model, each with its own
 * prices, the parameters it takes and a status from the health records, and nothing of its
 * address or keys.
 */
let gw: TestGateway;
let key: string; // every model
let onlyEmbed: string; // allowed_models: voyageai/*

const CHAT = 'acme/chat-1';
const EMBED = 'voyageai/voyage-4-large'; // default registry entry
const SECRETS = ['sk-primary-secret', 'sk-claude-secret', 'pa-voyage-secret', 'sk-off-secret'];

beforeAll(async () => {
  const s = await startModelListGateway({
    gateway: { circuit_failures: 2, circuit_cooldown_ms: 3_600_000 },
    channels: [
      listChannel('primary', [CHAT], {
        keys: [SECRETS[0]],
        priority: 10,
        settings: {
          provider: 'Acme Cloud',
          quantization: 'fp8',
          pricing: { [CHAT]: { prompt: '0.0000005' } },
        },
      }),
      listChannel('claude', [CHAT], {
        kind: 'anthropic',
        base_url: 'http://127.0.0.1:9/claude',
        keys: [SECRETS[1]],
      }),
      listChannel('voyage', [EMBED], { kind: 'voyage', keys: [SECRETS[2]] }),
      listChannel('off', [CHAT], { keys: [SECRETS[3]], status: 2 }),
      // Known only from this channel's listing, under an id of one segment.
      listChannel('local', ['local-llama']),
    ],
    models: [
      {
        id: CHAT,
        name: 'Acme: Chat One',
        created: 1700000000,
        context_length: 64000,
        max_completion_tokens: 8000,
        input_modalities: ['text', 'image'],
        pricing: { prompt: '0.000001', completion: '0.000002' },
        supported_parameters: ['tools', 'tool_choice', 'temperature', 'seed', 'frequency_penalty'],
      },
    ],
  });
  gw = s.gw;
  key = await s.newKey();
  onlyEmbed = await s.newKey({ allowed_models: ['voyageai/*'] });
});
afterAll(async () => gw?.close());

const endpoints = async (path: string, token = key) => {
  const r = await gw.call('GET', path, { token });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};

describe('GET /v1/models/{author}/{slug}/endpoints', () => {
  it('lists the enabled channels serving the model, best priority first, each as OpenRouter does', async () => {
    const body = await endpoints('/v1/models/acme/chat-1/endpoints');
    expect(body.data).toMatchObject({
      id: CHAT,
      name: 'Acme: Chat One',
      created: 1700000000,
      description: '',
      architecture: {
        modality: 'text+image->text',
        input_modalities: ['text', 'image'],
        output_modalities: ['text'],
        tokenizer: null,
        instruct_type: null,
      },
    });
    expect(body.data.endpoints).toEqual([
      {
        name: 'primary | Acme: Chat One',
        model_id: CHAT,
        model_name: 'Acme: Chat One',
        provider_name: 'Acme Cloud', // settings.provider
        tag: 'primary', // what provider.order / provider.only name this upstream by
        context_length: 64000,
        max_completion_tokens: 8000,
        max_prompt_tokens: null,
        // The channel's own prices (settings.pricing) over the model's.
        pricing: { prompt: '0.0000005', completion: '0.000002', request: '0', image: '0' },
        quantization: 'fp8',
        status: 0,
        supported_parameters: ['tools', 'tool_choice', 'temperature', 'seed', 'frequency_penalty'],
        supports_tool_choice: { auto: true, function: true, none: true, required: true },
        supports_implicit_caching: false,
        supports_voice_cloning: false,
        latency_last_30m: null,
        throughput_last_30m: null,
        uptime_last_5m: null,
        uptime_last_30m: null,
        uptime_last_1d: null,
      },
      expect.objectContaining({
        name: 'claude | Acme: Chat One',
        provider_name: 'claude', // no settings.provider: the channel's name
        tag: 'claude',
        pricing: { prompt: '0.000001', completion: '0.000002', request: '0', image: '0' },
        quantization: null,
        status: 0,
        // What the Anthropic adapter sends of the model's list (no seed, no frequency_penalty).
        supported_parameters: ['tools', 'tool_choice', 'temperature'],
      }),
    ]);
    expect(await endpoints('/api/v1/models/acme/chat-1/endpoints')).toEqual(body);
  });

  it("never shows a channel's address or keys", async () => {
    const text = JSON.stringify(await endpoints('/api/v1/models/acme/chat-1/endpoints'));
    expect(text).not.toContain('127.0.0.1');
    for (const s of SECRETS) expect(text).not.toContain(s);
    expect(text).not.toContain('base_url');
  });

  it('lists embedding upstreams with the parameters their adapter honours', async () => {
    const body = await endpoints(`/v1/models/${EMBED}/endpoints`, onlyEmbed);
    expect(body.data.endpoints).toHaveLength(1);
    expect(body.data.endpoints[0]).toMatchObject({
      tag: 'voyage',
      supported_parameters: [
        'input_type',
        'truncation',
        'encoding_format',
        'dimensions',
        'output_dimension',
        'output_dtype',
      ],
      supports_tool_choice: { auto: false, function: false, none: false, required: false },
      status: 0,
    });
  });

  it('says -10 for an upstream whose circuit is open or whose keys were all rejected', async () => {
    const health = gw.services.chat.health;
    const [primary, claude] = gw.services.registry.targetsFor(CHAT, { endpoint: 'chat' });
    expect(primary!.channelName).toBe('primary');
    health.failure(`${claude!.channelId}:${CHAT}`, 'server_error');
    health.failure(`${claude!.channelId}:${CHAT}`, 'server_error');
    health.keyFailed(primary!.channelId, SECRETS[0]!);
    const list = (await endpoints('/v1/models/acme/chat-1/endpoints')).data.endpoints;
    expect(list.map((e: { tag: string; status: number }) => [e.tag, e.status])).toEqual([
      ['primary', -10],
      ['claude', -10],
    ]);
    health.keyRestored(primary!.channelId, SECRETS[0]!);
    const again = (await endpoints('/v1/models/acme/chat-1/endpoints')).data.endpoints;
    expect(again[0].status).toBe(0);
  });

  it('says -5 while the circuit is half-open: open for longer than the cooldown, one probe let through', async () => {
    const health = gw.services.chat.health;
    const voyage = gw.services.registry.targetsFor(EMBED, { endpoint: 'embeddings' })[0]!;
    const twoHoursAgo = Date.now() - 7_200_000; // the cooldown is an hour
    health.failure(`${voyage.channelId}:${EMBED}`, 'server_error', false, twoHoursAgo);
    health.failure(`${voyage.channelId}:${EMBED}`, 'server_error', false, twoHoursAgo);
    const list = (await endpoints(`/v1/models/${EMBED}/endpoints`, onlyEmbed)).data.endpoints;
    expect(list[0]).toMatchObject({ tag: 'voyage', status: -5 });
  });

  it('is a 404 for a model the key may not use, no channel serves, or nobody knows', async () => {
    for (const [token, path] of [
      [onlyEmbed, '/v1/models/acme/chat-1/endpoints'],
      [onlyEmbed, '/api/v1/models/acme/chat-1/endpoints'],
      [key, '/v1/models/acme/nothing/endpoints'],
      [key, '/v1/models/openai/gpt-4o/endpoints'], // in the registry, served by no channel here
    ] as const) {
      const r = await gw.call('GET', path, { token });
      expect(r.status, path).toBe(404);
      expect(r.body.error).toMatchObject({ code: 404 });
    }
  });

  it('leaves /v1/models/{author}/{slug} to the model itself', async () => {
    const r = await gw.call('GET', '/v1/models/acme/chat-1', { token: key });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: CHAT, object: 'model' });
  });

  it("is where each listed model's links.details points, under the prefix listed", async () => {
    for (const prefix of ['/v1', '/api/v1']) {
      const listed = (await endpoints(`${prefix}/models`)).data.find((m: { id: string }) => m.id === CHAT);
      expect(listed.links.details).toBe(`${prefix}/models/acme/chat-1/endpoints`);
      expect((await endpoints(listed.links.details)).data.id).toBe(CHAT);
    }
    expect((await endpoints('/api/v1/model/acme/chat-1')).data.links.details).toBe(
      '/api/v1/models/acme/chat-1/endpoints',
    );
    expect((await endpoints('/v1/models/acme/chat-1')).links.details).toBe(
      '/v1/models/acme/chat-1/endpoints',
    );
  });

  it('a model of a one-segment id (known only from a channel) links to its endpoints list, which is served', async () => {
    for (const prefix of ['/v1', '/api/v1']) {
      const listed = (await endpoints(`${prefix}/models`)).data.find(
        (m: { id: string }) => m.id === 'local-llama',
      );
      expect(listed.links.details).toBe(`${prefix}/models/local-llama/endpoints`);
      const body = (await endpoints(listed.links.details)).data;
      expect(body.id).toBe('local-llama');
      expect(body.endpoints.map((e: { tag: string }) => e.tag)).toEqual(['local']);
    }
    expect((await endpoints('/v1/models/local-llama')).links.details).toBe(
      '/v1/models/local-llama/endpoints',
    );
    // A key that may not use it: the same 404 as for two-segment ids.
    const r = await gw.call('GET', '/v1/models/local-llama/endpoints', { token: onlyEmbed });
    expect(r.status).toBe(404);
  });

  it('answers @openrouter/sdk endpoints.list()', async () => {
    const or = new OpenRouter({
      apiKey: key,
      serverURL: `${gw.url}/api/v1`,
      retryConfig: { strategy: 'none' },
    });
    const r = await or.endpoints.list({ author: 'acme', slug: 'chat-1' });
    expect(r.data.id).toBe(CHAT);
    expect(r.data.endpoints.map((e) => [e.tag, e.providerName, e.contextLength, e.pricing.prompt])).toEqual([
      ['primary', 'Acme Cloud', 64000, '0.0000005'],
      ['claude', 'claude', 64000, '0.000001'],
    ]);
    const denied = new OpenRouter({
      apiKey: onlyEmbed,
      serverURL: `${gw.url}/api/v1`,
      retryConfig: { strategy: 'none' },
    });
    await expect(denied.endpoints.list({ author: 'acme', slug: 'chat-1' })).rejects.toBeInstanceOf(
      NotFoundResponseError,
    );
  });
});
