import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../gateway/errors.js';
import { responsesEcho } from './responses-encode.js';
import { ReasoningDetailsMerger, unwrapReasoning, wrapReasoning } from './responses-reasoning.js';
import { ResponsesStreamEncoder } from './responses-stream.js';

const events = (text: string) =>
  text
    .split('\n\n')
    .filter(Boolean)
    .map((b) => JSON.parse(b.split('\n')[1]!.slice('data: '.length)));

describe('ResponsesStreamEncoder', () => {
  it('ends a stream no upstream answered with response.created then response.failed', () => {
    const enc = new ResponsesStreamEncoder({
      id: 'resp_x1',
      createdAt: 1,
      model: 'm',
      echo: responsesEcho({ input: 'hi' }),
    });
    const out = events(enc.end(undefined, new GatewayError(503, 'no upstream can serve m')));
    expect(out.map((e) => [e.type, e.sequence_number])).toEqual([
      ['response.created', 0],
      ['response.in_progress', 1],
      ['response.failed', 2],
    ]);
    expect(out[2].response).toMatchObject({
      status: 'failed',
      error: { code: 'server_error', message: 'no upstream can serve m' },
      output: [],
    });
  });
});

describe('reasoning details in encrypted_content', () => {
  it('merges streamed pieces by type and index and round-trips them', () => {
    const m = new ReasoningDetailsMerger();
    m.add([{ type: 'reasoning.text', text: 'a', index: 0, format: 'anthropic-claude-v1' }]);
    m.add([{ type: 'reasoning.text', text: 'b', index: 0 }]);
    m.add([{ type: 'reasoning.text', signature: 'sig', index: 0 }]);
    m.add([{ type: 'reasoning.encrypted', data: 'xyz', index: 1 }]);
    const details = m.details;
    expect(details).toEqual([
      { type: 'reasoning.text', text: 'ab', signature: 'sig', index: 0, format: 'anthropic-claude-v1' },
      { type: 'reasoning.encrypted', data: 'xyz', index: 1 },
    ]);
    expect(unwrapReasoning(wrapReasoning(details))).toEqual(details);
  });

  it('drops an encrypted_content it did not write', () => {
    expect(unwrapReasoning('gAAAAABo-openai-blob')).toBeUndefined();
    expect(unwrapReasoning('mgr1.not-json')).toBeUndefined();
  });
});
