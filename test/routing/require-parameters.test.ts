import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ChatGateway,
  fixtureJson,
  model,
  oaCompletion,
  startChatGateway,
} from '../chat/chat-helpers.js';
import { type FakeUpstream, type ReceivedRequest, startFakeUpstream } from '../helpers/fake-upstream.js';

/**
 * `provider.require_parameters` and what reaches the upstream follow one rule: a parameter keeps
 * an upstream when its adapter sends it (as is or translated) and the model's registry list names
 * it or an alias of it; anything else in the body (unknown fields, labels, `service_tier`) is not
 * a parameter and never makes routing fail. Real HTTP: the default registry's Claude and Gemini
 * models behind fakes of Anthropic's and Gemini's APIs, and OpenAI-compatible fakes.
 */
let an: FakeUpstream;
let ge: FakeUpstream;
let oa: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  an = await startFakeUpstream({ 'POST /v1/messages': () => ({ json: fixtureJson('anthropic/chat.json') }) });
  const gem = () => ({ json: fixtureJson('gemini/chat.json') });
  ge = await startFakeUpstream({
    'POST /v1beta/models/gemini-2.5-flash:generateContent': gem,
    'POST /v1beta/models/gemini-2.0-flash-001:generateContent': gem,
  });
  oa = await startFakeUpstream({ 'POST /v1/chat/completions': () => ({ json: oaCompletion('fine') }) });
  c = await startChatGateway({
    channels: [
      {
        name: 'an',
        kind: 'anthropic',
        base_url: an.url,
        keys: ['sk-ant'],
        models: [
          'anthropic/claude-sonnet-4.5',
          'anthropic/claude-opus-4.5',
          'anthropic/claude-opus-4.1',
          'anthropic/claude-3.5-haiku',
        ],
        model_mapping: {
          'anthropic/claude-sonnet-4.5': 'claude-sonnet-4-5-20250929',
          'anthropic/claude-opus-4.5': 'claude-opus-4-5-20251101',
          'anthropic/claude-opus-4.1': 'claude-opus-4-1-20250805',
          'anthropic/claude-3.5-haiku': 'claude-3-5-haiku-20241022',
        },
      },
      {
        // A Claude deployment under a name the effort rule does not know; its settings say it takes effort.
        name: 'an-proxy',
        kind: 'anthropic',
        base_url: an.url,
        keys: ['sk-ant'],
        models: ['t/claude-proxy', 't/claude-plain'],
        model_mapping: { 't/claude-proxy': 'acme-claude', 't/claude-plain': 'acme-claude' },
        settings: { effort: true },
      },
      {
        // The same deployment without the setting.
        name: 'an-plain',
        kind: 'anthropic',
        base_url: an.url,
        keys: ['sk-ant'],
        models: ['t/claude-plain'],
        model_mapping: { 't/claude-plain': 'acme-claude' },
        priority: 10,
      },
      {
        name: 'ge',
        kind: 'gemini',
        base_url: ge.url,
        keys: ['AIza'],
        models: ['google/gemini-2.5-flash', 'google/gemini-2.0-flash-001'],
        model_mapping: {
          'google/gemini-2.5-flash': 'gemini-2.5-flash',
          'google/gemini-2.0-flash-001': 'gemini-2.0-flash-001',
        },
      },
      {
        name: 'oa',
        kind: 'openai-compatible',
        base_url: `${oa.url}/v1`,
        keys: ['k'],
        models: ['openai/gpt-4o', 'openai/gpt-5', 'openai/o3', 't/aliased', 't/mixed'],
        model_mapping: { 'openai/gpt-4o': 'gpt-4o', 'openai/gpt-5': 'gpt-5', 'openai/o3': 'o3' },
      },
      {
        // A server that takes only what its settings list.
        name: 'narrow',
        kind: 'openai-compatible',
        base_url: `${oa.url}/v1`,
        keys: ['k'],
        models: ['t/narrow'],
        settings: { supportedParams: ['messages', 'temperature'] },
      },
      {
        // The same model as `oa` serves, behind an OpenAI reasoning model's name: the adapter
        // drops temperature there (OpenAI refuses it), so it cannot keep the upstream.
        name: 'reasoner',
        kind: 'openai-compatible',
        base_url: `${oa.url}/v1`,
        keys: ['k'],
        priority: 10,
        models: ['t/mixed'],
        model_mapping: { 't/mixed': 'o4-mini' },
      },
    ],
    models: [
      // A list naming only one spelling of each: the aliases count.
      model('t/aliased', { supported_parameters: ['max_tokens', 'reasoning', 'temperature'] }),
      model('t/narrow'),
      model('t/mixed'),
      model('t/claude-proxy'),
      model('t/claude-plain'),
    ],
    gateway: { retry_base_ms: 1, max_attempts: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await an?.close();
  await ge?.close();
  await oa?.close();
});

const messages = [{ role: 'user', content: 'x' }];
const required = { require_parameters: true };

/** One call; its status, its body, and what the upstream `up` received for it. */
async function call(up: FakeUpstream, body: Record<string, unknown>) {
  const before = up.requests.length;
  const r = await c.gw.call('POST', '/v1/chat/completions', { token: c.key, body: { messages, ...body } });
  const sent: ReceivedRequest[] = up.requests.slice(before);
  return { status: r.status, body: r.body, sent: sent.map((q) => q.json) };
}

const served = async (up: FakeUpstream, body: Record<string, unknown>) => {
  const r = await call(up, body);
  expect(r.status, `${JSON.stringify(body)}: ${JSON.stringify(r.body)}`).toBe(200);
  expect(r.sent).toHaveLength(1);
  return r.sent[0]!;
};

const skipped = async (up: FakeUpstream, body: Record<string, unknown>) => {
  const r = await call(up, body);
  expect(r.status, `${JSON.stringify(body)}: ${JSON.stringify(r.body)}`).toBe(503);
  expect(r.body.error.metadata.excluded_by).toEqual(['require_parameters']);
  expect(r.sent).toHaveLength(0);
};

describe('Claude (default registry) with require_parameters', () => {
  it('max_completion_tokens is served and reaches Anthropic as max_tokens', async () => {
    for (const id of [
      'anthropic/claude-sonnet-4.5',
      'anthropic/claude-opus-4.1',
      'anthropic/claude-3.5-haiku',
    ]) {
      const b = await served(an, { model: id, max_completion_tokens: 321, provider: required });
      expect(b.max_tokens, id).toBe(321);
      expect(b, id).not.toHaveProperty('max_completion_tokens');
    }
  });

  it('parallel_tool_calls is served and reaches Anthropic as disable_parallel_tool_use', async () => {
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
    const b = await served(an, {
      model: 'anthropic/claude-sonnet-4.5',
      tools,
      parallel_tool_calls: false,
      provider: required,
    });
    expect(b.tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
  });

  it('reasoning_effort is served by a thinking model (as a thinking budget), and skips Claude 3.5', async () => {
    const b = await served(an, {
      model: 'anthropic/claude-opus-4.1',
      reasoning_effort: 'low',
      max_tokens: 5000,
      provider: required,
    });
    expect(b.thinking).toMatchObject({ type: 'enabled' });
    expect(b.thinking.budget_tokens).toBeGreaterThanOrEqual(1024);
    await skipped(an, { model: 'anthropic/claude-3.5-haiku', reasoning_effort: 'low', provider: required });
  });
});

describe('Claude verbosity (output_config.effort) with require_parameters', () => {
  it('is served by Opus 4.5, whose list names it, and skips Sonnet 4.5 and Opus 4.1, which take no effort', async () => {
    const b = await served(an, { model: 'anthropic/claude-opus-4.5', verbosity: 'low', provider: required });
    expect(b.output_config).toEqual({ effort: 'low' });
    expect(b).not.toHaveProperty('verbosity');
    for (const id of ['anthropic/claude-sonnet-4.5', 'anthropic/claude-opus-4.1'])
      await skipped(an, { model: id, verbosity: 'low', provider: required });
    // Without require_parameters they serve it, without the effort.
    const plain = await served(an, { model: 'anthropic/claude-sonnet-4.5', verbosity: 'low' });
    expect(plain).not.toHaveProperty('output_config');
  });

  it('follows the channel setting `effort` for a name the rule does not know', async () => {
    const b = await served(an, { model: 't/claude-proxy', verbosity: 'max', provider: required });
    expect(b.output_config).toEqual({ effort: 'high' });
    // Two upstreams of one model: without the requirement the higher priority one (no setting)
    // serves without effort; with it, only the one whose setting sends it.
    expect(await served(an, { model: 't/claude-plain', verbosity: 'low' })).not.toHaveProperty(
      'output_config',
    );
    const req = await served(an, { model: 't/claude-plain', verbosity: 'low', provider: required });
    expect(req.output_config).toEqual({ effort: 'low' });
  });
});

describe('Gemini (default registry) with require_parameters', () => {
  it('top_k and max_completion_tokens are served, as topK and maxOutputTokens', async () => {
    for (const id of ['google/gemini-2.5-flash', 'google/gemini-2.0-flash-001']) {
      const b = await served(ge, { model: id, top_k: 7, max_completion_tokens: 222, provider: required });
      expect(b.generationConfig, id).toMatchObject({ topK: 7, maxOutputTokens: 222 });
    }
  });

  it('reasoning_effort is served by Gemini 2.5 as a thinking budget', async () => {
    const b = await served(ge, {
      model: 'google/gemini-2.5-flash',
      reasoning_effort: 'low',
      max_tokens: 1000,
      provider: required,
    });
    expect(b.generationConfig.thinkingConfig.thinkingBudget).toBeGreaterThan(0);
  });

  it('structured_outputs (with a json_schema response_format) is served, as responseJsonSchema', async () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const rf = { type: 'json_schema', json_schema: { name: 'x', schema } };
    const b = await served(ge, {
      model: 'google/gemini-2.5-flash',
      response_format: rf,
      structured_outputs: true,
      provider: required,
    });
    expect(b.generationConfig.responseJsonSchema).toEqual(schema);
    // And by gpt-4o, whose registry list names it: the schema goes as response_format.
    const o = await served(oa, {
      model: 'openai/gpt-4o',
      response_format: rf,
      structured_outputs: true,
      provider: required,
    });
    expect(o.response_format).toEqual(rf);
  });
});

describe('OpenAI (default registry) with require_parameters', () => {
  it('verbosity is served by gpt-5, whose list names it, and skips o3, which takes only the default', async () => {
    const b = await served(oa, { model: 'openai/gpt-5', verbosity: 'low', provider: required });
    expect(b.verbosity).toBe('low');
    await skipped(oa, { model: 'openai/o3', verbosity: 'low', provider: required });
  });
});

describe('aliases in a model list', () => {
  it('max_tokens covers max_completion_tokens, reasoning covers reasoning_effort', async () => {
    const b = await served(oa, {
      model: 't/aliased',
      max_completion_tokens: 50,
      reasoning_effort: 'high',
      provider: required,
    });
    expect(b.max_tokens).toBe(50);
    expect(b.reasoning_effort).toBe('high');
  });

  it('a parameter neither listed nor aliased still skips the model', async () => {
    await skipped(oa, { model: 't/aliased', top_p: 0.5, provider: required });
  });
});

describe('fields that are not parameters', () => {
  it('an unknown or misspelt field skips no upstream, and is not sent where the adapter does not know it', async () => {
    for (const [up, id] of [
      [oa, 'openai/gpt-4o'],
      [an, 'anthropic/claude-sonnet-4.5'],
      [ge, 'google/gemini-2.5-flash'],
    ] as const) {
      const b = await served(up, { model: id, temprature: 0.5, x_custom: { a: 1 }, provider: required });
      expect(b, id).not.toHaveProperty('temprature');
      expect(b, id).not.toHaveProperty('x_custom');
    }
  });

  it('service_tier skips no upstream; an OpenAI-compatible one gets it', async () => {
    const b = await served(oa, { model: 'openai/gpt-4o', service_tier: 'flex', provider: required });
    expect(b.service_tier).toBe('flex');
    const a = await served(an, {
      model: 'anthropic/claude-sonnet-4.5',
      service_tier: 'flex',
      provider: required,
    });
    expect(a).not.toHaveProperty('service_tier');
  });
});

describe("an OpenAI-compatible upstream's own allow-list", () => {
  it('settings.supportedParams decides routing as it decides sending', async () => {
    expect((await served(oa, { model: 't/narrow', temperature: 0.4, provider: required })).temperature).toBe(
      0.4,
    );
    await skipped(oa, { model: 't/narrow', top_p: 0.5, provider: required });
    await skipped(oa, { model: 't/narrow', max_tokens: 10, provider: required });
  });

  it('a limit the list does not name is not sent, as any other field it does not name', async () => {
    const b = await served(oa, { model: 't/narrow', max_tokens: 10, temperature: 0.4 });
    expect(b).not.toHaveProperty('max_tokens');
    expect(b).not.toHaveProperty('max_completion_tokens');
    expect(b.temperature).toBe(0.4);
  });
});

describe('per-model drops of an OpenAI-compatible upstream', () => {
  it('temperature skips an upstream serving an OpenAI reasoning model, which would drop it', async () => {
    // Without require_parameters the reasoner (higher priority) serves, without temperature.
    const plain = await served(oa, { model: 't/mixed', temperature: 0.3 });
    expect(plain.model).toBe('o4-mini');
    expect(plain).not.toHaveProperty('temperature');
    const b = await served(oa, { model: 't/mixed', temperature: 0.3, provider: required });
    expect(b.model).toBe('t/mixed');
    expect(b.temperature).toBe(0.3);
  });
});
