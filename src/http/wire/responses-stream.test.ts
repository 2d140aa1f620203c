import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../gateway/errors.js';
import { encodeResponse, responsesEcho } from './responses-encode.js';
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

describe('an upstream that ends its answer with finish reason error', () => {
  const head = { id: 'resp_x3', createdAt: 1, model: 'm', echo: responsesEcho({ input: 'hi' }) };
  it('streamed: response.failed with a server_error, the partial message incomplete', () => {
    const enc = new ResponsesStreamEncoder(head);
    let out = enc.chunk([
      { index: 0, delta: { role: 'assistant', content: 'Partial' }, finish_reason: null },
    ]);
    out += enc.chunk([{ index: 0, delta: {}, finish_reason: 'error' }]);
    out += enc.end(undefined, undefined);
    const last = events(out).at(-1);
    expect(last.type).toBe('response.failed');
    expect(last.response).toMatchObject({ status: 'failed', error: { code: 'server_error' } });
    expect(last.response.output[0]).toMatchObject({ type: 'message', status: 'incomplete' });
  });

  it('not streamed: status failed with the error, no completed_at', () => {
    const r = JSON.parse(
      encodeResponse(
        head,
        {
          choices: [{ index: 0, message: { role: 'assistant', content: 'Partial' }, finish_reason: 'error' }],
        } as never,
        undefined,
      ),
    );
    expect(r).toMatchObject({ status: 'failed', error: { code: 'server_error' } });
    expect(r.completed_at).toBeUndefined();
    expect(r.output[0]).toMatchObject({ type: 'message', status: 'incomplete' });
  });
});

describe('ResponsesStreamEncoder reasoning details', () => {
  const encoder = () =>
    new ResponsesStreamEncoder({
      id: 'resp_x2',
      createdAt: 1,
      model: 'm',
      echo: responsesEcho({ input: 'hi', include: ['reasoning.encrypted_content'] }),
    });
  const delta = (d: Record<string, unknown>) => [{ index: 0, delta: d, finish_reason: null }];
  const encrypted = (item: any) => unwrapReasoning(item.encrypted_content);

  it('keeps a message whole when a signature arrives with its last text (Gemini)', () => {
    const enc = encoder();
    let out = enc.chunk(
      delta({ reasoning: 'hmm', reasoning_details: [{ type: 'reasoning.text', text: 'hmm', index: 0 }] }),
    );
    out += enc.chunk(delta({ content: 'Hello ' }));
    out += enc.chunk(
      delta({
        content: 'world',
        reasoning_details: [{ type: 'reasoning.encrypted', data: 'SIG', index: 0 }],
      }),
    );
    out += enc.end(undefined, undefined);
    const evs = events(out);
    const { output } = evs.at(-1).response;
    expect(output.map((o: any) => o.type)).toEqual(['reasoning', 'message', 'reasoning']);
    expect(output[1].content[0].text).toBe('Hello world');
    expect(encrypted(output[0])).toEqual([{ type: 'reasoning.text', text: 'hmm', index: 0 }]);
    expect(encrypted(output[2])).toEqual([{ type: 'reasoning.encrypted', data: 'SIG', index: 0 }]);
    // Every item is added once and done once, at its own index.
    const added = evs.filter((e) => e.type === 'response.output_item.added').map((e) => e.output_index);
    const done = evs.filter((e) => e.type === 'response.output_item.done').map((e) => e.output_index);
    expect(added).toEqual([0, 1, 2]);
    expect(done.sort()).toEqual([0, 1, 2]);
  });

  it('gives a piece in another item than its detail’s first one that detail’s format', () => {
    const enc = encoder();
    const G = 'google-gemini-v1';
    let out = enc.chunk(
      delta({
        reasoning: 'a',
        reasoning_details: [{ type: 'reasoning.text', text: 'a', format: G, index: 0 }],
      }),
    );
    out += enc.chunk(delta({ content: 'x' }));
    out += enc.chunk(delta({ reasoning_details: [{ type: 'reasoning.text', signature: 'SIG', index: 0 }] }));
    const { output } = events(out + enc.end(undefined, undefined)).at(-1).response;
    expect(output.map((o: any) => o.type)).toEqual(['reasoning', 'message', 'reasoning']);
    expect(encrypted(output[2])).toEqual([{ type: 'reasoning.text', signature: 'SIG', format: G, index: 0 }]);
  });

  it('gives each reasoning item only its own details', () => {
    const enc = encoder();
    let out = enc.chunk(
      delta({ reasoning: 'a', reasoning_details: [{ type: 'reasoning.text', text: 'a', index: 0 }] }),
    );
    out += enc.chunk(delta({ content: 'x' }));
    out += enc.chunk(
      delta({ reasoning: 'b', reasoning_details: [{ type: 'reasoning.text', text: 'b', index: 2 }] }),
    );
    out += enc.chunk(delta({ content: 'y' }));
    const { output } = events(out + enc.end(undefined, undefined)).at(-1).response;
    expect(output.map((o: any) => o.type)).toEqual(['reasoning', 'message', 'reasoning', 'message']);
    expect(encrypted(output[0])).toEqual([{ type: 'reasoning.text', text: 'a', index: 0 }]);
    expect(encrypted(output[2])).toEqual([{ type: 'reasoning.text', text: 'b', index: 2 }]);
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

  it('keeps a piece without an index a detail of its own, apart from the indexed ones', () => {
    const m = new ReasoningDetailsMerger();
    m.add([{ type: 'reasoning.text', text: 'a', index: 0 }]);
    m.add([{ type: 'reasoning.text', text: 'b' }]);
    m.add([{ type: 'reasoning.text', text: 'c', index: 1 }]);
    m.add([{ type: 'reasoning.text', text: 'd' }]);
    expect(m.details).toEqual([
      { type: 'reasoning.text', text: 'a', index: 0 },
      { type: 'reasoning.text', text: 'b' },
      { type: 'reasoning.text', text: 'c', index: 1 },
      { type: 'reasoning.text', text: 'd' },
    ]);
  });

  it('takes a second signature under one type and index for another detail, not a part of the first', () => {
    // Gemini numbers the parts of each streamed chunk from 0: two thought signatures of one answer.
    const m = new ReasoningDetailsMerger();
    const sig = (data: string, id: string | null) =>
      ({ type: 'reasoning.encrypted', data, id, format: 'google-gemini-v1', index: 0 }) as const;
    m.add([sig('SIG_TEXT', null)]);
    m.add([{ type: 'reasoning.text', text: 'Then London.', format: 'google-gemini-v1', index: 0 }]);
    m.add([sig('SIG_CALL', 'call_1')]);
    expect(m.details).toEqual([
      sig('SIG_TEXT', null),
      { type: 'reasoning.text', text: 'Then London.', format: 'google-gemini-v1', index: 0 },
      sig('SIG_CALL', 'call_1'),
    ]);
  });

  it('drops an encrypted_content it did not write', () => {
    expect(unwrapReasoning('gAAAAABo-openai-blob')).toBeUndefined();
    expect(unwrapReasoning('mgr1.not-json')).toBeUndefined();
  });
});
