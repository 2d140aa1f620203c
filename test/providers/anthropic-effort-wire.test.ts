/**
 * OpenRouter's `verbosity` reaches Anthropic as `output_config.effort`, against a loopback fake
 * that checks the field as the Messages API does: a model without effort, or a level the model
 * lacks, is a 400 invalid_request_error.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ChatRequest, ChatStreamEvent } from '../../src/gateway/chat/types.js';
import { UpstreamError } from '../../src/gateway/errors.js';
import { completeChat, openChatStream } from '../../src/gateway/upstream/call-chat.js';
import { UpstreamClient } from '../../src/gateway/upstream/upstream-client.js';
import { anthropicAdapter } from '../../src/providers/anthropic/anthropic-adapter.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { fixture } from './contract-cases.js';

/** The effort levels each model takes (Anthropic's effort docs); a model not listed takes none. */
const BASIC = ['low', 'medium', 'high'];
const LEVELS: Record<string, string[]> = {
  'claude-opus-4-5-20251101': BASIC,
  'anthropic.claude-opus-4-5-20251101-v1:0': BASIC,
  'claude-opus-4-6': [...BASIC, 'max'],
  'claude-sonnet-4-6': [...BASIC, 'max'],
  'claude-opus-4-7': [...BASIC, 'xhigh', 'max'],
  // A deployment behind a proxy, under a name no rule knows.
  'acme-claude-large': [...BASIC, 'max'],
};
const FORMAT_MODELS = /claude-(opus|sonnet|haiku)-4-[5-9]/;

const client = new UpstreamClient({
  defaults: { connectTimeoutMs: 2000, firstByteTimeoutMs: 5000, idleTimeoutMs: 5000 },
});
let up: FakeUpstream;
const refuse = (message: string) => ({
  status: 400,
  json: { type: 'error', error: { type: 'invalid_request_error', message } },
});

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/messages': (r) => {
      const { model, output_config: oc, stream } = r.json;
      if (oc !== undefined) {
        const extra = Object.keys(oc).filter((k) => k !== 'effort' && k !== 'format');
        if (extra.length > 0) return refuse(`output_config.${extra[0]}: Extra inputs are not permitted`);
        if (oc.effort !== undefined) {
          const levels = LEVELS[model];
          if (!levels)
            return refuse('output_config.effort: This model does not support the effort parameter.');
          if (!levels.includes(oc.effort))
            return refuse(
              `This model does not support effort level '${oc.effort}'. Supported levels: ${[...levels].sort().join(', ')}.`,
            );
        }
        if (oc.format !== undefined && !FORMAT_MODELS.test(model))
          return refuse(`'${model}' does not support output_config.format.`);
      }
      if (stream)
        return {
          body: fixture('anthropic', 'chat-stream.sse'),
          headers: { 'content-type': 'text/event-stream' },
        };
      return { body: fixture('anthropic', 'chat.json'), headers: { 'content-type': 'application/json' } };
    },
  });
});
afterAll(async () => {
  await client.close();
  await up.close();
});
afterEach(() => {
  up.requests.length = 0;
});

const on = (upstreamModel: string, extra?: Record<string, unknown>) => ({
  baseUrl: up.url,
  apiKey: 'sk-ant-test',
  upstreamModel,
  extra,
});
const asking = (verbosity: string, more: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'client-model',
  messages: [{ role: 'user', content: 'Plan a trip' }],
  verbosity,
  ...more,
});
const sent = () => up.requests[up.requests.length - 1].json;
/** The request body Anthropic received for one call, which the fake served (a 400 would throw). */
async function sentFor(req: ChatRequest, model: string, extra?: Record<string, unknown>) {
  await completeChat(anthropicAdapter, req, on(model, extra), { client });
  return sent();
}

describe('verbosity -> output_config.effort', () => {
  it('models with effort get it: Opus 4.5 (also on Bedrock), Opus and Sonnet 4.6, Opus 4.7', async () => {
    const cases: [string, string][] = [
      ['claude-opus-4-5-20251101', 'low'],
      ['anthropic.claude-opus-4-5-20251101-v1:0', 'medium'],
      ['claude-opus-4-6', 'max'],
      ['claude-sonnet-4-6', 'high'],
      ['claude-opus-4-7', 'xhigh'],
    ];
    for (const [model, level] of cases) {
      const body = await sentFor(asking(level), model);
      expect(body.output_config, model).toEqual({ effort: level });
      expect(body, model).not.toHaveProperty('verbosity');
    }
  });

  it('a level the model lacks goes as the nearest it takes, ties down, so it is served instead of refused', async () => {
    const cases: [string, string, string][] = [
      ['claude-opus-4-5-20251101', 'max', 'high'],
      ['claude-opus-4-5-20251101', 'xhigh', 'high'],
      ['claude-opus-4-6', 'xhigh', 'high'],
      ['claude-sonnet-4-6', 'xhigh', 'high'],
    ];
    for (const [model, asked, level] of cases)
      expect((await sentFor(asking(asked), model)).output_config, `${model} ${asked}`).toEqual({
        effort: level,
      });
  });

  it('with a json_schema response format both go in one output_config', async () => {
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    };
    const req = asking('low', {
      response_format: { type: 'json_schema', json_schema: { name: 'trip', schema } },
    });
    expect((await sentFor(req, 'claude-opus-4-5-20251101')).output_config).toEqual({
      effort: 'low',
      format: { type: 'json_schema', schema },
    });
    // Sonnet 4.5 takes the format but not effort: the format alone.
    expect((await sentFor(req, 'claude-sonnet-4-5-20250929')).output_config).toEqual({
      format: { type: 'json_schema', schema },
    });
  });

  it('older models, which refuse effort, are sent none and served', async () => {
    for (const model of [
      'claude-sonnet-4-5-20250929',
      'claude-haiku-4-5-20251001',
      'claude-opus-4-1-20250805',
      'claude-3-7-sonnet-20250219',
    ]) {
      const body = await sentFor(asking('high'), model);
      expect(body, model).not.toHaveProperty('output_config');
      expect(body, model).not.toHaveProperty('verbosity');
    }
  });

  it('streamed requests carry it too', async () => {
    const events: ChatStreamEvent[] = [];
    const stream = await openChatStream(anthropicAdapter, asking('medium'), on('claude-opus-4-6'), {
      client,
    });
    for await (const ev of stream) events.push(ev);
    expect(sent().stream).toBe(true);
    expect(sent().output_config).toEqual({ effort: 'medium' });
    expect(events.some((e) => e.type === 'delta')).toBe(true);
  });

  it('the channel setting `effort` overrides the name rule', async () => {
    // false: none, even where the name rule would send it.
    expect(await sentFor(asking('high'), 'claude-opus-4-7', { effort: false })).not.toHaveProperty(
      'output_config',
    );
    // true on a name the rule does not know: low, medium, high, which every model with effort takes.
    expect((await sentFor(asking('max'), 'acme-claude-large', { effort: true })).output_config).toEqual({
      effort: 'high',
    });
    // A list names the levels that deployment takes.
    const levels = { effort: ['low', 'medium', 'high', 'max'] };
    expect((await sentFor(asking('max'), 'acme-claude-large', levels)).output_config).toEqual({
      effort: 'max',
    });
    // Without the setting the unknown name gets none.
    expect(await sentFor(asking('max'), 'acme-claude-large')).not.toHaveProperty('output_config');
    // The setting is trusted: a model that has no effort then answers Anthropic's 400.
    await expect(
      completeChat(anthropicAdapter, asking('low'), on('claude-opus-4-1-20250805', { effort: true }), {
        client,
      }),
    ).rejects.toBeInstanceOf(UpstreamError);
  });
});
