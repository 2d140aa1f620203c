import { describe, expect, it } from 'vitest';
import type { ChatDeltaChoice, ReasoningDetail } from '../../gateway/chat/types.js';
import { assistantTurn } from './anthropic-assistant-decode.js';
import { detailsOfSignature } from './anthropic-signatures.js';
import { AnthropicStreamEncoder } from './anthropic-stream-encode.js';

const delta = (d: ChatDeltaChoice['delta']): ChatDeltaChoice[] => [
  { index: 0, delta: d, finish_reason: null },
];

/** The events a stream wrote, parsed. */
const events = (sse: string) =>
  sse
    .split('\n\n')
    .filter((e) => e.includes('data: '))
    .map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 6)));

const signatures = (sse: string): string[] =>
  events(sse)
    .filter((e) => e.type === 'content_block_delta' && e.delta.type === 'signature_delta')
    .map((e) => e.delta.signature);

const G = 'google-gemini-v1';

describe('AnthropicStreamEncoder: reasoning details in pieces', () => {
  it('reads a piece that does not repeat the format as its detail’s, never as Anthropic’s', () => {
    const enc = new AnthropicStreamEncoder('msg_1', 'm', 'req_1', undefined);
    const pieces: ReasoningDetail[][] = [
      [{ type: 'reasoning.text', text: 'Thinking', format: G, index: 0 }],
      [{ type: 'reasoning.text', text: ' on.', index: 0 }],
      [{ type: 'reasoning.text', signature: 'SIG', index: 0 }],
    ];
    let out = enc.chunk(delta({ reasoning: 'Thinking', reasoning_details: pieces[0] }));
    out += enc.chunk(delta({ reasoning: ' on.', reasoning_details: pieces[1] }));
    out += enc.chunk(delta({ reasoning_details: pieces[2] }));
    out += enc.chunk(delta({ content: 'Done.' }));
    out += enc.end(undefined, undefined);
    // One thinking block (the text once), then the text; the signature is the gateway's, carrying
    // the whole detail with its format, not Anthropic's raw signature.
    const starts = events(out).filter((e) => e.type === 'content_block_start');
    expect(starts.map((e) => e.content_block.type)).toEqual(['thinking', 'text']);
    const thinking = events(out)
      .filter((e) => e.type === 'content_block_delta' && e.delta.type === 'thinking_delta')
      .map((e) => e.delta.thinking)
      .join('');
    expect(thinking).toBe('Thinking on.');
    const sigs = signatures(out);
    expect(sigs).toHaveLength(1);
    expect(detailsOfSignature(sigs[0])).toEqual([
      { type: 'reasoning.text', text: 'Thinking on.', signature: 'SIG', format: G, index: 0 },
    ]);
  });

  it('keeps two signatures under one type and index apart (Gemini numbers each chunk’s parts from 0)', () => {
    const enc = new AnthropicStreamEncoder('msg_1', 'm', 'req_1', undefined);
    const sig = (data: string, id: string | null): ReasoningDetail => ({
      type: 'reasoning.encrypted',
      data,
      id,
      format: G,
      index: 0,
    });
    let out = enc.chunk(delta({ reasoning: 'Plan.', reasoning_details: [sig('SIG_A', null)] }));
    out += enc.chunk(
      delta({
        reasoning_details: [sig('SIG_B', 'call_1')],
        tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      }),
    );
    out += enc.end(undefined, undefined);
    expect(signatures(out).map(detailsOfSignature)).toEqual([[sig('SIG_A', null), sig('SIG_B', 'call_1')]]);
  });
});

/** The content blocks a client builds from the events, as the Anthropic SDK accumulates them. */
function blocks(sse: string): Array<Record<string, any>> {
  const out: Array<Record<string, any>> = [];
  for (const e of events(sse)) {
    if (e.type === 'content_block_start') out[e.index] = { ...e.content_block };
    if (e.type !== 'content_block_delta') continue;
    const b = out[e.index]!;
    if (e.delta.type === 'text_delta') b.text += e.delta.text;
    if (e.delta.type === 'thinking_delta') b.thinking += e.delta.thinking;
    if (e.delta.type === 'signature_delta') b.signature = e.delta.signature;
  }
  return out;
}

describe('AnthropicStreamEncoder: a piece after its detail’s signature was written', () => {
  it('rides in a signature of its own, after the text, and goes back joined to its detail', () => {
    const enc = new AnthropicStreamEncoder('msg_1', 'm', 'req_1', undefined);
    let out = enc.chunk(
      delta({
        reasoning: 'Plan',
        reasoning_details: [{ type: 'reasoning.text', text: 'Plan', format: G, index: 0 }],
      }),
    );
    out += enc.chunk(delta({ reasoning_details: [{ type: 'reasoning.text', signature: 'SIG', index: 0 }] }));
    out += enc.chunk(delta({ content: 'Hello ' }));
    // Only the details say it (no `reasoning`), and a text block is open: it waits for its end.
    out += enc.chunk(
      delta({ content: 'world', reasoning_details: [{ type: 'reasoning.text', text: ' on.', index: 0 }] }),
    );
    out += enc.end(undefined, undefined);
    const content = blocks(out);
    expect(content.map((b) => b.type)).toEqual(['thinking', 'text', 'thinking']);
    expect(content[1]!.text).toBe('Hello world');
    expect(signatures(out).map(detailsOfSignature)).toEqual([
      [{ type: 'reasoning.text', text: 'Plan', signature: 'SIG', format: G, index: 0 }],
      [{ type: 'reasoning.text', text: ' on.', format: G, index: 0 }],
    ]);
    expect(assistantTurn(content as never, 'messages.1.content').reasoning_details).toEqual([
      { type: 'reasoning.text', text: 'Plan on.', signature: 'SIG', format: G, index: 0 },
    ]);
  });
});

/**
 * The blocks of a stream as Anthropic runs them, one at a time (start, deltas, stop), checked
 * event by event: every start takes the next index while no block is open, every delta and stop
 * goes to the block open. Returns each block's start and the concatenated partial_json it got.
 */
function sequentialBlocks(sse: string): Array<{ block: Record<string, any>; json: string }> {
  const out: Array<{ block: Record<string, any>; json: string }> = [];
  let open = -1;
  for (const e of events(sse)) {
    if (e.type === 'content_block_start') {
      expect(open, `block ${e.index} starts while ${open} is open`).toBe(-1);
      expect(e.index).toBe(out.length);
      out.push({ block: e.content_block, json: '' });
      open = e.index;
    } else if (e.type === 'content_block_delta') {
      expect(e.index, `a ${e.delta.type} to block ${e.index} while ${open} is open`).toBe(open);
      if (e.delta.type === 'input_json_delta') out[open]!.json += e.delta.partial_json;
    } else if (e.type === 'content_block_stop') {
      expect(e.index).toBe(open);
      open = -1;
    }
  }
  expect(open).toBe(-1);
  return out;
}

const start = (index: number, id: string, name: string, args = '') =>
  delta({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: args } }] });
const args = (index: number, a: string) => delta({ tool_calls: [{ index, function: { arguments: a } }] });
/** The tool_use blocks' ids and concatenated input, and every block's type, in order. */
const summary = (sse: string) => {
  const b = sequentialBlocks(sse);
  return {
    types: b.map((x) => x.block.type),
    tools: b.filter((x) => x.block.type === 'tool_use').map((x) => [x.block.id, x.json]),
  };
};

describe('AnthropicStreamEncoder: blocks one at a time when the upstream interleaves them', () => {
  it('keeps a tool call whose arguments are not whole open, and writes another started meanwhile after it', () => {
    const enc = new AnthropicStreamEncoder('msg_1', 'm', 'req_1', undefined);
    let out = enc.chunk(start(0, 'call_A', 'get_weather'));
    out += enc.chunk(start(1, 'call_B', 'get_time'));
    // Tool A's arguments go on streaming to its block, live.
    const a1 = enc.chunk(args(0, '{"city":'));
    expect(events(a1)).toEqual([
      {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: '{"city":' },
      },
    ]);
    out += a1;
    out += enc.chunk(args(1, '{"tz":'));
    out += enc.chunk(args(0, ' "Paris"'));
    out += enc.chunk(args(1, ' "Europe/Paris"'));
    // A's arguments whole: its block stops, and B's start and arguments so far follow at once.
    const a3 = enc.chunk(args(0, '}'));
    expect(events(a3).map((e) => [e.type, e.index])).toEqual([
      ['content_block_delta', 0],
      ['content_block_stop', 0],
      ['content_block_start', 1],
      ['content_block_delta', 1],
      ['content_block_delta', 1],
    ]);
    out += a3;
    // From then on B streams live.
    const b3 = enc.chunk(args(1, '}'));
    expect(events(b3).map((e) => [e.type, e.index])).toEqual([['content_block_delta', 1]]);
    out += b3;
    out += enc.end(undefined, undefined);
    expect(summary(out)).toEqual({
      types: ['tool_use', 'tool_use'],
      tools: [
        ['call_A', '{"city": "Paris"}'],
        ['call_B', '{"tz": "Europe/Paris"}'],
      ],
    });
  });

  it('writes text that comes between a call’s argument chunks after the call, in one text block', () => {
    const enc = new AnthropicStreamEncoder('msg_1', 'm', 'req_1', undefined);
    let out = enc.chunk(start(0, 'call_A', 'f', '{"q":'));
    out += enc.chunk(delta({ content: 'Let me ' }));
    out += enc.chunk(delta({ content: 'check.', tool_calls: [{ index: 0, function: { arguments: ' 1' } }] }));
    out += enc.chunk(args(0, '}'));
    out += enc.chunk(delta({ content: ' Done.' }));
    out += enc.end(undefined, undefined);
    expect(summary(out)).toEqual({ types: ['tool_use', 'text'], tools: [['call_A', '{"q": 1}']] });
    expect(blocks(out)[1]!.text).toBe('Let me check. Done.');
  });

  it('reads braces and quotes inside strings as text, escaped quotes included', () => {
    const enc = new AnthropicStreamEncoder('msg_1', 'm', 'req_1', undefined);
    let out = enc.chunk(start(0, 'call_A', 'f', '{"q": "a}'));
    out += enc.chunk(start(1, 'call_B', 'f', '{}'));
    out += enc.chunk(args(0, '\\"}{\\\\'));
    out += enc.chunk(args(0, '", "r": [{"s": "]"}]'));
    out += enc.chunk(delta({ content: 'x' }));
    out += enc.chunk(args(0, '}'));
    out += enc.end(undefined, undefined);
    const a = '{"q": "a}\\"}{\\\\", "r": [{"s": "]"}]}';
    expect(JSON.parse(a)).toEqual({ q: 'a}"}{\\', r: [{ s: ']' }] });
    expect(summary(out)).toEqual({
      types: ['tool_use', 'tool_use', 'text'],
      tools: [
        ['call_A', a],
        ['call_B', '{}'],
      ],
    });
  });

  it('holds a call replayed from the queue open in its turn, and what came after it waits again', () => {
    const enc = new AnthropicStreamEncoder('msg_1', 'm', 'req_1', undefined);
    let out = enc.chunk(start(0, 'call_A', 'f'));
    out += enc.chunk(start(1, 'call_B', 'f', '{"b":'));
    out += enc.chunk(delta({ content: 'Hi' }));
    out += enc.chunk(start(2, 'call_C', 'f', '{"c": 3}'));
    out += enc.chunk(args(0, '{"a": 1}'));
    out += enc.chunk(args(1, ' 2}'));
    out += enc.end(undefined, undefined);
    expect(summary(out)).toEqual({
      types: ['tool_use', 'tool_use', 'text', 'tool_use'],
      tools: [
        ['call_A', '{"a": 1}'],
        ['call_B', '{"b": 2}'],
        ['call_C', '{"c": 3}'],
      ],
    });
  });

  it('writes what waits at the end when the call’s arguments never became whole', () => {
    const enc = new AnthropicStreamEncoder('msg_1', 'm', 'req_1', undefined);
    let out = enc.chunk(start(0, 'call_A', 'f', '{"a": [1'));
    out += enc.chunk(start(1, 'call_B', 'f', '{"b": '));
    out += enc.chunk(delta({ reasoning: 'hmm' }));
    out += enc.chunk(args(0, ', 2'));
    out += enc.chunk([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]);
    out += enc.end(undefined, undefined);
    expect(summary(out)).toEqual({
      types: ['tool_use', 'tool_use', 'thinking'],
      tools: [
        ['call_A', '{"a": [1, 2'],
        ['call_B', '{"b": '],
      ],
    });
    expect(events(out).at(-2)).toMatchObject({ type: 'message_delta', delta: { stop_reason: 'tool_use' } });
  });

  it('writes two calls that come one after the other as before, each closed as the next starts', () => {
    const enc = new AnthropicStreamEncoder('msg_1', 'm', 'req_1', undefined);
    let out = enc.chunk(delta({ role: 'assistant', content: 'On it.' }));
    out += enc.chunk(start(0, 'call_A', 'f'));
    out += enc.chunk(args(0, '{"a":'));
    out += enc.chunk(args(0, ' 1}'));
    out += enc.chunk(start(1, 'call_B', 'g', '{}'));
    out += enc.end(undefined, undefined);
    expect(events(out).map((e) => [e.type, e.index ?? null])).toEqual([
      ['message_start', null],
      ['content_block_start', 0],
      ['content_block_delta', 0],
      ['content_block_stop', 0],
      ['content_block_start', 1],
      ['content_block_delta', 1],
      ['content_block_delta', 1],
      ['content_block_stop', 1],
      ['content_block_start', 2],
      ['content_block_delta', 2],
      ['content_block_stop', 2],
      ['message_delta', null],
      ['message_stop', null],
    ]);
  });
});
