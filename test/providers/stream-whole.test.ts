/**
 * `StreamDecoder.whole()`: the answer is whole (what `endOnCut` ends cleanly) once every choice's
 * finish came, before the terminator; never after a failure. `openEvents` gives a whole answer
 * only `finish_grace_ms` more to end before it ends it itself (docs/routing.md).
 */
import { describe, expect, it } from 'vitest';
import { AnthropicStreamDecoder } from '../../src/providers/anthropic/anthropic-stream.js';
import { GeminiStreamDecoder } from '../../src/providers/gemini/gemini-stream.js';
import { OpenAiStreamDecoder } from '../../src/providers/openai-compatible/openai-response.js';
import type { StreamDecoder } from '../../src/providers/types.js';

const data = (o: object) => `data: ${JSON.stringify(o)}\n\n`;
const anEvent = (type: string, o: object = {}) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`;

const cases: Array<[string, () => StreamDecoder, string, string, string]> = [
  [
    'OpenAI-compatible',
    () => new OpenAiStreamDecoder(),
    data({ choices: [{ index: 0, delta: { content: 'a' }, finish_reason: null }] }),
    data({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
    data({ error: { message: 'boom', type: 'server_error' } }),
  ],
  [
    'Anthropic',
    () => new AnthropicStreamDecoder(),
    anEvent('message_start', {
      message: { id: 'm', role: 'assistant', content: [], usage: { input_tokens: 3, output_tokens: 1 } },
    }) +
      anEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) +
      anEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'a' } }),
    anEvent('content_block_stop', { index: 0 }) +
      anEvent('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } }),
    anEvent('error', { error: { type: 'overloaded_error', message: 'busy' } }),
  ],
  [
    'Gemini',
    () => new GeminiStreamDecoder(),
    data({ candidates: [{ content: { parts: [{ text: 'a' }], role: 'model' }, index: 0 }] }),
    data({
      candidates: [{ content: { parts: [{ text: 'b' }], role: 'model' }, index: 0, finishReason: 'STOP' }],
    }),
    data({ error: { code: 500, message: 'boom', status: 'INTERNAL' } }),
  ],
];

describe.each(cases)('%s decoder', (_name, make, content, finish, error) => {
  it('is whole once its finish came, and endOnCut then ends it cleanly', () => {
    const d = make();
    d.push(content);
    expect(d.whole?.()).toBe(false);
    d.push(finish);
    expect(d.whole?.()).toBe(true);
    expect(d.whole?.()).toBe(true); // asking changes nothing
    expect(d.endOnCut?.()).toBeDefined();
  });

  it('is not whole after a failure', () => {
    const d = make();
    d.push(content);
    d.push(error);
    expect(d.whole?.()).toBe(false);
    expect(d.endOnCut?.()).toBeUndefined();
  });
});
