import { describe, expect, it } from 'vitest';
import { applyMiddleOut, TRUNCATION_MARKER } from './middle-out.js';
import { countMessageTokens } from './tokens.js';
import type { ChatMessage } from './types.js';

const turn = (i: number, words = 50): ChatMessage => ({
  role: i % 2 === 0 ? 'user' : 'assistant',
  content: `turn ${i} ` + 'lorem ipsum '.repeat(words),
});
const total = (ms: ChatMessage[]) => ms.reduce((n, m) => n + countMessageTokens(m), 0);

describe('middle-out', () => {
  const system: ChatMessage = { role: 'system', content: 'You are a helpful assistant.' };
  const convo = [system, ...Array.from({ length: 20 }, (_, i) => turn(i))];

  it('leaves a prompt that fits alone', () => {
    const r = applyMiddleOut(convo, { contextLength: 100_000 });
    expect(r.messages).toEqual(convo);
    expect(r.removed).toBe(0);
    expect(r.fits).toBe(true);
  });

  it('removes from the middle, keeping the system prompt, the first and the last turns', () => {
    const budget = Math.floor(total(convo) / 2);
    const r = applyMiddleOut(convo, { contextLength: budget + 500, reserveTokens: 500 });
    expect(r.fits).toBe(true);
    expect(r.promptTokens).toBeLessThanOrEqual(budget);
    expect(r.messages[0]).toBe(system);
    expect(r.messages[1]).toBe(convo[1]);
    expect(r.messages.at(-1)).toBe(convo.at(-1));
    expect(r.removed).toBe(convo.length - r.messages.length);
    // What is left is a prefix and a suffix of the conversation: the hole is in the middle.
    const kept = r.messages.map((m) => convo.indexOf(m));
    const gaps = kept.slice(1).filter((k, i) => k !== kept[i] + 1);
    expect(gaps).toHaveLength(1);
    // Removed from the middle: both sides keep a similar number of turns.
    const holeStart = kept.findIndex((k, i) => i > 0 && k !== kept[i - 1] + 1);
    const tail = kept.length - holeStart;
    expect(Math.abs(holeStart - 1 - tail)).toBeLessThanOrEqual(1);
  });

  it('keeps a tool call and its results together', () => {
    const msgs: ChatMessage[] = [
      turn(0),
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'x '.repeat(400) },
      turn(3),
      turn(4),
      turn(5),
    ];
    const r = applyMiddleOut(msgs, { contextLength: total(msgs) - 100 });
    const hasCall = r.messages.some((m) => m.tool_calls);
    const hasResult = r.messages.some((m) => m.role === 'tool');
    expect(hasCall).toBe(hasResult);
  });

  it('applies a message-count limit by keeping both ends', () => {
    const r = applyMiddleOut(convo, { contextLength: 1_000_000, maxMessages: 7 });
    expect(r.messages).toHaveLength(7);
    expect(r.messages[0]).toBe(system);
    expect(r.messages[1]).toBe(convo[1]);
    expect(r.messages.at(-1)).toBe(convo.at(-1));
  });

  it('truncates the middle of a long text when dropping turns is not enough', () => {
    const long: ChatMessage = { role: 'user', content: `START ${'filler text '.repeat(2000)} END` };
    const r = applyMiddleOut([system, long], { contextLength: 600 });
    expect(r.fits).toBe(true);
    expect(r.truncated).toBe(1);
    const text = r.messages[1].content as string;
    expect(text.startsWith('START')).toBe(true);
    expect(text.endsWith('END')).toBe(true);
    expect(text).toContain(TRUNCATION_MARKER);
    expect(long.content).not.toContain(TRUNCATION_MARKER);
  });

  it('reports when even the kept messages cannot fit', () => {
    const r = applyMiddleOut([{ role: 'system', content: 'word '.repeat(500) }, turn(0, 1)], {
      contextLength: 50,
    });
    expect(r.fits).toBe(false);
  });
});
