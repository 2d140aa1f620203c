import { describe, expect, it } from 'vitest';
import { setHidden } from '../chat/hidden.js';
import { shows, showsToken } from '../chat/shows.js';
import type { ChatDelta, ChatStreamEvent } from '../chat/types.js';

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

describe("showsToken: the client's first token (the log's ttft_ms)", () => {
  const search = { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} };
  const citation = { type: 'url_citation', url_citation: { url: 'https://example.com', title: 'Example' } };

  it('content, shown reasoning, a tool call, a refusal, a finish reason', () => {
    expect(showsToken(delta({ role: 'assistant', content: 'H' }))).toBe(true);
    expect(showsToken(delta({ reasoning: 'hm' }))).toBe(true);
    expect(showsToken(delta({ tool_calls: [{ index: 0, function: { name: 'f', arguments: '' } }] }))).toBe(
      true,
    );
    expect(showsToken(delta({ refusal: 'no' }))).toBe(true);
    expect(showsToken(delta({}, 'stop'))).toBe(true);
    // Citations beside the text they cite: the text is the token.
    expect(showsToken(delta({ content: 'Born 1916.', annotations: [citation] }))).toBe(true);
  });

  it("not a server tool's progress, which commits the stream (shows) but is no token", () => {
    const began = delta(setHidden({}, 'anthropic_event', { type: 'start', index: 0, block: search }));
    const input = delta(
      setHidden({}, 'anthropic_event', { type: 'delta', index: 0, delta: { type: 'input_json_delta' } }),
    );
    const cited = delta({ role: 'assistant', content: '', annotations: [citation] });
    for (const ev of [began, input, cited]) {
      expect(shows(ev)).toBe(true);
      expect(showsToken(ev)).toBe(false);
    }
    expect(showsToken(delta({ role: 'assistant', content: '' }))).toBe(false);
    expect(
      showsToken({ type: 'usage', usage: { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 } }),
    ).toBe(false);
  });
});
