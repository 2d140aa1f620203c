import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../gateway/chat/types.js';
import { toGeminiContents } from './gemini-contents.js';

describe('toGeminiContents: tool results with images', () => {
  it('keeps the function responses at the head of the turn and the media after them', () => {
    const png = { type: 'image_url' as const, image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } };
    const messages: ChatMessage[] = [
      { role: 'user', content: 'look' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'shot', arguments: '{}' } },
          { id: 'c2', type: 'function', function: { name: 'ls', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: '{"ok":true}' }, png] },
      { role: 'tool', tool_call_id: 'c2', content: 'a b' },
    ];
    const { contents } = toGeminiContents(messages);
    expect(contents).toHaveLength(3);
    expect(contents[2]).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { id: 'c1', name: 'shot', response: { ok: true } } },
        { functionResponse: { id: 'c2', name: 'ls', response: { result: 'a b' } } },
        { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
      ],
    });
  });
});
