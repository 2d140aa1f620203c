import { describe, expect, it } from 'vitest';
import {
  countMessageTokens,
  countPromptTokens,
  countTextTokens,
  estimateUsage,
  IMAGE_TOKENS,
} from './tokens.js';

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
});
