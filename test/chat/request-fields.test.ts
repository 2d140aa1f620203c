import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  type ChatGateway,
  fixtureJson,
  model,
  oaChunk,
  oaCompletion,
  rawStream,
  sse,
  startChatGateway,
} from './chat-helpers.js';

/**
 * Request fields of OpenAI's and OpenRouter's chat request checked against the fact sheets: what
 * each upstream kind receives for them (asserted on the body the loopback fake received), and
 * the 400 naming the field for a value out of range.
 */
let up: FakeUpstream;
let c: ChatGateway;
/** The default registry's `openai_chat` parameter set. */
const OPENAI_CHAT_PARAMS = [
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'stop',
  'frequency_penalty',
  'presence_penalty',
  'seed',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'response_format',
  'structured_outputs',
];

const answer = () => {
  const body = oaCompletion('fine');
  (body.choices[0]!.message as Record<string, unknown>).reasoning = 'thought';
  return body;
};

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': (req) =>
      req.json?.stream
        ? {
            sse: sse([
              oaChunk({ role: 'assistant', reasoning: 'thought' }),
              oaChunk({ content: 'fine' }),
              oaChunk({}, 'stop'),
            ]),
          }
        : { json: answer() },
    'POST /v1/messages': () => ({ json: fixtureJson('anthropic/chat.json') }),
  });
  c = await startChatGateway({
    channels: [
      {
        name: 'oa',
        kind: 'openai-compatible',
        base_url: `${up.url}/v1`,
        keys: ['k'],
        models: ['t/oa', 't/oa-listed'],
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
        models: ['t/an'],
        model_mapping: { 't/an': 'claude-sonnet-4-5' },
      },
    ],
    models: [
      model('t/oa'),
      model('t/or'),
      model('t/an'),
      // A registry entry listing its parameters, as the default registry's openai/gpt-4o does.
      model('t/oa-listed', { supported_parameters: OPENAI_CHAT_PARAMS }),
    ],
    gateway: { retry_base_ms: 1, max_attempts: 1 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const messages = [{ role: 'user', content: 'x' }];
const chat = (body: Record<string, unknown>) =>
  c.gw.call('POST', '/v1/chat/completions', { token: c.key, body: { messages, ...body } });
/** The one body the upstream received for `body`, and the gateway's answer. */
async function sentFor(body: Record<string, unknown>) {
  const before = up.requests.length;
  const r = await chat(body);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const sent = up.requests.slice(before);
  expect(sent).toHaveLength(1);
  return { sent: sent[0]!.json, answer: r.body };
}

describe('include_reasoning (OpenRouter, legacy)', () => {
  it('false keeps the reasoning out of the answer, as reasoning.exclude does', async () => {
    const { sent, answer } = await sentFor({ model: 't/oa', include_reasoning: false });
    expect(answer.choices[0].message.content).toBe('fine');
    expect(answer.choices[0].message).not.toHaveProperty('reasoning');
    expect(sent).not.toHaveProperty('include_reasoning');

    const streamed = await rawStream(c, { model: 't/oa', messages, include_reasoning: false });
    expect(streamed.res.status).toBe(200);
    expect(streamed.chunks.some((k) => k.choices?.[0]?.delta?.reasoning)).toBe(false);
    expect(streamed.chunks.map((k) => k.choices?.[0]?.delta?.content ?? '').join('')).toBe('fine');
  });

  it('true (or absent) leaves the reasoning in the answer', async () => {
    for (const extra of [{ include_reasoning: true }, {}]) {
      const { answer } = await sentFor({ model: 't/oa', ...extra });
      expect(answer.choices[0].message.reasoning).toBe('thought');
    }
  });

  it('an upstream that speaks OpenRouter gets it as the reasoning object', async () => {
    expect((await sentFor({ model: 't/or', include_reasoning: false })).sent.reasoning).toEqual({
      exclude: true,
    });
    expect((await sentFor({ model: 't/or', include_reasoning: true })).sent.reasoning).toEqual({});
    const both = await sentFor({ model: 't/or', include_reasoning: false, reasoning: { effort: 'low' } });
    expect(both.sent.reasoning).toEqual({ effort: 'low', exclude: true });
    expect(both.sent).not.toHaveProperty('include_reasoning');
  });

  it("the request's own reasoning.exclude wins", async () => {
    const { sent, answer } = await sentFor({
      model: 't/or',
      include_reasoning: false,
      reasoning: { exclude: false },
    });
    expect(sent.reasoning).toEqual({ exclude: false });
    expect(answer.choices[0].message.reasoning).toBe('thought');
  });

  it('a value that is not a boolean is a 400 naming include_reasoning, sent nowhere', async () => {
    const before = up.requests.length;
    for (const v of ['no', 0, {}]) {
      const r = await chat({ model: 't/oa', include_reasoning: v });
      expect(r.status, JSON.stringify(v)).toBe(400);
      expect(r.body.error.param).toBe('include_reasoning');
      expect(r.body.error.message).toContain('include_reasoning:');
    }
    expect(up.requests.length).toBe(before);
  });
});

describe('labels and cache hints with provider.require_parameters', () => {
  const labels = {
    metadata: { team: 'search', run: '42' },
    store: false,
    prompt_cache_key: 'conv-7',
    prompt_cache_retention: '24h',
  };

  it('skip no upstream: they are not parameters a model lists, and change nothing in the answer', async () => {
    for (const [k, v] of Object.entries(labels)) {
      for (const id of ['t/oa-listed', 't/an', 't/oa']) {
        const before = up.requests.length;
        const r = await chat({ model: id, [k]: v, temperature: 0.5, provider: { require_parameters: true } });
        expect(r.status, `${k} on ${id}: ${JSON.stringify(r.body)}`).toBe(200);
        const sent = up.requests.slice(before);
        expect(sent).toHaveLength(1);
        // OpenAI-compatible upstreams get them; Anthropic has no place for them.
        if (id === 't/an') expect(sent[0]!.json, k).not.toHaveProperty(k);
        else expect(sent[0]!.json[k], k).toEqual(v);
      }
    }
  });

  it('a parameter the model does not list still skips it', async () => {
    const r = await chat({ model: 't/oa-listed', top_k: 5, provider: { require_parameters: true } });
    expect(r.status).toBe(503);
    expect(r.body.error.metadata.excluded_by).toEqual(['require_parameters']);
  });
});

const weather = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } };
/** Where a client may put a cache breakpoint besides parts: a request with one there, and its path. */
const CACHE_CONTROL_PLACES: [string, (cache: unknown) => Record<string, unknown>, string][] = [
  [
    'a tool',
    (cache) => ({ tools: [weather, { ...weather, cache_control: cache }] }),
    'tools.1.cache_control',
  ],
  [
    'a tool call',
    (cache) => ({ tools: [weather], messages: toolTurn({ call: cache }) }),
    'messages.1.tool_calls.0.cache_control',
  ],
  [
    'a tool message',
    (cache) => ({ tools: [weather], messages: toolTurn({ result: cache }) }),
    'messages.2.cache_control',
  ],
];
const BAD_CACHE_CONTROLS: [string, unknown, string][] = [
  ['an unknown type', { type: 'bogus' }, '.type'],
  ['an unknown ttl', { type: 'ephemeral', ttl: '2h' }, '.ttl'],
  ['a string', 'ephemeral', ''],
  ['a number', 1, ''],
  ['an array', [{ type: 'ephemeral' }], ''],
];
/** A question, a call of get_weather and its result; `call` / `result`: their cache_control. */
function toolTurn(cache: { call?: unknown; result?: unknown }) {
  const call: Record<string, unknown> = {
    id: 'call_1',
    type: 'function',
    function: { name: 'get_weather', arguments: '{}' },
  };
  if (cache.call !== undefined) call.cache_control = cache.call;
  const result: Record<string, unknown> = { role: 'tool', tool_call_id: 'call_1', content: '18C' };
  if (cache.result !== undefined) result.cache_control = cache.result;
  return [
    { role: 'user', content: 'Weather?' },
    { role: 'assistant', content: null, tool_calls: [call] },
    result,
  ];
}

describe('OpenAI and OpenRouter fields with documented ranges', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['verbosity', { verbosity: 'loud' }, 'verbosity'],
    ['metadata: a value that is not a string', { metadata: { run: 42 } }, 'metadata.run'],
    ['metadata: a value over 512 characters', { metadata: { run: 'x'.repeat(513) } }, 'metadata.run'],
    ['metadata: a key over 64 characters', { metadata: { ['k'.repeat(65)]: 'v' } }, 'metadata'],
    [
      'metadata: more than 16 pairs',
      { metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) },
      'metadata',
    ],
    ['session_id over 256 characters', { session_id: 's'.repeat(257) }, 'session_id'],
    ['safety_identifier over 256 characters', { safety_identifier: 's'.repeat(257) }, 'safety_identifier'],
    ['safety_identifier that is not a string', { safety_identifier: 42 }, 'safety_identifier'],
    ['top-level cache_control type', { cache_control: { type: 'forever' } }, 'cache_control.type'],
    ['top-level cache_control ttl', { cache_control: { type: 'ephemeral', ttl: '2h' } }, 'cache_control.ttl'],
    ['modalities', { modalities: ['video'] }, 'modalities.0'],
    ['service_tier', { service_tier: 'turbo' }, 'service_tier'],
    ['prediction', { prediction: { type: 'text', content: 'x' } }, 'prediction.type'],
    ['prediction content', { prediction: { type: 'content', content: 5 } }, 'prediction.content'],
    [
      'cache_control type',
      {
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'forever' } }] },
        ],
      },
      'messages.0.content.0.cache_control.type',
    ],
    [
      'cache_control ttl',
      {
        messages: [
          {
            role: 'user',
            content: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral', ttl: '2h' } }],
          },
        ],
      },
      'messages.0.content.0.cache_control.ttl',
    ],
    // Anthropic's breakpoint on a tool, a tool call and a tool message (read by the Anthropic
    // adapter) is checked as on parts: a malformed one would be Anthropic's 400, after an attempt.
    ...CACHE_CONTROL_PLACES.flatMap(([where, body, path]) =>
      BAD_CACHE_CONTROLS.map(([what, bad, inner]): [string, Record<string, unknown>, string] => [
        `cache_control on ${where}: ${what}`,
        body(bad),
        `${path}${inner}`,
      ]),
    ),
    ...['ultra', 'HIGH', ''].map((detail): [string, Record<string, unknown>, string] => [
      `image_url detail ${JSON.stringify(detail)}`,
      {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'x' },
              { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail } },
            ],
          },
        ],
      },
      'messages.0.content.1.image_url.detail',
    ]),
    ...(['format', 'data'] as const).map((field): [string, Record<string, unknown>, string] => [
      `input_audio ${field} empty`,
      {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'x' },
              { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav', [field]: '' } },
            ],
          },
        ],
      },
      `messages.0.content.1.input_audio.${field}`,
    ]),
  ];

  it('out of range: a 400 naming the field, sent nowhere', async () => {
    const before = up.requests.length;
    for (const [what, body, param] of cases) {
      for (const id of ['t/oa', 't/an']) {
        const r = await chat({ model: id, ...body });
        expect(r.status, `${what} on ${id}: ${JSON.stringify(r.body)}`).toBe(400);
        expect(r.body.error.param, what).toBe(param);
        expect(r.body.error.message, what).toContain(`${param}:`);
      }
    }
    expect(up.requests.length).toBe(before);
  });

  it('within range: reach an OpenAI-compatible upstream as sent', async () => {
    const fields = {
      verbosity: 'low',
      metadata: { team: 'search', ['k'.repeat(64)]: 'v'.repeat(512) },
      session_id: 's'.repeat(256),
      modalities: ['text', 'audio'],
      service_tier: 'flex',
      prediction: { type: 'content', content: [{ type: 'text', text: 'old code' }] },
    };
    const { sent } = await sentFor({ model: 't/or', ...fields });
    expect(sent).toMatchObject(fields);
    const cached = [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral', ttl: '1h' } }];
    const withCache = await sentFor({ model: 't/an', messages: [{ role: 'user', content: cached }] });
    expect(withCache.sent.messages[0].content).toEqual(cached);
  });

  it('cache_control on a tool, a tool call and a tool message: a well-formed one reaches Anthropic there', async () => {
    const cache = { type: 'ephemeral', ttl: '1h' };
    const { sent } = await sentFor({
      model: 't/an',
      tools: [{ ...weather, cache_control: cache }],
      messages: toolTurn({ call: cache, result: { type: 'ephemeral' } }),
    });
    expect(sent.tools[0].cache_control).toEqual(cache);
    expect(sent.messages[1].content[0]).toMatchObject({ type: 'tool_use', cache_control: cache });
    expect(sent.messages[2].content[0]).toMatchObject({
      type: 'tool_result',
      cache_control: { type: 'ephemeral' },
    });
  });

  it('input_audio format: any non-empty name (OpenRouter lists many) reaches an OpenAI-compatible upstream as sent', async () => {
    const content = [
      { type: 'text', text: 'x' },
      ...['wav', 'flac', 'pcm16'].map((format) => ({
        type: 'input_audio',
        input_audio: { data: 'UklGRg==', format },
      })),
    ];
    const { sent } = await sentFor({ model: 't/oa', messages: [{ role: 'user', content }] });
    expect(sent.messages[0].content).toEqual(content);
  });

  it("image_url detail: OpenAI's levels and OpenRouter's original reach an OpenAI-compatible upstream as sent", async () => {
    const image = (detail: string) => ({
      type: 'image_url',
      image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail },
    });
    const content = [{ type: 'text', text: 'x' }, ...['auto', 'low', 'high', 'original'].map(image)];
    for (const id of ['t/oa', 't/or']) {
      const { sent } = await sentFor({ model: id, messages: [{ role: 'user', content }] });
      expect(sent.messages[0].content, id).toEqual(content);
    }
  });

  it('safety_identifier: metadata.user_id at Anthropic (over user), as sent elsewhere', async () => {
    const fields = { user: 'u-1', safety_identifier: 's'.repeat(256) };
    const an = await sentFor({ model: 't/an', ...fields });
    expect(an.sent.metadata).toEqual({ user_id: 's'.repeat(256) });
    expect(an.sent).not.toHaveProperty('safety_identifier');
    expect((await sentFor({ model: 't/oa', ...fields })).sent).toMatchObject(fields);
  });

  it('top-level cache_control (Anthropic automatic caching) reaches Anthropic and upstreams that speak OpenRouter only', async () => {
    const cache_control = { type: 'ephemeral', ttl: '5m' };
    for (const id of ['t/an', 't/or'])
      expect((await sentFor({ model: id, cache_control })).sent.cache_control, id).toEqual(cache_control);
    expect((await sentFor({ model: 't/oa', cache_control })).sent).not.toHaveProperty('cache_control');
  });

  it('service_tier "fast" (OpenRouter\'s alias) reaches other OpenAI-compatible upstreams as "priority"', async () => {
    expect((await sentFor({ model: 't/oa', service_tier: 'fast' })).sent.service_tier).toBe('priority');
    expect((await sentFor({ model: 't/or', service_tier: 'fast' })).sent.service_tier).toBe('fast');
    expect((await sentFor({ model: 't/oa', service_tier: 'flex' })).sent.service_tier).toBe('flex');
  });
});
