import { describe, expect, it } from 'vitest';
import type { ChatStreamEvent } from '../../gateway/chat/types.js';
import { UpstreamError } from '../../gateway/errors.js';
import { OpenAiStreamDecoder, parseOpenAiResponse } from './openai-response.js';

const decode = (...pieces: string[]): ChatStreamEvent[] => {
  const d = new OpenAiStreamDecoder();
  return [...pieces.flatMap((p) => d.push(p)), ...d.end()];
};
const data = (v: unknown) => `data: ${typeof v === 'string' ? v : JSON.stringify(v)}\n\n`;
const kindOf = (ev: ChatStreamEvent | undefined) => (ev?.type === 'error' ? ev.error.kind : ev?.type);

describe('OpenAI-format answers without choices are bad responses', () => {
  it('a stream of only [DONE], or of chunks without choices, ends with a bad_response error', () => {
    expect(decode(data('[DONE]')).map(kindOf)).toEqual(['bad_response']);
    const usage = { prompt_tokens: 3, completion_tokens: 0, total_tokens: 3 };
    expect(decode(data({ choices: [] }), data({ choices: [], usage }), data('[DONE]')).map(kindOf)).toEqual([
      'usage',
      'bad_response',
    ]);
  });

  it('a stream with a choice ends normally at [DONE]', () => {
    const evs = decode(
      data({ choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: 'stop' }] }),
      data('[DONE]'),
    );
    expect(evs.map(kindOf)).toEqual(['delta']);
  });

  it('a body with choices: [] is a bad_response; with an error object beside it, that error', () => {
    const empty = () => parseOpenAiResponse(200, JSON.stringify({ id: 'x', choices: [] }), {});
    expect(empty).toThrow(UpstreamError);
    expect(empty).toThrow(expect.objectContaining({ kind: 'bad_response', upstreamStatus: 200 }));
    const withError = JSON.stringify({ choices: [], error: { code: 429, message: 'slow down' } });
    expect(() => parseOpenAiResponse(200, withError, {})).toThrow(
      expect.objectContaining({ kind: 'rate_limited' }),
    );
  });
});
