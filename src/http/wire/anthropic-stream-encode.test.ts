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
