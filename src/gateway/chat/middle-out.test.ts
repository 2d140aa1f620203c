import { describe, expect, it } from 'vitest';
import { metered, seeded, text } from '../../../test/helpers/texts.js';
import { applyMiddleOut, TRUNCATION_MARKER } from './middle-out.js';
import { countMessageTokens, measureMessages, TOKENIZE_BUDGET_CHARS } from './tokens.js';
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

  describe('a prompt of megabytes (counts sampled, work bounded)', () => {
    /** At most the first measurement and MAX_MEASURES more, each within the budget. */
    const maxWork = 5 * (TOKENIZE_BUDGET_CHARS + 4 * 1024);
    const run = (msgs: ChatMessage[], contextLength: number, seed = 7) => {
      const meter = metered();
      const sample = { exact: meter.count, random: seeded(seed) };
      const r = applyMiddleOut(msgs, { contextLength, sample });
      return { r, work: meter.chars, exact: total(r.messages) };
    };
    const lastOf = (s: string) => s.slice(-40);

    it('drops turns from the middle of 300 long turns until what is kept fits, counted exactly', () => {
      const msgs: ChatMessage[] = [
        system,
        ...Array.from({ length: 300 }, (_, i) => ({
          role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
          content: text(10_000, i % 3 === 0, i + 1),
        })),
      ];
      const longest = Math.max(...msgs.map((m) => countMessageTokens(m)));
      for (const contextLength of [20_000, 60_000]) {
        const { r, work, exact } = run(msgs, contextLength);
        expect(r.fits).toBe(true);
        expect(r.truncated).toBe(0);
        expect(exact).toBeLessThanOrEqual(contextLength);
        // Estimates may remove one turn more than exact counts would, not more.
        const counted = applyMiddleOut(msgs, { contextLength, sample: { budget: Infinity } });
        expect(exact).toBeGreaterThanOrEqual(total(counted.messages) - longest);
        expect(r.messages[0]).toBe(system);
        expect(r.messages[1]).toBe(msgs[1]);
        expect(r.messages.at(-1)).toBe(msgs.at(-1));
        expect(work).toBeLessThanOrEqual(maxWork);
      }
    });

    it('cuts one text of 3 MB in its middle to fit, keeping both ends', () => {
      for (const symbols of [false, true]) {
        const body = `START ${text(3_000_000, symbols, 3)} END`;
        const long: ChatMessage = { role: 'user', content: body };
        // A 20 K window keeps under the budget (measured exactly at the end); a 200 K one keeps
        // more than the budget's characters, so its fit is a sampled measurement with a margin.
        for (const contextLength of [20_000, 200_000]) {
          const { r, work, exact } = run([system, long], contextLength);
          expect(r.fits).toBe(true);
          expect(r.truncated).toBe(1);
          expect(exact).toBeLessThanOrEqual(contextLength);
          expect(exact).toBeGreaterThan(contextLength * 0.9);
          const kept = r.messages[1]!.content as string;
          expect(kept.startsWith('START ')).toBe(true);
          expect(kept.endsWith(`${lastOf(body)}`)).toBe(true);
          expect(kept).toContain(TRUNCATION_MARKER);
          expect(work).toBeLessThanOrEqual(maxWork);
        }
      }
    });

    it('removes from fifty thousand short messages, keeping both ends', () => {
      // At this scale the quadratic removal this replaced (each removal scanning the turns left) took
      // 25 s; this takes milliseconds. The result must still fit and keep both ends.
      const msgs = Array.from({ length: 50_000 }, (_, i) => turn(i, 2));
      const { r, work, exact } = run(msgs, 4_000);
      expect(r.fits).toBe(true);
      expect(exact).toBeLessThanOrEqual(4_000);
      expect(r.messages[0]).toBe(msgs[0]);
      expect(r.messages.at(-1)).toBe(msgs.at(-1));
      expect(work).toBeLessThanOrEqual(maxWork);
    });

    it('never splits a surrogate pair where it cuts, token-exact or in proportion', () => {
      const emoji = '\u{1F600}\u{1F680}x'.repeat(200_000);
      // Small contexts cut token-exact; large ones keep more than a token-exact side may
      // encode, and cut at characters in proportion.
      for (const contextLength of [5_001, 5_002, 5_003, 150_001, 150_002, 150_003]) {
        const r = applyMiddleOut([{ role: 'user', content: emoji }], { contextLength });
        const kept = r.messages[0]!.content as string;
        expect(r.fits).toBe(true);
        expect(Buffer.from(kept, 'utf8').toString('utf8')).toBe(kept);
      }
    });

    it('measures each message near its exact count, and sums closer still', () => {
      const msgs = Array.from({ length: 60 }, (_, i) => turn(i, 0)).map((m, i) => ({
        ...m,
        content: text(i % 7 === 0 ? 200_000 : 5_000, i % 2 === 0, i + 11),
      }));
      const m = measureMessages(msgs, { random: seeded(5) });
      expect(m.exact).toBe(false);
      const exact = msgs.map((x) => countMessageTokens(x));
      const off = (a: number, b: number) => Math.abs(a - b) / b;
      expect(
        off(
          m.tokens.reduce((a, b) => a + b, 0),
          total(msgs),
        ),
      ).toBeLessThan(0.03);
      // The long ones draw many windows of their own.
      msgs.forEach((_, i) => {
        if (i % 7 === 0) expect(off(m.tokens[i]!, exact[i]!)).toBeLessThan(0.1);
      });
    });

    /** CJK text: ~1 token a character, where the helper's words are ~0.2. */
    const cjk = (n: number, seed: number) => {
      const r = seeded(seed);
      let out = '';
      for (let i = 0; i < n; i++) out += String.fromCharCode(0x4e00 + Math.floor(r() * 20_000));
      return out;
    };

    it('a long cheap message beside short dense turns: what it says fits does (estimates in groups)', () => {
      // The short turns draw few windows of their own; at the long message's rate they read a
      // fifth of their tokens and the prompt "fitted" at several times the context.
      for (const [long, short] of [
        [' '.repeat(600_000), (i: number) => cjk(2_000, i)],
        [text(600_000, false, 3), (i: number) => text(2_500, true, i)],
      ] as const) {
        const msgs: ChatMessage[] = [system, { role: 'user', content: long }];
        for (let i = 0; i < 100; i++)
          msgs.push({ role: i % 2 ? 'user' : 'assistant', content: short(i + 10) });
        const contextLength = Math.floor(total(msgs) * 0.7);
        for (const seed of [1, 2]) {
          const { r, exact } = run(msgs, contextLength, seed);
          expect(r.fits).toBe(true);
          expect(exact).toBeLessThanOrEqual(contextLength * 1.01);
          expect(exact).toBeGreaterThan(contextLength * 0.9);
        }
      }
    });

    it('after removals by estimate, measures what is kept and removes on by that', () => {
      // Short turns alike in length: dense ones at both ends, cheap ones between. All are
      // estimated at their group's rate, so the kept ends read a third of their tokens; only
      // a measurement of what is kept shows it.
      const msgs: ChatMessage[] = [system];
      for (let i = 0; i < 240; i++) {
        const dense = i < 20 || i >= 220;
        msgs.push({
          role: i % 2 ? 'assistant' : 'user',
          content: dense ? cjk(2_000, i + 1) : text(2_000, false, i + 1),
        });
      }
      const contextLength = 40_000;
      const { r, exact } = run(msgs, contextLength);
      expect(r.fits).toBe(true);
      expect(r.truncated).toBe(0);
      expect(exact).toBeLessThanOrEqual(contextLength);
      expect(exact).toBeGreaterThan(contextLength - 2_500);
      expect(r.messages[1]).toBe(msgs[1]);
      expect(r.messages.at(-1)).toBe(msgs.at(-1));
    });

    it('cuts a text denser at its ends than in its middle to fit, token-exact while small', () => {
      const side = (seed: number) => [cjk(1_000, seed), text(3_000, true, seed), text(10_000, false, seed)];
      const body = side(1).join('') + ' '.repeat(256_000) + side(2).reverse().join('');
      const msgs: ChatMessage[] = [system, { role: 'user', content: body }];
      for (const contextLength of [3_000, 5_000, 8_000]) {
        for (const sample of [{ random: seeded(3) }, { budget: Infinity }]) {
          const r = applyMiddleOut(msgs, { contextLength, sample });
          expect(r.fits).toBe(true);
          expect(total(r.messages)).toBeLessThanOrEqual(contextLength);
          expect(total(r.messages)).toBeGreaterThan(contextLength * 0.95);
        }
      }
    });

    it('cuts content of many short text parts as one text, with one marker, images in place', () => {
      const image = { type: 'image_url' as const, image_url: { url: 'https://example.com/a.png' } };
      const content = Array.from({ length: 2_000 }, (_, i) =>
        i === 1_500 ? image : { type: 'text' as const, text: text(20, false, i + 1) },
      );
      const msgs: ChatMessage[] = [system, { role: 'user', content }];
      const contextLength = Math.floor(total(msgs) / 2);
      const r = applyMiddleOut(msgs, { contextLength });
      expect(r.fits).toBe(true);
      expect(total(r.messages)).toBeLessThanOrEqual(contextLength);
      expect(total(r.messages)).toBeGreaterThan(contextLength * 0.95);
      const parts = r.messages[1]!.content as typeof content;
      expect(parts.filter((p) => p.type === 'text' && p.text.includes(TRUNCATION_MARKER))).toHaveLength(1);
      expect(parts[0]).toEqual(content[0]);
      expect(parts.at(-1)).toEqual(content.at(-1));
      expect(parts).toContainEqual(image);
    });

    it('removes a tool call and its results together from the middle', () => {
      const call: ChatMessage = {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      };
      const result: ChatMessage = { role: 'tool', tool_call_id: 'c1', content: 'x '.repeat(400) };
      const msgs = [turn(0), turn(1), turn(2), call, result, turn(5), turn(6), turn(7)];
      const r = applyMiddleOut(msgs, { contextLength: total(msgs) - 100 });
      expect(r.removed).toBe(2);
      expect(r.messages).not.toContain(call);
      expect(r.messages).not.toContain(result);
    });
  });
});
