import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { OpenRouter } from '@openrouter/sdk';
import { generateText, jsonSchema, streamText, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import {
  type ChatGateway,
  fixture,
  fixtureJson,
  model,
  oaChunk,
  openaiChannel,
  rawStream,
  recordedAnswer,
  requestLogs,
  sse,
  sseSteps,
  startChatGateway,
  userMsg,
} from './chat-helpers.js';
import { openaiClient } from './sdk-clients.js';

/**
 * Official clients against a started gateway whose upstream replays recorded OpenAI answers.
 * The last user message picks the scenario.
 */
const LOGPROBS = {
  content: [
    {
      token: 'Hi',
      logprob: -0.1,
      bytes: [72, 105],
      top_logprobs: [{ token: 'Hi', logprob: -0.1, bytes: [72, 105] }],
    },
  ],
  refusal: null,
};

function scenario(name: string, stream: boolean) {
  switch (name) {
    case 'tools':
      return recordedAnswer('openai/tools', stream);
    case 'logprobs':
      return stream
        ? {
            sse: sse([
              oaChunk({ role: 'assistant', content: 'Hi' }, null, { logprobs: LOGPROBS }),
              oaChunk({}, 'stop'),
              {
                ...oaChunk({}),
                choices: [],
                usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
              },
            ]),
          }
        : {
            json: {
              ...fixtureJson('openai/chat.json'),
              choices: [
                {
                  index: 0,
                  message: { role: 'assistant', content: 'Hi' },
                  logprobs: LOGPROBS,
                  finish_reason: 'stop',
                },
              ],
            },
          };
    case 'error-after-200':
      return { sse: sseSteps(fixture('openai/error-after-200.sse')) };
    default:
      return recordedAnswer('openai/chat', stream);
  }
}

let up: FakeUpstream;
let c: ChatGateway;

beforeAll(async () => {
  up = await startFakeUpstream({
    'POST /v1/chat/completions': (req) => {
      const last = req.json.messages.at(-1).content;
      return scenario(typeof last === 'string' ? last : 'text', req.json.stream === true);
    },
  });
  c = await startChatGateway({
    channels: [openaiChannel('oa', up, ['acme/gpt'])],
    models: [
      model('acme/gpt', {
        supported_parameters: [
          'tools',
          'tool_choice',
          'logprobs',
          'top_logprobs',
          'max_tokens',
          'temperature',
        ],
      }),
    ],
    gateway: { retry_base_ms: 1, first_byte_timeout_ms: 2000 },
  });
});
afterAll(async () => {
  await c?.gw.close();
  await up?.close();
});

const TOOLS = [
  {
    type: 'function' as const,
    function: { name: 'get_weather', parameters: { type: 'object', properties: {} } },
  },
  {
    type: 'function' as const,
    function: { name: 'get_time', parameters: { type: 'object', properties: {} } },
  },
];

describe('openai SDK', () => {
  const client = () => openaiClient(c);

  it('creates: text, usage, integer created, serving model and provider', async () => {
    const r = await client().chat.completions.create({ model: 'acme/gpt', messages: userMsg('text') });
    expect(r.choices[0]!.message.content).toBe('Hello! How can I assist you today?');
    expect(r.choices[0]!.finish_reason).toBe('stop');
    expect(r.model).toBe('acme/gpt');
    expect((r as any).provider).toBe('oa');
    expect(Number.isInteger(r.created)).toBe(true);
    expect(r.usage).toMatchObject({ prompt_tokens: 19, completion_tokens: 10, total_tokens: 29 });
    const sent = up.requests.at(-1)!;
    expect(sent.json.stream_options).toBeUndefined();
  });

  it('streams text and asks the upstream for usage', async () => {
    const stream = await client().chat.completions.create({
      model: 'acme/gpt',
      messages: userMsg('text'),
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: any;
    for await (const ch of stream) {
      text += ch.choices[0]?.delta?.content ?? '';
      if (ch.usage) usage = ch.usage;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(usage.total_tokens).toBeGreaterThan(0);
    expect(typeof usage.cost).toBe('number');
    expect(up.requests.at(-1)!.json.stream_options).toMatchObject({ include_usage: true });
  });

  it('returns tool calls, and streams them in fragments with stable indices', async () => {
    const r = await client().chat.completions.create({
      model: 'acme/gpt',
      messages: userMsg('tools'),
      tools: TOOLS,
    });
    expect(r.choices[0]!.finish_reason).toBe('tool_calls');
    const call = r.choices[0]!.message.tool_calls![0]! as any;
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ location: 'Boston, MA' });

    const stream = await client().chat.completions.create({
      model: 'acme/gpt',
      messages: userMsg('tools'),
      tools: TOOLS,
      stream: true,
    });
    const calls: Record<number, { id?: string; name?: string; args: string }> = {};
    let finish: string | null = null;
    for await (const ch of stream) {
      for (const tc of ch.choices[0]?.delta?.tool_calls ?? []) {
        calls[tc.index] ??= { args: '' };
        if (tc.id) calls[tc.index]!.id = tc.id;
        if (tc.function?.name) calls[tc.index]!.name = tc.function.name;
        calls[tc.index]!.args += tc.function?.arguments ?? '';
      }
      finish = ch.choices[0]?.finish_reason ?? finish;
    }
    expect(Object.keys(calls)).toEqual(['0', '1']);
    expect(calls[0]!.name).toBe('get_weather');
    expect(calls[1]!.name).toBe('get_time');
    expect(JSON.parse(calls[1]!.args)).toEqual({ tz: 'Europe/Paris' });
    expect(() => JSON.parse(calls[0]!.args)).not.toThrow();
    expect(finish).toBe('tool_calls');
  });

  it('passes logprobs through, streamed and not', async () => {
    const r = await client().chat.completions.create({
      model: 'acme/gpt',
      messages: userMsg('logprobs'),
      logprobs: true,
      top_logprobs: 1,
    });
    expect(r.choices[0]!.logprobs!.content![0]).toMatchObject({
      token: 'Hi',
      logprob: -0.1,
      bytes: [72, 105],
    });
    expect(up.requests.at(-1)!.json).toMatchObject({ logprobs: true, top_logprobs: 1 });
    const stream = await client().chat.completions.create({
      model: 'acme/gpt',
      messages: userMsg('logprobs'),
      logprobs: true,
      stream: true,
    });
    const lps: unknown[] = [];
    for await (const ch of stream) if (ch.choices[0]?.logprobs) lps.push(ch.choices[0].logprobs);
    expect(lps[0]).toMatchObject({ content: [{ token: 'Hi' }] });
  });

  it('an error after a 200 ends the stream in-band: error chunk, finish_reason error, [DONE]', async () => {
    const raw = await rawStream(c, { model: 'acme/gpt', messages: userMsg('error-after-200') });
    expect(raw.res.status).toBe(200);
    expect(raw.events.at(-1)).toBe('[DONE]');
    const last = raw.chunks.at(-1);
    expect(last.error).toMatchObject({ code: 502 });
    expect(Number.isInteger(last.error.code)).toBe(true);
    expect(typeof last.error.metadata.error_type).toBe('string');
    expect(last.choices[0].finish_reason).toBe('error');
    expect(raw.chunks.map((ch) => ch.choices[0]?.delta?.content ?? '').join('')).toBe('Hel');

    const stream = await client().chat.completions.create({
      model: 'acme/gpt',
      messages: userMsg('error-after-200'),
      stream: true,
    });
    let text = '';
    await expect(
      (async () => {
        for await (const ch of stream) text += ch.choices[0]?.delta?.content ?? '';
      })(),
    ).rejects.toThrow(/upstream/);
    expect(text).toBe('Hel');
  });
});

describe('@openrouter/sdk (strict zod checks)', () => {
  const client = () =>
    new OpenRouter({ apiKey: c.key, serverURL: `${c.gw.url}/api/v1`, retryConfig: { strategy: 'none' } });

  it('sends: ChatResult passes validation', async () => {
    const r = (await client().chat.send({
      chatRequest: { model: 'acme/gpt', messages: userMsg('text') },
    })) as any;
    expect(r.choices[0].message.content).toBe('Hello! How can I assist you today?');
    expect(r.systemFingerprint === null || typeof r.systemFingerprint === 'string').toBe(true);
    expect(r.choices[0].finishReason).toBe('stop');
    expect(r.usage.totalTokens).toBe(29);
    const tools = (await client().chat.send({
      chatRequest: { model: 'acme/gpt', messages: userMsg('tools'), tools: TOOLS as any },
    })) as any;
    expect(tools.choices[0].message.toolCalls[0].function.name).toBe('get_weather');
    const lp = (await client().chat.send({
      chatRequest: { model: 'acme/gpt', messages: userMsg('logprobs'), logprobs: true, topLogprobs: 1 },
    })) as any;
    expect(lp.choices[0].logprobs.content[0].token).toBe('Hi');
  });

  it('streams: every chunk passes validation (text, tools, logprobs, in-band error)', async () => {
    for (const name of ['text', 'tools', 'logprobs']) {
      const stream = (await client().chat.send({
        chatRequest: {
          model: 'acme/gpt',
          messages: userMsg(name),
          stream: true,
          tools: name === 'tools' ? (TOOLS as any) : undefined,
        },
      })) as AsyncIterable<any>;
      const chunks: any[] = [];
      for await (const ch of stream) chunks.push(ch);
      expect(chunks.length, name).toBeGreaterThan(1);
      expect(
        chunks.some((ch) => ch.choices[0]?.finishReason),
        name,
      ).toBe(true);
    }
    const stream = (await client().chat.send({
      chatRequest: { model: 'acme/gpt', messages: userMsg('error-after-200'), stream: true },
    })) as AsyncIterable<any>;
    const chunks: any[] = [];
    for await (const ch of stream) chunks.push(ch);
    expect(chunks.at(-1).error.code).toBe(502);
    expect(chunks.at(-1).choices[0].finishReason).toBe('error');
  });

  it('a model variant and provider.sort exacto as the SDK types them; the base model served', async () => {
    const r = (await client().chat.send({
      chatRequest: {
        model: 'acme/gpt:nitro',
        messages: userMsg('text'),
        provider: { sort: 'exacto' },
      },
    })) as any;
    expect(r.model).toBe('acme/gpt');
    expect(r.choices[0].message.content).toBe('Hello! How can I assist you today?');
    const by = (await client().chat.send({
      chatRequest: {
        model: 'acme/gpt:exacto',
        messages: userMsg('text'),
        provider: { sort: { by: 'exacto' } },
      },
    })) as any;
    expect(by.model).toBe('acme/gpt');
  });

  it('video parts as the SDK types them, the legacy input_video too, reach the upstream as video_url', async () => {
    const before = up.requests.length;
    const r = (await client().chat.send({
      chatRequest: {
        model: 'acme/gpt',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What happens here?' },
              { type: 'video_url', videoUrl: { url: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ' } },
              { type: 'input_video', videoUrl: { url: 'data:video/mp4;base64,AAAAIGZ0eXA=' } },
            ],
          },
        ],
      },
    })) as any;
    expect(r.choices[0].message.content).toBe('Hello! How can I assist you today?');
    expect(up.requests.slice(before)).toHaveLength(1);
    expect(up.requests.at(-1)!.json.messages[0].content.slice(1)).toEqual([
      { type: 'video_url', video_url: { url: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ' } },
      { type: 'video_url', video_url: { url: 'data:video/mp4;base64,AAAAIGZ0eXA=' } },
    ]);
  });

  it('a gateway error is a typed SDK error with an integer code', async () => {
    await expect(
      client().chat.send({ chatRequest: { model: 'nope/missing', messages: userMsg('text') } }),
    ).rejects.toMatchObject({ statusCode: 404 });
  });
});

describe('ai SDK with @ai-sdk/openai-compatible', () => {
  const provider = () =>
    createOpenAICompatible({
      name: 'modelgate',
      baseURL: `${c.gw.url}/v1`,
      apiKey: c.key,
      includeUsage: true,
    });

  it('generateText: text and usage', async () => {
    const r = await generateText({ model: provider().chatModel('acme/gpt'), prompt: 'text', maxRetries: 0 });
    expect(r.text).toBe('Hello! How can I assist you today?');
    expect(r.usage.inputTokens).toBe(19);
    expect(r.finishReason).toBe('stop');
  });

  it('generateText: tool calls', async () => {
    const r = await generateText({
      model: provider().chatModel('acme/gpt'),
      prompt: 'tools',
      maxRetries: 0,
      tools: {
        get_weather: tool({ inputSchema: jsonSchema({ type: 'object', properties: {} }) }),
        get_time: tool({ inputSchema: jsonSchema({ type: 'object', properties: {} }) }),
      },
    });
    expect(r.toolCalls[0]?.toolName).toBe('get_weather');
  });

  it('streamText: text, usage, and an in-band error surfaces as an error part', async () => {
    const s = streamText({ model: provider().chatModel('acme/gpt'), prompt: 'text', maxRetries: 0 });
    let text = '';
    for await (const t of s.textStream) text += t;
    expect(text.length).toBeGreaterThan(0);
    expect((await s.usage).totalTokens).toBeGreaterThan(0);

    const errors: unknown[] = [];
    const bad = streamText({
      model: provider().chatModel('acme/gpt'),
      prompt: 'error-after-200',
      maxRetries: 0,
      onError: ({ error }) => void errors.push(error),
    });
    const parts: string[] = [];
    for await (const p of bad.fullStream) parts.push(p.type);
    expect(parts).toContain('error');
    expect(await bad.finishReason).toBe('error');
  });
});

describe('billing', () => {
  it('logs every request once, with the attempt trail', async () => {
    const logs = await requestLogs(c);
    expect(logs.length).toBeGreaterThan(10);
    for (const l of logs) expect(l.attempts?.length ?? 0).toBeGreaterThanOrEqual(l.status === 404 ? 0 : 1);
    const ids = new Set(logs.map((l) => l.request_id));
    expect(ids.size).toBe(logs.length);
  });
});
