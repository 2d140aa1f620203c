import { describe, expect, it, vi } from 'vitest';
import type { ChatStreamEvent } from '../../gateway/chat/types.js';
import { UpstreamError } from '../../gateway/errors.js';
import { countsAgainstHealth } from '../../gateway/routing/execute.js';
import { OpenAiStreamDecoder, parseOpenAiResponse } from './openai-response.js';
import { ToolCallIndexes } from './tool-call-indexes.js';

const decode = (...pieces: string[]): ChatStreamEvent[] => {
  const d = new OpenAiStreamDecoder();
  return [...pieces.flatMap((p) => d.push(p)), ...d.end()];
};
const data = (v: unknown) => `data: ${typeof v === 'string' ? v : JSON.stringify(v)}\n\n`;
const kindOf = (ev: ChatStreamEvent | undefined) => (ev?.type === 'error' ? ev.error.kind : ev?.type);

describe('OpenAI-format answers without choices are bad responses', () => {
  it('a stream of only [DONE], or of chunks without choices, ends with a bad_response error', () => {
    expect(decode(data('[DONE]')).map(kindOf)).toEqual(['bad_response']);
    const usage = { prompt_tokens: 3, completion_tokens: 0, total_tokens: 3 };
    expect(decode(data({ choices: [] }), data({ choices: [], usage }), data('[DONE]')).map(kindOf)).toEqual([
      'usage',
      'bad_response',
    ]);
  });

  it('a stream with a choice ends normally at [DONE]', () => {
    const evs = decode(
      data({ choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: 'stop' }] }),
      data('[DONE]'),
    );
    expect(evs.map(kindOf)).toEqual(['delta']);
  });

  it('a body with choices: [] is a bad_response; with an error object beside it, that error', () => {
    const empty = () => parseOpenAiResponse(200, JSON.stringify({ id: 'x', choices: [] }), {});
    expect(empty).toThrow(UpstreamError);
    expect(empty).toThrow(expect.objectContaining({ kind: 'bad_response', upstreamStatus: 200 }));
    const withError = JSON.stringify({ choices: [], error: { code: 429, message: 'slow down' } });
    expect(() => parseOpenAiResponse(200, withError, {})).toThrow(
      expect.objectContaining({ kind: 'rate_limited' }),
    );
  });
});

describe('error events inside a stream', () => {
  const failure = (...pieces: string[]) => {
    const evs = decode(data({ choices: [{ index: 0, delta: { content: 'hi' } }] }), ...pieces);
    expect(evs.map((e) => e.type)).toEqual(['delta', 'error']);
    return (evs[1] as { error: UpstreamError }).error;
  };

  it('an `error:` field, an `event: error` with a bare or wrapped object, or a text: the error, by its code', () => {
    const bare = '{"code":503,"message":"Loading model","type":"unavailable_error"}';
    for (const e of [
      failure(`error: ${bare}\n\n`, data('[DONE]')),
      failure(`event: error\ndata: ${bare}\n\n`),
      failure(`event: error\ndata: {"error":${bare}}\n\n`),
    ])
      expect(e).toMatchObject({ kind: 'overloaded', upstreamStatus: 503, message: 'Loading model' });
    expect(failure(data({ object: 'error', message: 'Loading model', type: 'x', code: 503 }))).toMatchObject({
      kind: 'overloaded',
      message: 'Loading model',
    });
    expect(failure('event: error\ndata: something broke\n\n')).toMatchObject({
      kind: 'server_error',
      message: 'something broke',
    });
    expect(
      failure(
        'error: {"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}\n\n',
      ),
    ).toMatchObject({ kind: 'context_length' });
  });
});

describe('an error object without a numeric code (a stream event, or a 200 body) is classified by its type or code', () => {
  const streamed = (error: object) => {
    const evs = decode(data({ choices: [{ index: 0, delta: { content: 'hi' } }] }), data({ error }));
    return (evs[1] as { error: UpstreamError }).error;
  };
  const whole = (error: object) => {
    try {
      parseOpenAiResponse(200, JSON.stringify({ error }), {});
    } catch (e) {
      return e as UpstreamError;
    }
    throw new Error('no error thrown');
  };
  const cases: Array<[object, string, number, boolean, boolean]> = [
    // [error, kind, status it stands for, retryable, counts against the circuit]
    [
      { message: 'm', type: 'invalid_request_error', code: 'context_length_exceeded' },
      'context_length',
      400,
      false,
      false,
    ],
    [
      { message: 'm', type: 'invalid_request_error', code: 'invalid_value' },
      'bad_request',
      400,
      false,
      false,
    ],
    [{ message: 'm', type: 'invalid_request_error', code: null }, 'bad_request', 400, false, false],
    [{ message: 'm', type: 'authentication_error' }, 'auth', 401, false, false],
    [{ message: 'm', type: 'permission_error' }, 'auth', 403, false, false],
    [{ message: 'm', type: 'not_found_error' }, 'not_found', 404, false, false],
    [{ message: 'm', type: 'tokens', code: 'rate_limit_exceeded' }, 'rate_limited', 429, true, false],
    [{ message: 'm', type: 'insufficient_quota', code: 'insufficient_quota' }, 'payment', 429, false, false],
    [{ message: 'm', type: 'server_error' }, 'server_error', 500, true, true],
    [{ message: 'm', type: 'overloaded_error' }, 'overloaded', 503, true, true],
    [{ message: 'm', code: 'slow_down' }, 'overloaded', 503, true, true],
    [{ message: 'm', type: 'something_new' }, 'server_error', 500, true, true],
    [{ message: 'm', type: 'invalid_request_error', code: 503 }, 'overloaded', 503, true, true],
  ];
  it.each(cases)('%j: %s (%i)', (error, kind, status, retryable, counted) => {
    for (const e of [streamed(error), whole(error)]) {
      expect(e).toMatchObject({ kind, upstreamStatus: status, retryable });
      expect(countsAgainstHealth(e.kind)).toBe(counted);
    }
  });
});

describe('streamed tool calls leave the decoder with the index of their call', () => {
  /** The tool-call deltas of a stream, as [index, id, arguments] per delta. */
  const calls = (...chunks: object[][]) =>
    decode(...chunks.map((tool_calls) => data({ choices: [{ index: 0, delta: { tool_calls } }] })))
      .flatMap((ev) => (ev.type === 'delta' ? (ev.choices[0]!.delta.tool_calls ?? []) : []))
      .map((t) => [t.index, t.id, t.function?.arguments]);
  const start = (id: string, args = '', index?: number) => ({
    ...(index === undefined ? {} : { index }),
    id,
    type: 'function',
    function: { name: 'f', arguments: args },
  });
  const more = (args: string, index?: number) => ({
    ...(index === undefined ? {} : { index }),
    function: { arguments: args },
  });

  it('keeps the indexes of an OpenAI stream as they are, parallel calls included', () => {
    expect(
      calls([start('a', '', 0)], [more('{', 0)], [start('b', '', 1)], [more('}', 1)], [more('}', 0)]),
    ).toEqual([
      [0, 'a', ''],
      [0, undefined, '{'],
      [1, 'b', ''],
      [1, undefined, '}'],
      [0, undefined, '}'],
    ]);
  });

  it('numbers calls without an index by their ids; fragments without either continue the last call', () => {
    expect(calls([start('a')], [more('{}')], [start('b')], [more('{')], [more('}')])).toEqual([
      [0, 'a', ''],
      [0, undefined, '{}'],
      [1, 'b', ''],
      [1, undefined, '{'],
      [1, undefined, '}'],
    ]);
  });

  it('gives a new id at an index another call has the next index, in one chunk or in two', () => {
    expect(calls([start('a', '{"x":1}', 0)], [start('b', '{"y":2}', 0)])).toEqual([
      [0, 'a', '{"x":1}'],
      [1, 'b', '{"y":2}'],
    ]);
    expect(calls([start('a', '{}', 0), start('b', '{}', 0), start('c', '{}', 0)]).map((c) => c[0])).toEqual([
      0, 1, 2,
    ]);
  });

  it('sends a fragment to the call its upstream index last started, or its id names', () => {
    expect(
      calls(
        [start('a', '', 0)],
        [start('b', '', 0)],
        [more('{', 0)],
        [{ index: 0, id: 'a', function: { arguments: 'A' } }],
      ),
    ).toEqual([
      [0, 'a', ''],
      [1, 'b', ''],
      [1, undefined, '{'],
      [0, 'a', 'A'],
    ]);
  });

  it('without ids, upstream indexes are kept and a fragment without one continues the last call; a call gets an id on its first fragment', () => {
    const id = expect.stringMatching(/^call_[0-9a-f]{24}$/);
    expect(calls([more('{', 0)], [more('}', 0)], [more('{', 1)], [more('}')])).toEqual([
      [0, id, '{'],
      [0, undefined, '}'],
      [1, id, '{'],
      [1, undefined, '}'],
    ]);
  });

  it('without ids, a name at an index whose call is named starts the next call: another name, or the same once the arguments are whole', () => {
    const named = (name: string, args: string, index?: number) => ({
      ...(index === undefined ? {} : { index }),
      function: { name, arguments: args },
    });
    const out = (...chunks: object[][]) =>
      decode(...chunks.map((tool_calls) => data({ choices: [{ index: 0, delta: { tool_calls } }] })))
        .flatMap((ev) => (ev.type === 'delta' ? (ev.choices[0]!.delta.tool_calls ?? []) : []))
        .map((t) => [t.index, t.function?.name, t.function?.arguments]);
    // Whole calls, each at index 0: another function, then the same function again.
    expect(out([named('f', '{"a":1}', 0)], [named('g', '{}', 0)], [named('g', '{"b":2}', 0)])).toEqual([
      [0, 'f', '{"a":1}'],
      [1, 'g', '{}'],
      [2, 'g', '{"b":2}'],
    ]);
    // The name repeated on every fragment: one call while its arguments are not whole, the
    // repeated name left out; then the same function's next call. Without an index alike.
    for (const i of [0, undefined])
      expect(out([named('f', '{"a":', i)], [named('f', '1}', i)], [named('f', '{"a":2}', i)])).toEqual([
        [0, 'f', '{"a":'],
        [0, undefined, '1}'],
        [1, 'f', '{"a":2}'],
      ]);
  });

  it('a long call whose fragments repeat its name has its arguments parsed only when they could be whole', () => {
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const indexes = new ToolCallIndexes();
      const fragments = ['{"text": "', ...Array.from({ length: 2_000 }, () => 'abcdefghij'), '"}'];
      const deltas = fragments.map((args) => ({ index: 0, function: { name: 'write', arguments: args } }));
      for (const d of deltas) indexes.apply([d]);
      expect(deltas.map((d) => d.index)).toEqual(deltas.map(() => 0));
      // Once, for the fragment that closes the object (it used to be once per fragment).
      expect(parse.mock.calls.length).toBeLessThanOrEqual(1);
    } finally {
      parse.mockRestore();
    }
  });

  it('a call with an id (OpenAI) whose fragments repeat its name is not cut', () => {
    expect(calls([start('a', '{', 0)], [{ index: 0, function: { name: 'f', arguments: '}' } }])).toEqual([
      [0, 'a', '{'],
      [0, undefined, '}'],
    ]);
  });

  it('numbers the calls of each choice on their own', () => {
    const evs = decode(
      data({
        choices: [
          { index: 0, delta: { tool_calls: [start('a')] } },
          { index: 1, delta: { tool_calls: [start('b')] } },
        ],
      }),
    );
    const d = evs[0]!.type === 'delta' ? evs[0]!.choices : [];
    expect(d.map((c) => c.delta.tool_calls![0]!.index)).toEqual([0, 0]);
  });
});

describe('non-streamed tool calls', () => {
  it('a tool call without an id gets one; one with an id keeps it', () => {
    const body = {
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              { type: 'function', function: { name: 'f', arguments: '{}' } },
              { id: '', type: 'function', function: { name: 'g', arguments: '{}' } },
              { id: 'call_up', type: 'function', function: { name: 'h', arguments: '{}' } },
            ],
          },
        },
      ],
    };
    const ids = parseOpenAiResponse(200, JSON.stringify(body), {}).choices[0]!.message.tool_calls!.map(
      (t) => t.id,
    );
    expect(ids[0]).toMatch(/^call_[0-9a-f]{24}$/);
    expect(ids[1]).toMatch(/^call_[0-9a-f]{24}$/);
    expect(ids[0]).not.toBe(ids[1]);
    expect(ids[2]).toBe('call_up');
  });
});

describe('reasoning under two names (vLLM sends reasoning and reasoning_content alike)', () => {
  it('streamed: one reasoning field, whichever names the upstream used', () => {
    const [both] = decode(
      data({
        choices: [{ index: 0, delta: { reasoning: 'plan', reasoning_content: 'plan' }, finish_reason: null }],
      }),
    );
    const [only] = decode(
      data({ choices: [{ index: 0, delta: { reasoning_content: 'plan' }, finish_reason: null }] }),
    );
    for (const ev of [both, only]) {
      expect(ev?.type).toBe('delta');
      const d = ev?.type === 'delta' ? ev.choices[0]!.delta : {};
      expect(d).toMatchObject({ reasoning: 'plan' });
      expect(d).not.toHaveProperty('reasoning_content');
    }
  });

  it('not streamed: the same', () => {
    const body = (m: object) =>
      JSON.stringify({
        choices: [{ index: 0, message: { role: 'assistant', content: 'a', ...m }, finish_reason: 'stop' }],
      });
    for (const m of [{ reasoning: 'plan', reasoning_content: 'plan' }, { reasoning_content: 'plan' }]) {
      const r = parseOpenAiResponse(200, body(m), {});
      expect(r.choices[0]!.message).toMatchObject({ reasoning: 'plan' });
      expect(r.choices[0]!.message).not.toHaveProperty('reasoning_content');
    }
  });
});

describe('content as a list of chunks (Mistral)', () => {
  it('text chunks are the content, thinking chunks reasoning; a delta without text has no content', () => {
    const evs = decode(
      data({
        choices: [{ index: 0, delta: { role: 'assistant', content: [{ type: 'thinking', thinking: 'a' }] } }],
      }),
      data({
        choices: [
          {
            index: 0,
            delta: {
              content: [
                { type: 'thinking', thinking: [{ type: 'text', text: 'b' }], closed: true },
                { type: 'reference', reference_ids: [1] },
                { type: 'text', text: 'x' },
                { type: 'text', text: 'y' },
              ],
            },
            finish_reason: 'stop',
          },
        ],
      }),
      data('[DONE]'),
    );
    expect(evs.map((e) => (e.type === 'delta' ? e.choices[0]!.delta : e.type))).toEqual([
      { role: 'assistant', reasoning: 'a' },
      { reasoning: 'b', content: 'xy' },
    ]);
  });

  it('not streamed: a message with only thinking has null content', () => {
    const body = (content: unknown) =>
      JSON.stringify({
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      });
    const m = parseOpenAiResponse(
      200,
      body([{ type: 'thinking', thinking: [{ type: 'text', text: 'hm' }] }]),
      {},
    ).choices[0]!.message;
    expect(m).toMatchObject({ content: null, reasoning: 'hm' });
  });
});

describe("OpenRouter's non-streamed answer from a provider that failed part-way", () => {
  it('is an upstream failure by its code, not a partial answer billed as a success', () => {
    const body = JSON.stringify({
      id: 'gen-1',
      choices: [
        {
          index: 0,
          finish_reason: 'error',
          message: { role: 'assistant', content: 'Partial' },
          error: { code: 502, message: 'provider disconnected' },
        },
      ],
    });
    expect(() => parseOpenAiResponse(200, body, {})).toThrow(
      expect.objectContaining({
        kind: 'server_error',
        message: expect.stringContaining('provider disconnected'),
      }),
    );
    const limited = body.replace('"code":502', '"code":429');
    expect(() => parseOpenAiResponse(200, limited, {})).toThrow(
      expect.objectContaining({ kind: 'rate_limited' }),
    );
  });
});

describe("Groq's stream usage under x_groq", () => {
  // Groq's streamed answers carry the usage on the last chunk under `x_groq.usage` (with its
  // timings beside the counts), not as a top-level `usage` (providers.md §7, Portkey #1072).
  const groqUsage = {
    queue_time: 0.02,
    prompt_tokens: 24,
    prompt_time: 0.001,
    completion_tokens: 7,
    completion_time: 0.01,
    total_tokens: 31,
    total_time: 0.011,
  };
  const last = {
    id: 'chatcmpl-g',
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }],
    x_groq: { id: 'req_01', usage: groqUsage },
  };
  const first = { choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }] };

  it('is the usage when no top-level usage came', () => {
    const evs = decode(data(first), data(last), data('[DONE]'));
    expect(evs.map(kindOf)).toEqual(['delta', 'delta', 'usage']);
    const u = evs.find((e) => e.type === 'usage');
    expect(u?.type === 'usage' && u.usage).toMatchObject({
      prompt_tokens: 24,
      completion_tokens: 7,
      total_tokens: 31,
    });
  });

  it('a top-level usage wins over it, and a chunk of x_groq without usage adds none', () => {
    const usage = { prompt_tokens: 25, completion_tokens: 8, total_tokens: 33 };
    const both = decode(data(first), data({ ...last, usage }), data('[DONE]'));
    expect(both.filter((e) => e.type === 'usage').map((e) => e.type === 'usage' && e.usage)).toEqual([usage]);
    const bare = decode(data({ ...first, x_groq: { id: 'req_01' } }), data('[DONE]'));
    expect(bare.map(kindOf)).toEqual(['delta']);
  });
});
