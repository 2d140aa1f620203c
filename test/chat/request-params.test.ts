import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { type ChatGateway, fixtureJson, model, oaCompletion, startChatGateway } from './chat-helpers.js';
import { openaiClient } from './sdk-clients.js';

/**
 * Request parameters as the official clients send them: what reaches an OpenAI-compatible
 * upstream, and what is refused with a 400 naming the field instead of being lost on the way.
 */
let up: FakeUpstream;
let c: ChatGateway;
const STOPLESS = ['openai/o3', 'o4-mini', 'openai/gpt-5', 'openai/gpt-5-mini', 'openai/gpt-5.2'];
const WITH_STOP = ['openai/gpt-5.5', 'openai/gpt-5-chat-latest'];
const REASONING_IDS = [...STOPLESS, ...WITH_STOP];

beforeAll(async () => {
  up = await startFakeUpstream({
    // Refuses a length above gpt-4o's output limit as OpenAI does.
    'POST /v1/chat/completions': (req) => {
      const asked = req.json?.max_completion_tokens ?? req.json?.max_tokens;
      if (req.json?.model === 'gpt-4o' && asked > 16_384)
        return {
          status: 400,
          json: {
            error: {
              message: `max_tokens is too large: ${asked}. This model supports at most 16384 completion tokens, whereas you provided ${asked}.`,
              type: 'invalid_request_error',
              param: 'max_tokens',
              code: 'invalid_value',
            },
          },
        };
      return { json: oaCompletion('fine') };
    },
    'POST /v1/messages': () => ({ json: fixtureJson('anthropic/chat.json') }),
  });
  c = await startChatGateway({
    channels: [
      {
        name: 'oa',
        kind: 'openai-compatible',
        base_url: `${up.url}/v1`,
        keys: ['k'],
        models: ['t/oa', 't/gpt-4o', ...REASONING_IDS],
        model_mapping: { 't/gpt-4o': 'gpt-4o' },
      },
      {
        name: 'or',
        kind: 'openai-compatible',
        base_url: `${up.url}/v1`,
        keys: ['k'],
        models: ['t/or'],
        settings: { reasoningObject: true },
      },
      {
        name: 'an',
        kind: 'anthropic',
        base_url: up.url,
        keys: ['k'],
        models: ['t/an', 't/an-16k'],
        model_mapping: { 't/an': 'claude-sonnet-4-5', 't/an-16k': 'claude-opus-4-1' },
      },
    ],
    models: [
      model('t/oa'),
      model('t/or'),
      model('t/an'),
      model('t/an-16k', { max_completion_tokens: 16_000 }),
      model('t/gpt-4o', { max_completion_tokens: 16_384 }),
      ...REASONING_IDS.map((id) => model(id)),
    ],
    gateway: { retry_base_ms: 1, max_attempts: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const client = () => openaiClient(c);
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

describe('routing keys', () => {
  it('with require_parameters, session_id (a routing key, as @openrouter/sdk sends it) skips no upstream', async () => {
    for (const id of ['t/oa', 't/an']) {
      const r = await c.gw.call('POST', '/v1/chat/completions', {
        token: c.key,
        body: { model: id, messages, session_id: 'conv-1', provider: { require_parameters: true } },
      });
      expect(r.status, `${id}: ${JSON.stringify(r.body)}`).toBe(200);
    }
  });
});

describe('deprecated function calling', () => {
  it('functions and function_call are a 400 naming the field, never sent on without them', async () => {
    const before = up.requests.length;
    const fn = { name: 'get_weather', parameters: { type: 'object', properties: {} } };
    const cases: [string, Partial<OpenAI.ChatCompletionCreateParamsNonStreaming>][] = [
      ['functions', { functions: [fn] }],
      ['functions', { functions: [fn], function_call: 'auto' }],
      ['function_call', { function_call: { name: 'get_weather' } }],
    ];
    for (const [field, extra] of cases) {
      const err = await client()
        .chat.completions.create({ model: 't/oa', messages, ...extra })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err, field).toBeInstanceOf(OpenAI.BadRequestError);
      const e = err as InstanceType<typeof OpenAI.BadRequestError>;
      expect(e.status).toBe(400);
      expect(e.param).toBe(field);
      expect(e.message).toContain(`${field}:`);
      expect(e.message).toContain('tools');
    }
    expect(up.requests.length).toBe(before);
  });

  it('null means not given, and a function_call in an assistant message of the history is served', async () => {
    const r = await c.gw.call('POST', '/v1/chat/completions', {
      token: c.key,
      body: {
        model: 't/oa',
        functions: null,
        function_call: null,
        messages: [
          ...messages,
          { role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } },
          { role: 'user', content: 'y' },
        ],
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  });
});

describe('stop on reasoning models', () => {
  const sentFor = async (id: string) => {
    const before = up.requests.length;
    const r = await c.gw.call('POST', '/v1/chat/completions', {
      token: c.key,
      body: { model: id, messages, stop: ['\nObservation:'] },
    });
    expect(r.status, `${id}: ${JSON.stringify(r.body)}`).toBe(200);
    const sent = up.requests.slice(before);
    expect(sent).toHaveLength(1);
    return sent[0]!.json;
  };

  it('is dropped for the o-series and gpt-5 up to 5.4, which answer 400 to it', async () => {
    for (const id of STOPLESS) expect(await sentFor(id), id).not.toHaveProperty('stop');
  });

  it('is kept for other models', async () => {
    for (const id of ['t/oa', ...WITH_STOP]) expect((await sentFor(id)).stop, id).toEqual(['\nObservation:']);
  });
});

describe('reasoning in the history', () => {
  const details = [
    { type: 'reasoning.text', text: 'think', signature: 'sig-1', format: 'anthropic-claude-v1' },
  ];
  const history = [
    { role: 'user', content: 'weather?' },
    {
      role: 'assistant',
      content: null,
      reasoning: 'think',
      reasoning_details: details,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
  ];
  const sentFor = async (id: string) => {
    const before = up.requests.length;
    const r = await c.gw.call('POST', '/v1/chat/completions', {
      token: c.key,
      body: { model: id, messages: history, reasoning: { max_tokens: 2000 } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const sent = up.requests.slice(before);
    expect(sent).toHaveLength(1);
    return sent[0]!.json.messages[1];
  };

  it('reaches an upstream that speaks OpenRouter unchanged, with the signatures it needs back', async () => {
    expect(await sentFor('t/or')).toMatchObject({ reasoning: 'think', reasoning_details: details });
  });

  it('is left out for other OpenAI-compatible upstreams, whose message schemas do not know it', async () => {
    const m = await sentFor('t/oa');
    expect(m).not.toHaveProperty('reasoning');
    expect(m).not.toHaveProperty('reasoning_details');
    expect(m.tool_calls).toHaveLength(1);
  });
});

describe('an upstream that speaks OpenRouter', () => {
  const sampling = { top_a: 0.2, top_k: 40, min_p: 0.05, repetition_penalty: 1.1 };
  const history = [
    { role: 'developer', content: 'rules' },
    { role: 'user', content: 'x' },
  ];
  const sentFor = async (id: string) => {
    const before = up.requests.length;
    const r = await c.gw.call('POST', '/v1/chat/completions', {
      token: c.key,
      body: { model: id, messages: history, ...sampling, structured_outputs: true, session_id: 'conv-1' },
    });
    expect(r.status, `${id}: ${JSON.stringify(r.body)}`).toBe(200);
    const sent = up.requests.slice(before);
    expect(sent).toHaveLength(1);
    return sent[0]!.json;
  };

  it("gets OpenRouter's own fields (top_a, structured_outputs, session_id) and developer messages", async () => {
    const b = await sentFor('t/or');
    expect(b).toMatchObject({ ...sampling, structured_outputs: true, session_id: 'conv-1' });
    expect(b.messages[0]).toEqual({ role: 'developer', content: 'rules' });
  });

  it('other OpenAI-compatible upstreams get what they got before: no top_a, developer as system', async () => {
    const b = await sentFor('t/oa');
    expect(b).toMatchObject({ top_k: 40, min_p: 0.05, repetition_penalty: 1.1 });
    for (const k of ['top_a', 'structured_outputs', 'session_id']) expect(b, k).not.toHaveProperty(k);
    expect(b.messages[0]).toEqual({ role: 'system', content: 'rules' });
  });

  it('with require_parameters, top_a keeps it and not a self-hosted upstream, which cannot take it', async () => {
    const call = (id: string) =>
      c.gw.call('POST', '/v1/chat/completions', {
        token: c.key,
        body: { model: id, messages, top_a: 0.2, provider: { require_parameters: true } },
      });
    const before = up.requests.length;
    const r = await call('t/or');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(up.requests.slice(before).map((q) => q.json.top_a)).toEqual([0.2]);
    expect((await call('t/oa')).status).toBe(503);
  });
});

describe('structured outputs and require_parameters', () => {
  const rf = {
    type: 'json_schema',
    json_schema: {
      name: 'x',
      schema: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
    },
  };
  it('response_format json_schema keeps Claude 4.5 (sent as output_config.format), and skips Opus 4.1, which cannot take it', async () => {
    const call = (id: string) =>
      c.gw.call('POST', '/v1/chat/completions', {
        token: c.key,
        body: { model: id, messages, response_format: rf, provider: { require_parameters: true } },
      });
    const before = up.requests.length;
    const r = await call('t/an');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(up.requests.slice(before).map((q) => q.json.output_config)).toEqual([
      {
        format: {
          type: 'json_schema',
          schema: {
            type: 'object',
            properties: { a: { type: 'string' } },
            required: ['a'],
            additionalProperties: false,
          },
        },
      },
    ]);
    const skipped = await call('t/an-16k');
    expect(skipped.status).toBe(503);
    expect(skipped.body.error.metadata.excluded_by).toEqual(['require_parameters']);
    expect(up.requests.length).toBe(before + 1);
  });
});

describe('an empty or missing tools array', () => {
  const tool = { type: 'function', function: { name: 'f', parameters: { type: 'object' } } };
  const sentFor = async (id: string, extra: Record<string, unknown>) => {
    const before = up.requests.length;
    const r = await c.gw.call('POST', '/v1/chat/completions', {
      token: c.key,
      body: { model: id, messages, ...extra },
    });
    expect(r.status, `${id} ${JSON.stringify(extra)}: ${JSON.stringify(r.body)}`).toBe(200);
    const sent = up.requests.slice(before);
    expect(sent).toHaveLength(1);
    return sent[0]!.json;
  };

  it('is not sent (OpenAI refuses it), nor a tool_choice none/auto or parallel_tool_calls beside it', async () => {
    for (const id of ['t/oa', 't/or', 't/an'])
      for (const extra of [
        { tools: [] },
        { tools: [], tool_choice: 'auto', parallel_tool_calls: true },
        { tools: [], tool_choice: 'none', parallel_tool_calls: false },
        { tool_choice: 'auto' },
        { tool_choice: 'none', parallel_tool_calls: true },
      ]) {
        const b = await sentFor(id, extra);
        for (const k of ['tools', 'tool_choice', 'parallel_tool_calls'])
          expect(b, `${id} ${JSON.stringify(extra)}`).not.toHaveProperty(k);
      }
  });

  it('a tools array with a tool is still sent with its choice', async () => {
    const b = await sentFor('t/oa', { tools: [tool], tool_choice: 'auto', parallel_tool_calls: false });
    expect(b).toMatchObject({ tools: [tool], tool_choice: 'auto', parallel_tool_calls: false });
  });

  it('beside a tool_choice that demands a tool is a 400 naming tool_choice, sent nowhere', async () => {
    const before = up.requests.length;
    for (const tool_choice of [
      'required',
      { type: 'function', function: { name: 'f' } },
      { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [tool] } },
    ]) {
      for (const tools of [[], undefined]) {
        const err = await client()
          .chat.completions.create({ model: 't/oa', messages, tools, tool_choice: tool_choice as any })
          .then(
            () => undefined,
            (e: unknown) => e,
          );
        expect(err, JSON.stringify({ tools, tool_choice })).toBeInstanceOf(OpenAI.BadRequestError);
        const e = err as InstanceType<typeof OpenAI.BadRequestError>;
        expect(e.param).toBe('tool_choice');
        expect(e.message).toContain('tool_choice:');
      }
    }
    expect(up.requests.length).toBe(before);
  });
});

describe('response_format json_schema', () => {
  const schema = { type: 'object', properties: { a: { type: 'string' } } };
  const call = (id: string, json_schema: Record<string, unknown>) =>
    c.gw.call('POST', '/v1/chat/completions', {
      token: c.key,
      body: { model: id, messages, response_format: { type: 'json_schema', json_schema } },
    });

  it('without a name is a 400 naming response_format.json_schema.name on every upstream (OpenAI and OpenRouter require it)', async () => {
    const before = up.requests.length;
    for (const id of ['t/oa', 't/or', 't/an']) {
      const r = await call(id, { schema, strict: true });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error).toMatchObject({
        code: 400,
        type: 'invalid_request_error',
        param: 'response_format.json_schema.name',
        message: 'response_format.json_schema.name: is required',
      });
    }
    expect(up.requests.length).toBe(before);
  });

  it('with a name OpenAI would refuse (over 64 characters, or a space) is a 400 naming it', async () => {
    for (const name of ['has space', 'x'.repeat(65), '']) {
      const r = await call('t/oa', { name, schema });
      expect(r.status, name).toBe(400);
      expect(r.body.error.param).toBe('response_format.json_schema.name');
    }
  });

  it('with a name reaches the upstream as sent', async () => {
    const before = up.requests.length;
    const json_schema = { name: 'answer_v-1', schema, strict: true };
    expect((await call('t/oa', json_schema)).status).toBe(200);
    expect(up.requests.slice(before)[0]!.json.response_format).toEqual({ type: 'json_schema', json_schema });
  });
});

describe('seed', () => {
  it('is a 400 naming seed unless an integer a JSON number holds exactly', async () => {
    const before = up.requests.length;
    // Written by hand: 2^53 + 1 and 1e20 as a client's JSON encoder writes them.
    for (const seed of ['1.5', '9007199254740992', '9007199254740993', '1e20', '-1e20', '"7"']) {
      const res = await fetch(`${c.gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
        body: `{"model":"t/oa","messages":[{"role":"user","content":"x"}],"seed":${seed}}`,
      });
      const body = (await res.json()) as any;
      expect(res.status, seed).toBe(400);
      expect(body.error).toMatchObject({ code: 400, param: 'seed' });
      expect(body.error.message).toMatch(/^seed: /);
    }
    expect(up.requests.length).toBe(before);
  });

  it('within the range reaches the upstream exactly as sent', async () => {
    for (const seed of [0, 42, -5, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER]) {
      const before = up.requests.length;
      const r = await c.gw.call('POST', '/v1/chat/completions', {
        token: c.key,
        body: { model: 't/oa', messages, seed },
      });
      expect(r.status, String(seed)).toBe(200);
      expect(up.requests.slice(before)[0]!.json.seed).toBe(seed);
    }
  });
});

describe('Anthropic thinking and the model output limit', () => {
  it("max_tokens raised for a thinking budget stays within the registry's max_completion_tokens", async () => {
    const before = up.requests.length;
    const r = await c.gw.call('POST', '/v1/chat/completions', {
      token: c.key,
      body: { model: 't/an-16k', messages, reasoning: { max_tokens: 20_000 } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const sent = up.requests.slice(before);
    expect(sent).toHaveLength(1);
    // 20000 + the 4096 default answer would pass the model's 16000: the budget gives way.
    expect(sent[0]!.json.max_tokens).toBe(16_000);
    expect(sent[0]!.json.thinking).toEqual({ type: 'enabled', budget_tokens: 16_000 - 4096 });
  });

  it("a client's max_tokens above the registry's max_completion_tokens is sent as that limit", async () => {
    for (const [body, max] of [
      [{ model: 't/an-16k', messages, max_tokens: 50_000 }, 16_000],
      [{ model: 't/an-16k', messages, max_completion_tokens: 50_000 }, 16_000],
      // within the limit: sent as asked
      [{ model: 't/an-16k', messages, max_tokens: 9000 }, 9000],
    ] as const) {
      const before = up.requests.length;
      const r = await c.gw.call('POST', '/v1/chat/completions', { token: c.key, body });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      // usage is the upstream's, whatever was asked
      expect(r.body.usage.completion_tokens).toBe(fixtureJson('anthropic/chat.json').usage.output_tokens);
      const sent = up.requests.slice(before);
      expect(sent).toHaveLength(1);
      expect(sent[0]!.json.max_tokens, JSON.stringify(body)).toBe(max);
    }
  });
});

/**
 * A /v1/messages max_tokens past the model's output limit, with a thinking budget within it (an
 * Anthropic max_tokens holds the thinking): max_tokens is sent as the limit, and the budget keeps
 * what it can of the limit while the answer keeps the room the client left it (max_tokens -
 * budget). Before, the clamped max_tokens was all taken for the answer and the budget fell to
 * 1,024: Claude Code's 32,000 with 31,999 to think reached a 16,000 model as 16,000 and 1,024.
 */
describe('Anthropic ingress: max_tokens above the output limit, with a thinking budget', () => {
  it('sends the limit, and the budget what the client left the answer of it', async () => {
    for (const [max_tokens, budget_tokens, sentBudget] of [
      [32_000, 31_999, 15_999],
      [40_000, 30_000, 6000],
      // a budget that fits below the limit goes as sent
      [40_000, 2000, 2000],
      // the answer's room is more than the limit: the budget stays at the minimum
      [60_000, 20_000, 1024],
    ] as const) {
      const before = up.requests.length;
      const r = await c.gw.call('POST', '/v1/messages', {
        token: c.key,
        body: {
          model: 't/an-16k',
          max_tokens,
          thinking: { type: 'enabled', budget_tokens },
          messages: [{ role: 'user', content: 'hi' }],
        },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const sent = up.requests.slice(before);
      expect(sent).toHaveLength(1);
      expect(sent[0]!.json.max_tokens).toBe(16_000);
      expect(sent[0]!.json.thinking, `${max_tokens}/${budget_tokens}`).toEqual({
        type: 'enabled',
        budget_tokens: sentBudget,
      });
    }
  });
});

describe('max_tokens above the model output limit, OpenAI-compatible', () => {
  it("is sent as the registry's max_completion_tokens, which OpenAI would otherwise refuse with a 400", async () => {
    for (const [body, max] of [
      [{ model: 't/gpt-4o', messages, max_tokens: 32_000 }, 16_384],
      [{ model: 't/gpt-4o', messages, max_completion_tokens: 50_000, max_tokens: 10 }, 16_384],
      // within the limit: sent as asked
      [{ model: 't/gpt-4o', messages, max_tokens: 9000 }, 9000],
    ] as const) {
      const before = up.requests.length;
      const r = await c.gw.call('POST', '/v1/chat/completions', { token: c.key, body });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const sent = up.requests.slice(before);
      expect(sent).toHaveLength(1);
      expect(sent[0]!.json.max_completion_tokens ?? sent[0]!.json.max_tokens, JSON.stringify(body)).toBe(max);
    }
  });
});
