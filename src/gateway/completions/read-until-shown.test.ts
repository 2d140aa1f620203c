import { describe, expect, it } from 'vitest';
import { setHidden } from '../chat/hidden.js';
import type { ChatDelta, ChatStreamEvent } from '../chat/types.js';
import { shows } from './read-until-shown.js';

const delta = (d: ChatDelta, finish: string | null = null): ChatStreamEvent => ({
  type: 'delta',
  choices: [{ index: 0, delta: d, finish_reason: finish }],
});

describe('shows: what commits a stream to its upstream', () => {
  it('not a role, empty fields, usage alone', () => {
    expect(shows(delta({ role: 'assistant', content: '' }))).toBe(false);
    expect(shows(delta({ role: 'assistant', content: null, refusal: null, tool_calls: [] }))).toBe(false);
    expect(shows(delta({ reasoning: '', reasoning_details: [], extra: {} }))).toBe(false);
    expect(shows({ type: 'usage', usage: { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 } })).toBe(
      false,
    );
  });

  it('content, reasoning, a tool call, a refusal, anything else not empty, a finish reason', () => {
    expect(shows(delta({ role: 'assistant', content: 'H' }))).toBe(true);
    expect(shows(delta({ reasoning: 'hm' }))).toBe(true);
    expect(shows(delta({ tool_calls: [{ index: 0, function: { name: 'f', arguments: '' } }] }))).toBe(true);
    expect(shows(delta({ refusal: 'no' }))).toBe(true);
    expect(shows(delta({ audio: { id: 'a', transcript: 'hi' } }))).toBe(true);
    expect(shows(delta({}, 'stop'))).toBe(true);
  });

  it("an Anthropic server tool's block, which rides hidden on an otherwise empty delta", () => {
    const block = { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} };
    expect(shows(delta(setHidden({}, 'anthropic_event', { type: 'start', index: 0, block })))).toBe(true);
  });
});
