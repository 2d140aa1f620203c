import { describe, expect, it } from 'vitest';
import { setHidden } from '../../gateway/chat/hidden.js';
import type { ChatRequest, ReasoningDetail } from '../../gateway/chat/types.js';
import { buildOpenAiRequest } from '../openai-compatible/openai-request.js';
import { anthropicAdapter } from './anthropic-adapter.js';
import { reasoningToBlocks, withThinkingInPlace } from './anthropic-messages.js';
import { buildAnthropicRequest } from './anthropic-request.js';
import { AnthropicStreamDecoder } from './anthropic-stream.js';

const build = (r: ChatRequest, extra?: Record<string, unknown>) =>
  JSON.parse(
    buildAnthropicRequest(
      r,
      { baseUrl: 'https://api.anthropic.com', apiKey: 'k', upstreamModel: 'claude', extra },
      { stream: false },
    ).body!,
  );

describe('Anthropic request', () => {
  it('sets a default max_tokens, clamps temperature, drops unsupported params and blank stops', () => {
    const b = build({
      messages: [
        { role: 'user', content: 'a' },
        { role: 'user', content: 'b' },
      ],
      temperature: 1.7,
      stop: ['END', '  '],
      seed: 1,
      presence_penalty: 1,
    });
    expect(b.max_tokens).toBe(4096);
    expect(b.temperature).toBe(1);
    expect(b.stop_sequences).toEqual(['END']);
    expect(b).not.toHaveProperty('seed');
    expect(b.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
    ]);
  });

  it('thinking: budget from reasoning.max_tokens, max_tokens raised above it, forced tool use relaxed', () => {
    const b = build({
      messages: [{ role: 'user', content: 'q' }],
      max_tokens: 1000,
      temperature: 0.2,
      top_k: 3,
      reasoning: { max_tokens: 3000 },
      tools: [{ type: 'function', function: { name: 'f' } }],
      tool_choice: 'required',
      parallel_tool_calls: false,
    });
    expect(b.thinking).toEqual({ type: 'enabled', budget_tokens: 3000 });
    expect(b.max_tokens).toBe(4000);
    expect(b).not.toHaveProperty('temperature');
    expect(b).not.toHaveProperty('top_k');
    expect(b.tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(b.tools[0].input_schema).toEqual({ type: 'object', properties: {} });
  });

  it('small max_tokens still gets the 1024 minimum budget below max_tokens', () => {
    const b = build({
      messages: [{ role: 'user', content: 'q' }],
      max_tokens: 500,
      reasoning: { effort: 'low' },
    });
    expect(b.thinking.budget_tokens).toBe(1024);
    expect(b.max_tokens).toBeGreaterThan(1024);
  });
});

describe('Anthropic thinking round trip from a stream', () => {
  it('streamed fragments rebuild the thinking blocks the next request needs', () => {
    const sse = [
      { type: 'message_start', message: { usage: { input_tokens: 5, output_tokens: 1 } } },
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'step 1, ' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'step 2' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'SIG' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'ENC' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } },
      { type: 'message_stop' },
    ]
      .map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`)
      .join('');
    const d = new AnthropicStreamDecoder();
    const events = [...d.push(sse), ...d.end()];
    const details: ReasoningDetail[] = events.flatMap((e) =>
      e.type === 'delta' ? e.choices.flatMap((c) => c.delta.reasoning_details ?? []) : [],
    );
    expect(reasoningToBlocks(details)).toEqual([
      { type: 'thinking', thinking: 'step 1, step 2', signature: 'SIG' },
      { type: 'redacted_thinking', data: 'ENC' },
    ]);
    expect(events.at(-1)).toEqual({
      type: 'usage',
      usage: {
        prompt_tokens: 5,
        completion_tokens: 9,
        total_tokens: 14,
        prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
        // Anthropic reports no thinking count: the thinking text streamed is counted (8), and with
        // redacted thinking beside it, what the output leaves beside the visible answer (none): 9.
        completion_tokens_details: { reasoning_tokens: 9 },
      },
    });
  });
});

describe('Anthropic cache writes by TTL', () => {
  const streamed = (events: object[]) => {
    const d = new AnthropicStreamDecoder();
    const sse = events.map((e: any) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
    return [...d.push(sse), ...d.end()].find((e) => e.type === 'usage');
  };
  const start = (usage: object) => ({
    type: 'message_start',
    message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'claude', usage },
  });
  const counts = { input_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 30 };

  it('reads the one-hour writes from message_start, and from message_delta (cumulative, the last wins)', () => {
    const atStart = streamed([
      start({ ...counts, cache_creation: { ephemeral_5m_input_tokens: 10, ephemeral_1h_input_tokens: 20 } }),
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } },
      { type: 'message_stop' },
    ]);
    expect(atStart).toMatchObject({
      usage: {
        prompt_tokens: 35,
        prompt_tokens_details: { cache_write_tokens: 30, cache_write_1h_tokens: 20 },
      },
    });
    const inDelta = streamed([
      start({ ...counts, output_tokens: 1 }),
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn' },
        usage: {
          ...counts,
          cache_creation: { ephemeral_5m_input_tokens: 5, ephemeral_1h_input_tokens: 25 },
          output_tokens: 3,
        },
      },
      { type: 'message_stop' },
    ]);
    expect(inDelta).toMatchObject({ usage: { prompt_tokens_details: { cache_write_1h_tokens: 25 } } });
  });

  it('leaves them out when there are none, and never counts more of them than writes', () => {
    const none = streamed([start({ ...counts, cache_creation_input_tokens: 0 }), { type: 'message_stop' }]);
    expect(none).toMatchObject({
      usage: { prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 } },
    });
    expect((none as any).usage.prompt_tokens_details).not.toHaveProperty('cache_write_1h_tokens');
    const over = streamed([
      start({ ...counts, cache_creation: { ephemeral_1h_input_tokens: 99 } }),
      { type: 'message_stop' },
    ]);
    expect(over).toMatchObject({ usage: { prompt_tokens_details: { cache_write_1h_tokens: 30 } } });
  });
});

describe('fields only the Anthropic ingress sets (non-enumerable)', () => {
  const cache = { type: 'ephemeral' as const };
  const request = (): ChatRequest => {
    const tool = setHidden(
      { type: 'function' as const, function: { name: 'run', parameters: { type: 'object' } } },
      'cache_control',
      cache,
    );
    const call = setHidden(
      { id: 'toolu_1', type: 'function' as const, function: { name: 'run', arguments: '{"a":1}' } },
      'cache_control',
      cache,
    );
    const result = setHidden(
      setHidden({ role: 'tool' as const, tool_call_id: 'toolu_1', content: 'boom' }, 'is_error', true),
      'cache_control',
      cache,
    );
    const image = setHidden(
      { type: 'image_url' as const, image_url: { url: 'data:image/png;base64,AAAA' } },
      'cache_control',
      cache,
    );
    return {
      messages: [
        { role: 'user', content: [image] },
        { role: 'assistant', content: null, tool_calls: [call] },
        result,
      ],
      tools: [tool],
    };
  };

  it('reach Anthropic: is_error and cache breakpoints on images, tools, tool calls and results', () => {
    const b = build(request());
    expect(b.tools[0].cache_control).toEqual(cache);
    expect(b.messages[0].content[0]).toMatchObject({ type: 'image', cache_control: cache });
    expect(b.messages[1].content[0]).toMatchObject({ type: 'tool_use', id: 'toolu_1', cache_control: cache });
    expect(b.messages[2].content[0]).toMatchObject({
      type: 'tool_result',
      tool_use_id: 'toolu_1',
      is_error: true,
      cache_control: cache,
    });
  });

  it('never reach an OpenAI-compatible upstream', () => {
    const body = buildOpenAiRequest(
      request(),
      { baseUrl: 'https://api.openai.com/v1', apiKey: 'k', upstreamModel: 'gpt-4o' },
      { stream: false },
    ).body!;
    expect(body).not.toContain('cache_control');
    expect(body).not.toContain('is_error');
    expect(JSON.parse(body).messages[2]).toEqual({ role: 'tool', tool_call_id: 'toolu_1', content: 'boom' });
  });
});

describe("the client's interleaved-thinking beta and a budget at or past max_tokens", () => {
  const BETA = 'interleaved-thinking-2025-05-14';
  const send = (extra?: Record<string, unknown>) => {
    const headers = extra?.headers as Record<string, string> | undefined;
    const r = buildAnthropicRequest(
      setHidden(
        { messages: [{ role: 'user', content: 'hi' }], max_tokens: 8000, reasoning: { max_tokens: 20_000 } },
        'anthropic_beta',
        [BETA],
      ),
      // As the gateway builds a target: the channel's settings, and its `headers` sent as they are.
      { baseUrl: 'https://api.anthropic.com', apiKey: 'k', upstreamModel: 'claude', extra, headers },
      { stream: false },
    );
    const b = JSON.parse(r.body!);
    return { beta: r.headers['anthropic-beta'], budget: b.thinking.budget_tokens, maxTokens: b.max_tokens };
  };

  it('go as asked when the beta is sent: the client’s, allowed, or the channel’s own', () => {
    expect(send()).toEqual({ beta: BETA, budget: 20_000, maxTokens: 8000 });
    expect(send({ client_betas: [], beta: BETA })).toEqual({ beta: BETA, budget: 20_000, maxTokens: 8000 });
  });

  it('make room for the budget when it is not (Anthropic refuses budget_tokens >= max_tokens)', () => {
    expect(send({ client_betas: [] })).toEqual({ beta: undefined, budget: 20_000, maxTokens: 28_000 });
    expect(send({ client_betas: ['fine-grained-tool-streaming-*'], beta: 'context-1m-2025-08-07' })).toEqual({
      beta: 'context-1m-2025-08-07',
      budget: 20_000,
      maxTokens: 28_000,
    });
  });

  it('follow the anthropic-beta header sent, which a channel `settings.headers` entry replaces', () => {
    // The channel's header carries the beta, though neither its `beta` nor `client_betas` does.
    expect(
      send({ client_betas: [], headers: { 'anthropic-beta': `${BETA},context-1m-2025-08-07` } }),
    ).toEqual({
      beta: `${BETA},context-1m-2025-08-07`,
      budget: 20_000,
      maxTokens: 8000,
    });
    // It replaces the merged header that would have carried the client's beta: Anthropic does not get it.
    expect(send({ beta: BETA, headers: { 'anthropic-beta': 'context-1m-2025-08-07' } })).toEqual({
      beta: 'context-1m-2025-08-07',
      budget: 20_000,
      maxTokens: 28_000,
    });
  });

  it('read a channel header spelled otherwise as the second header line it is sent as', () => {
    const r = buildAnthropicRequest(
      setHidden(
        { messages: [{ role: 'user', content: 'hi' }], max_tokens: 8000, reasoning: { max_tokens: 20_000 } },
        'anthropic_beta',
        [BETA],
      ),
      {
        baseUrl: 'https://api.anthropic.com',
        apiKey: 'k',
        upstreamModel: 'claude',
        extra: { client_betas: [], headers: { 'Anthropic-Beta': BETA } },
        headers: { 'Anthropic-Beta': BETA },
      },
      { stream: false },
    );
    expect(r.headers['Anthropic-Beta']).toBe(BETA);
    expect(r.headers['anthropic-beta']).toBeUndefined();
    expect(JSON.parse(r.body!).max_tokens).toBe(8000);
  });

  it('reserve what is sent: route planning counts the same max_tokens', () => {
    const req = setHidden(
      {
        messages: [{ role: 'user' as const, content: 'hi' }],
        max_tokens: 8000,
        reasoning: { max_tokens: 20_000 },
      },
      'anthropic_beta',
      [BETA],
    );
    const planned = (settings: Record<string, unknown>) =>
      anthropicAdapter.sentMaxTokens!(req, {
        baseUrl: 'https://api.anthropic.com',
        upstreamModel: 'claude',
        settings,
        maxCompletionTokens: null,
      });
    expect(planned({ client_betas: [], headers: { 'anthropic-beta': BETA } })).toBe(8000);
    expect(planned({ headers: { 'anthropic-beta': 'context-1m-2025-08-07' } })).toBe(28_000);
  });
});

describe('thinking put back in place', () => {
  const th = (n: number) => ({ type: 'thinking', thinking: `t${n}`, signature: `s${n}` });
  const text = { type: 'text', text: 'x' };
  const tool = (n: number) => ({ type: 'tool_use', id: `c${n}`, name: 'f', input: {} });

  it('puts each thinking block after as many tool calls as preceded it, in a turn of tool calls', () => {
    // [t0, c1, t2, c3]
    expect(withThinkingInPlace([th(0), th(2)], [0, 2], [tool(1), tool(3)])).toEqual([
      th(0),
      tool(1),
      th(2),
      tool(3),
    ]);
    // [t0, t1, c2, r3(redacted), c4]: consecutive blocks stay together.
    expect(withThinkingInPlace([th(0), th(1), th(3)], [0, 1, 3], [tool(2), tool(4)])).toEqual([
      th(0),
      th(1),
      tool(2),
      th(3),
      tool(4),
    ]);
  });

  it('leads with the thinking when the count of blocks before it cannot be exact', () => {
    // Missing, repeated or out-of-order indexes.
    for (const at of [
      [undefined, 2],
      [0, 0],
      [2, 0],
    ])
      expect(withThinkingInPlace([th(0), th(2)], at, [tool(1), tool(3)])).toEqual([
        th(0),
        th(2),
        tool(1),
        tool(3),
      ]);
    // Text in the turn: several text blocks were joined into one, so counts are off. An answer
    // [t0, text1, text2, t3, c4] must not come back as [t0, text, c4, t3].
    expect(withThinkingInPlace([th(0), th(3)], [0, 3], [text, tool(4)])).toEqual([
      th(0),
      th(3),
      text,
      tool(4),
    ]);
    // An index past the tool calls there are would end the turn with thinking.
    expect(withThinkingInPlace([th(0), th(9)], [0, 9], [tool(1)])).toEqual([th(0), th(9), tool(1)]);
    expect(withThinkingInPlace([], [], [text])).toEqual([text]);
  });
});

describe('Anthropic-format streams from servers that are not Anthropic', () => {
  it("takes a tool call's input from content_block_start when no input_json_delta follows", () => {
    const events = [
      {
        type: 'message_start',
        message: { id: 'm', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 3 } },
      },
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { cmd: 'ls' } },
      },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 'toolu_2', name: 'noop', input: {} },
      },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 4 } },
      { type: 'message_stop' },
    ];
    const d = new AnthropicStreamDecoder();
    const sse = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
    const args = new Map<number, string>();
    for (const e of [...d.push(sse), ...d.end()])
      if (e.type === 'delta')
        for (const t of e.choices.flatMap((c) => c.delta.tool_calls ?? []))
          args.set(t.index, (args.get(t.index) ?? '') + (t.function?.arguments ?? ''));
    expect([...args.values()]).toEqual(['{"cmd":"ls"}', '{}']);
  });
});
