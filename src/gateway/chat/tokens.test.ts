import { describe, expect, it } from 'vitest';
import {
  boundedCounter,
  countMessageTokens,
  countPromptTokens,
  countTextTokens,
  estimateUsage,
  IMAGE_TOKENS,
  TOKENIZE_BUDGET_CHARS,
} from './tokens.js';

/** An exact counter that records how many characters it was given. */
function metered() {
  const m = {
    chars: 0,
    count: (t: string) => {
      m.chars += t.length;
      return countTextTokens(t);
    },
  };
  return m;
}

/** Deterministic text: English-like words, or (`symbols`) a mix that costs ~1 token per 1.4 chars. */
function text(chars: number, symbols = false): string {
  const words = ['gateway', 'token', 'the', 'upstream', 'counts', 'a', 'model', 'request', 'of', 'billing'];
  let s = '';
  let seed = 7;
  while (s.length < chars) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    s += symbols
      ? String.fromCharCode(33 + (seed % 90))
      : `${words[seed % words.length]}${seed % 11 === 0 ? '.\n' : ' '}`;
  }
  return s.slice(0, chars);
}

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

  it('a bounded counter is exact within its budget', () => {
    const m = metered();
    const count = boundedCounter(TOKENIZE_BUDGET_CHARS, m.count);
    const t = text(50_000);
    expect(count(t)).toBe(countTextTokens(t));
    expect(count('hello world')).toBe(2);
    expect(m.chars).toBe(50_000 + 11);
  });

  it('a bounded counter samples what does not fit its budget: close, and never more work than the budget', () => {
    for (const symbols of [false, true]) {
      const big = text(3_000_000, symbols);
      const exact = countTextTokens(big);
      const m = metered();
      const estimate = boundedCounter(TOKENIZE_BUDGET_CHARS, m.count)(big);
      expect(Math.abs(estimate - exact) / exact).toBeLessThan(0.03);
      expect(m.chars).toBeLessThanOrEqual(TOKENIZE_BUDGET_CHARS);
    }
    // Many small texts past the budget: scaled at the ratio seen, without tokenizing them.
    const m = metered();
    const count = boundedCounter(TOKENIZE_BUDGET_CHARS, m.count);
    const small = text(100);
    let total = 0;
    for (let i = 0; i < 20_000; i++) total += count(small);
    const exact = countTextTokens(small) * 20_000;
    expect(Math.abs(total - exact) / exact).toBeLessThan(0.03);
    expect(m.chars).toBeLessThanOrEqual(TOKENIZE_BUDGET_CHARS);
  });

  it('estimates the usage of a huge prompt within the budget, the completion exactly', () => {
    const m = metered();
    const prompt = text(2_000_000, true);
    const completion = text(3_000);
    const u = estimateUsage(
      { messages: [{ role: 'user', content: prompt }] },
      completion,
      boundedCounter(undefined, m.count),
    );
    expect(u.completion_tokens).toBe(countTextTokens(completion));
    const exact = countPromptTokens({ messages: [{ role: 'user', content: prompt }] });
    expect(Math.abs(u.prompt_tokens - exact) / exact).toBeLessThan(0.03);
    expect(m.chars).toBeLessThanOrEqual(TOKENIZE_BUDGET_CHARS);
  });
});
