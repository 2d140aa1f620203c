import { describe, expect, it } from 'vitest';
import type { ChatResult, ReasoningDetail } from '../../gateway/chat/types.js';
import { encodeAnthropicMessage } from './anthropic-encode.js';
import { carriedDetails, detailsOfSignature, withCarriedSignatures } from './anthropic-signatures.js';
import { AnthropicStreamEncoder } from './anthropic-stream-encode.js';
import { wrapReasoning } from './responses-reasoning.js';

const gemini = (data: string, id: string | null = null): ReasoningDetail => ({
  type: 'reasoning.encrypted',
  data,
  id,
  format: 'google-gemini-v1',
  index: 0,
});
const claude: ReasoningDetail = {
  type: 'reasoning.text',
  text: 'thought',
  signature: 'EqQBCgIYAhIMsig',
  format: 'anthropic-claude-v1',
  index: 0,
};
type Block = Record<string, unknown> & { type: string };
const thinking = (text: string, signature = ''): Block => ({ type: 'thinking', thinking: text, signature });
const call = (id: string): Block => ({ type: 'tool_use', id, name: 'f', input: {} });
const text: Block = { type: 'text', text: 'Hi.' };
const carried = (signature: unknown) => detailsOfSignature(signature);

describe('withCarriedSignatures', () => {
  it("puts a call's signature in the thinking block before it, or in a new one there", () => {
    const out = withCarriedSignatures(
      [thinking('plan'), call('a'), text, call('b')],
      [gemini('SIG_A', 'a'), gemini('SIG_B', 'b')],
    );
    expect(out.map((b) => b.type)).toEqual(['thinking', 'tool_use', 'text', 'thinking', 'tool_use']);
    expect(carried(out[0]!.signature)).toEqual([gemini('SIG_A', 'a')]);
    expect(out[3]).toMatchObject({ thinking: '' });
    expect(carried(out[3]!.signature)).toEqual([gemini('SIG_B', 'b')]);
  });

  it('puts any other in the first unsigned thinking block, else a new one first', () => {
    const out = withCarriedSignatures([text, thinking('later')], [gemini('SIG_T'), gemini('SIG_X', 'gone')]);
    expect(out.map((b) => b.type)).toEqual(['text', 'thinking']);
    expect(carried(out[1]!.signature)).toEqual([gemini('SIG_T'), gemini('SIG_X', 'gone')]);
    const alone = withCarriedSignatures([text], [gemini('SIG_T')]);
    expect(alone).toEqual([thinking('', alone[0]!.signature as string), text]);
  });

  it("leaves Anthropic's reasoning and answers without such details as they are", () => {
    const blocks = [thinking('plan', 'EqQBCgIYAhIMsig'), text];
    expect(withCarriedSignatures(blocks, [claude])).toBe(blocks);
    expect(withCarriedSignatures(blocks, undefined)).toBe(blocks);
    // A signed block does not carry another's details: they get one of their own.
    const out = withCarriedSignatures(blocks, [gemini('SIG_T')]);
    expect(out.map((b) => b.signature)).toEqual([
      expect.stringMatching(/^mgr1\./),
      'EqQBCgIYAhIMsig',
      undefined,
    ]);
  });
});

describe('detailsOfSignature', () => {
  it("is undefined for Anthropic's signatures and none", () => {
    expect(detailsOfSignature('EqQBCgIYAhIMsig')).toBeUndefined();
    expect(detailsOfSignature('')).toBeUndefined();
    expect(detailsOfSignature(undefined)).toBeUndefined();
  });

  it('carries nothing in a malformed one, and never Anthropic’s details', () => {
    expect(detailsOfSignature('mgr1.not-json')).toEqual([]);
    expect(detailsOfSignature(wrapReasoning([claude, gemini('SIG_A', 'a')]))).toEqual([gemini('SIG_A', 'a')]);
  });
});

/**
 * `reasoning_details` that is not a list of objects: the OpenAI-compatible adapter drops such a
 * value from an upstream's answer, and the encoder does not fail on one should any get through
 * (a string there was a 500 on /v1/messages, a null item too).
 */
describe('details that are not a list of objects', () => {
  const garbage = ['reasoning.encrypted', 7, { type: 'x' }, [null, gemini('SIG_T'), 'x']] as unknown[];
  const as = (v: unknown) => v as ReasoningDetail[];

  it('carry only the objects of a list', () => {
    expect(carriedDetails(as('reasoning.encrypted'))).toEqual([]);
    expect(carriedDetails(as([null, gemini('SIG_T'), 'x', 7]))).toEqual([gemini('SIG_T')]);
    expect(withCarriedSignatures([text], as('reasoning.encrypted'))).toEqual([text]);
  });

  it('are encoded as the rest of the answer, streamed or not', () => {
    for (const details of garbage) {
      const message = { role: 'assistant' as const, content: 'Hi.', reasoning_details: as(details) };
      const result = { choices: [{ index: 0, message, finish_reason: 'stop' }] } as ChatResult;
      const body = JSON.parse(encodeAnthropicMessage('msg_1', 'm', result, undefined));
      const signed = Array.isArray(details) && details.length === 3;
      expect(body.content.map((b: Block) => b.type)).toEqual(signed ? ['thinking', 'text'] : ['text']);

      const s = new AnthropicStreamEncoder('msg_1', 'm', 'req', undefined);
      const out =
        s.chunk([
          { index: 0, delta: { content: 'Hi.', reasoning_details: as(details) }, finish_reason: 'stop' },
        ]) + s.end(undefined, undefined);
      expect(out).toContain('"text_delta"');
      expect(out.includes('signature_delta')).toBe(signed);
    }
  });
});
