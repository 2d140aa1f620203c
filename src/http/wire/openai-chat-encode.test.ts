import { describe, expect, it } from 'vitest';
import type { ChatResult } from '../../gateway/chat/types.js';
import { GatewayError } from '../../gateway/errors.js';
import { type Envelope, encodeCompletion, errorEvent, streamHead } from './openai-chat-encode.js';

const env = { id: 'gen-1-abc', created: 1_700_000_000, model: 'org/"odd" model', provider: 'up\nstream' };

describe('encodeCompletion', () => {
  it('a strict-shaped choice goes out as is, with every upstream field and the envelope escaped', () => {
    const result = {
      system_fingerprint: 'fp_1',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'hi "there"', refusal: null, annotations: [] },
          logprobs: null,
          finish_reason: 'stop',
          native_finish_reason: 'stop',
        },
      ],
    } as unknown as ChatResult;
    const text = encodeCompletion(env, result, { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
    expect(JSON.parse(text)).toEqual({
      id: 'gen-1-abc',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'org/"odd" model',
      provider: 'up\nstream',
      system_fingerprint: 'fp_1',
      choices: result.choices,
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
    });
    // The same envelope a second time comes from the cache and must not differ.
    expect(encodeCompletion(env, result, undefined)).toBe(text.replace(/,"usage":.*\}$/, '}'));
  });

  it('other choices are cleaned: content null, null arrays dropped, index and finish reasons set', () => {
    const result = {
      choices: [
        { message: { role: 'assistant', tool_calls: null, reasoning_details: null } },
        { index: 1, message: { role: 'assistant', content: 'x' }, finish_reason: 'length' },
      ],
    } as unknown as ChatResult;
    const out = JSON.parse(encodeCompletion(env, result, undefined));
    expect(out.system_fingerprint).toBeNull();
    expect(out).not.toHaveProperty('usage');
    expect(out.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: null },
        finish_reason: null,
        native_finish_reason: null,
      },
      {
        index: 1,
        message: { role: 'assistant', content: 'x' },
        finish_reason: 'length',
        native_finish_reason: null,
      },
    ]);
  });
});

describe('errorEvent', () => {
  const failure = new GatewayError(503, 'upstream a/m is unavailable (circuit open)');
  const parsed = (e: Envelope) => JSON.parse(errorEvent(streamHead(e), failure).slice('data: '.length));

  it('names the upstream of the envelope', () => {
    expect(parsed(env)).toMatchObject({ provider: 'up\nstream', error: { code: 503 } });
  });

  it('leaves provider out when no upstream was tried, rather than an empty name', () => {
    const chunk = parsed({ ...env, provider: undefined });
    expect(chunk).not.toHaveProperty('provider');
    expect(chunk).toMatchObject({
      model: 'org/"odd" model',
      error: { code: 503 },
      choices: [{ finish_reason: 'error' }],
    });
  });
});
