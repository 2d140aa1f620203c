import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { type ChatGateway, fixtureJson, model, oaCompletion, startChatGateway } from './chat-helpers.js';

/**
 * Request parameters as the official clients send them: what reaches an OpenAI-compatible
 * upstream, and what is refused with a 400 naming the field instead of being lost on the way.
 */
let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': { json: oaCompletion('fine') },
    'POST /v1/messages': () => ({ json: fixtureJson('anthropic/chat.json') }),
  });
  c = await startChatGateway({
    channels: [
      { name: 'oa', kind: 'openai-compatible', base_url: `${up.url}/v1`, keys: ['k'], models: ['t/oa'] },
      {
        name: 'an',
        kind: 'anthropic',
        base_url: up.url,
        keys: ['k'],
        models: ['t/an'],
        model_mapping: { 't/an': 'claude-sonnet-4-5' },
      },
    ],
    models: [model('t/oa'), model('t/an')],
    gateway: { retry_base_ms: 1, max_attempts: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const client = () => new OpenAI({ baseURL: `${c.gw.url}/v1`, apiKey: c.key, maxRetries: 0 });
const messages = [{ role: 'user' as const, content: 'x' }];

describe('end-user ids and cache options', () => {
  it('safety_identifier and prompt_cache_retention reach an OpenAI-compatible upstream', async () => {
    const before = up.requests.length;
    await client().chat.completions.create({
      model: 't/oa',
      messages,
      safety_identifier: 'user-hash-1',
      prompt_cache_retention: '24h',
    });
    const sent = up.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.json).toMatchObject({ safety_identifier: 'user-hash-1', prompt_cache_retention: '24h' });
  });

  it('with require_parameters, safety_identifier (an end-user id like user) skips no upstream', async () => {
    for (const id of ['t/oa', 't/an']) {
      const r = await c.gw.call('POST', '/v1/chat/completions', {
        token: c.key,
        body: { model: id, messages, safety_identifier: 'u', provider: { require_parameters: true } },
      });
      expect(r.status, `${id}: ${JSON.stringify(r.body)}`).toBe(200);
    }
  });
});
