import { describe, expect, it } from 'vitest';
import { metered, seeded, text } from '../../../test/helpers/texts.js';
import {
  countMessageTokens,
  countPromptTokens,
  countTextTokens,
  estimateUsage,
  IMAGE_TOKENS,
  SAMPLE_WINDOW,
  sampledTokens,
  TOKENIZE_BUDGET_CHARS,
} from './tokens.js';

const off = (estimate: number, exact: number) => Math.abs(estimate - exact) / exact;
const exactSum = (texts: string[]) => texts.reduce((n, t) => n + countTextTokens(t), 0);

describe('token counting (o200k)', () => {
  it('counts text with the real tokenizer', () => {
    expect(countTextTokens('')).toBe(0);
    expect(countTextTokens('hello world')).toBe(2);
    // Special-token text from a user is counted, not rejected.
    expect(countTextTokens('<|endoftext|>')).toBeGreaterThan(0);
  });

  it('adds message framing, names, tool calls and images', () => {
    const plain = countMessageTokens({ role: 'user', content: 'hello world' });
    expect(plain).toBe(3 + countTextTokens('user') + 2);
    expect(countMessageTokens({ role: 'user', content: 'hello world', name: 'bob' })).toBe(
      plain + 1 + countTextTokens('bob'),
    );
    const withImage = countMessageTokens({
      role: 'user',
      content: [
        { type: 'text', text: 'hello world' },
        { type: 'image_url', image_url: { url: 'https://x/y.png' } },
      ],
    });
    expect(withImage).toBe(plain + IMAGE_TOKENS);
    // A refusal part (an assistant turn replayed) is text, counted as such.
    const refusal = "I can't help with that, it would take far too many words to explain why.";
    expect(
      countMessageTokens({ role: 'assistant', content: [{ type: 'refusal', refusal }] }) -
        countMessageTokens({ role: 'assistant', content: '' }),
    ).toBe(countTextTokens(refusal));
    // So is a message-level refusal (OpenAI's `content: null, refusal: "..."`).
    expect(
      countMessageTokens({ role: 'assistant', content: null, refusal }) -
        countMessageTokens({ role: 'assistant', content: null }),
    ).toBe(countTextTokens(refusal));
    const call = countMessageTokens({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'c', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      ],
    });
    expect(call).toBe(
      3 + countTextTokens('assistant') + countTextTokens('get_weather') + countTextTokens('{"city":"Paris"}'),
    );
  });

  it('counts a request prompt with tools and reply priming, and estimates usage', () => {
    const messages = [
      { role: 'system' as const, content: 'Be brief.' },
      { role: 'user' as const, content: 'hello world' },
    ];
    const bare = countPromptTokens({ messages });
    expect(bare).toBe(3 + countMessageTokens(messages[0]) + countMessageTokens(messages[1]));
    const tools = [{ type: 'function' as const, function: { name: 'f', parameters: { type: 'object' } } }];
    expect(countPromptTokens({ messages, tools })).toBe(bare + countTextTokens(JSON.stringify(tools)));
    expect(estimateUsage({ messages }, 'hello world')).toEqual({
      prompt_tokens: bare,
      completion_tokens: 2,
      total_tokens: bare + 2,
    });
  });
});

describe('promptTokenBound', () => {
  it('is never below the tokenizer count (ASCII, accents, CJK, emoji, tools)', async () => {
    const { countPromptTokens, promptTokenBound } = await import('./tokens.js');
    const reqs = [
      { messages: [{ role: 'user' as const, content: 'Hello, how are you today?' }] },
      { messages: [{ role: 'system' as const, content: 'Réponds en français, s’il te plaît.' }] },
      { messages: [{ role: 'user' as const, content: '東京の天気はどうですか？🌤️ 今日は' }] },
      {
        messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'x'.repeat(5000) }] }],
        tools: [
          { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object' } } },
        ],
      },
    ];
    for (const r of reqs) expect(promptTokenBound(r)).toBeGreaterThanOrEqual(countPromptTokens(r));
  });
});

describe('sampled estimates (sampledTokens)', () => {
  it('counts texts exactly while they fit the budget', () => {
    const m = metered();
    const texts = [text(40_000, false), 'hello world', text(20_000, true)];
    expect(sampledTokens(texts, { exact: m.count })).toBe(exactSum(texts));
    expect(m.chars).toBe(60_011);
  });

  it('samples what is over the budget: close to the exact count, and never more work than the budget', () => {
    // English, then symbols: a sample taken only near the start would read ~0.2 tokens a character.
    const mixed = [text(1_500_000, false), text(1_500_000, true, 2)];
    const big = [text(700_000, true, 3)];
    const many = Array.from({ length: 40 }, (_, i) => text(100_000, i % 2 === 0, 10 + i));
    const tiny = Array.from({ length: 30_000 }, (_, i) => text(100, i % 3 === 0, 100 + i));
    for (const [i, texts] of [mixed, big, many, tiny].entries()) {
      const m = metered();
      const estimate = sampledTokens(texts, { exact: m.count, random: seeded(i + 1) });
      expect(off(estimate, exactSum(texts))).toBeLessThan(0.03);
      expect(m.chars).toBeLessThanOrEqual(TOKENIZE_BUDGET_CHARS);
    }
  });

  it('a sample cannot be steered: cheap text where windows might fall, or first, changes nothing', () => {
    // Cheap runs ("aaaa": ~1 token per 16 characters here) at the start of every stratum and in
    // the middle of it, among random symbols; and cheap texts first, the costly ones after.
    const strata = TOKENIZE_BUDGET_CHARS / SAMPLE_WINDOW;
    const len = 1_000_000;
    const W = SAMPLE_WINDOW;
    const symbols = text(len, true, 4);
    let planted = '';
    for (let s = 0; s < strata; s++) {
      const from = Math.floor((s * len) / strata);
      const to = Math.floor(((s + 1) * len) / strata);
      const mid = Math.floor((from + to) / 2);
      planted += 'a'.repeat(W) + symbols.slice(from + W, mid) + 'a'.repeat(W) + symbols.slice(mid + W, to);
    }
    const first = [...Array.from({ length: 4 }, () => 'a'.repeat(40_000)), text(2_000_000, true, 5)];
    for (const [i, texts] of [[planted], first].entries()) {
      const exact = exactSum(texts);
      for (let seed = 1; seed <= 5; seed++)
        expect(off(sampledTokens(texts, { random: seeded(seed * 7 + i) }), exact)).toBeLessThan(0.1);
    }
  });

  it('estimates the usage of a huge prompt within the budget, the completion exactly', () => {
    const m = metered();
    const messages = [
      { role: 'system' as const, content: text(3_000, false) },
      { role: 'user' as const, content: text(2_000_000, true, 6) },
    ];
    const completion = text(3_000, false, 7);
    const u = estimateUsage({ messages }, completion, { exact: m.count, random: seeded(3) });
    expect(u.completion_tokens).toBe(countTextTokens(completion));
    expect(off(u.prompt_tokens, countPromptTokens({ messages }))).toBeLessThan(0.03);
    expect(m.chars).toBeLessThanOrEqual(2 * TOKENIZE_BUDGET_CHARS);
  });
});
