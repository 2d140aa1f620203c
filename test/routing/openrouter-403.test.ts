import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyOpenAiError } from '../../src/providers/openai-compatible/openai-response.js';
import {
  type ChatGateway,
  model,
  oaCompletion,
  requestLogs,
  startChatGateway,
  userMsg,
} from '../chat/chat-helpers.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';

/**
 * OpenRouter answers 403 for three different things (openrouter.md, "Status codes"): a key
 * without permission, an input its moderation flagged, and a model its region may not use. Only
 * the first is the key's fault; the others must not set the key aside for every other client.
 */
const MODERATION = {
  error: {
    code: 403,
    message: 'gpt-4o requires moderation on OpenAI. Your input was flagged for "violence".',
    metadata: {
      reasons: ['violence'],
      flagged_input: 'how do I ...ge at night',
      provider_name: 'OpenAI',
      model_slug: 'openai/gpt-4o',
    },
  },
};
const REGION = {
  error: {
    code: 403,
    message: 'This model is not available in your region.',
    availability: { code: 'region_restricted', retryable: false, requested_models: ['openai/gpt-4o'] },
  },
};
const NO_PERMISSION = { error: { code: 403, message: 'Key does not have permission', metadata: null } };

describe('classifying an OpenRouter 403', () => {
  it.each([
    ['a moderation flag', 'content_filter', MODERATION],
    ['a region restriction', 'payment', REGION],
    ['a key without permission', 'auth', NO_PERMISSION],
    [
      'a typed error_type',
      'content_filter',
      { error: { code: 403, message: 'no', metadata: { error_type: 'content_policy_violation' } } },
    ],
  ])('%s is %s', (_name, kind, body) => {
    expect(classifyOpenAiError(403, JSON.stringify(body), {}).kind).toBe(kind);
  });
});

describe('a flagged prompt through an OpenRouter channel with two keys', () => {
  let up: FakeUpstream;
  let c: ChatGateway;
  beforeAll(async () => {
    up = await startFakeUpstream({
      'POST /v1/chat/completions': (req) =>
        JSON.stringify(req.json).includes('flagged words')
          ? { status: 403, json: MODERATION }
          : { json: oaCompletion('fine') },
    });
    c = await startChatGateway({
      channels: [
        {
          name: 'or',
          kind: 'openai-compatible',
          base_url: `${up.url}/v1`,
          keys: ['k1', 'k2'],
          models: ['acme/m'],
        },
      ],
      models: [model('acme/m')],
      gateway: { retry_base_ms: 1, max_attempts: 2 },
    });
  });
  afterAll(async () => {
    await c?.gw.close();
    await up?.close();
  });
  const chat = (content: string) =>
    c.gw.call('POST', '/v1/chat/completions', {
      token: c.key,
      body: { model: 'acme/m', messages: userMsg(content) },
    });

  it("is that client's content-filter refusal, tried once, and no key is set aside", async () => {
    const r = await chat('some flagged words');
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/content filter: .*flagged for "violence"/);
    expect(up.requests).toHaveLength(1);
    expect(c.gw.services.chat.health.disabledKeys()).toEqual([]);
    const [log] = await requestLogs(c);
    expect(log.attempts.map((a: any) => a.error_kind)).toEqual(['content_filter']);
    // The next client is served as usual, on either key.
    for (let i = 0; i < 3; i++) expect((await chat('hello')).status).toBe(200);
  });
});
