import { describe, expect, it } from 'vitest';
import {
  dropClientHidden,
  dropUpstreamHidden,
  HIDDEN_ANSWER_FIELDS,
  HIDDEN_CHOICE_FIELDS,
  HIDDEN_MESSAGE_FIELDS,
  HIDDEN_REQUEST_FIELDS,
  HIDDEN_TOOL_FIELDS,
  setHidden,
} from './hidden.js';
import type { ChatRequest } from './types.js';

const tool = () => ({ type: 'function' as const, function: { name: 'f' } });

describe('dropClientHidden', () => {
  it('drops each hidden name a body sent as a field, alone or with the others, on the request, its messages and its tools', () => {
    const plain = () => ({ messages: [{ role: 'user', content: 'hi' }], tools: [tool()] }) as ChatRequest;
    const at: Array<[(r: ChatRequest) => object, readonly string[]]> = [
      [(r) => r, HIDDEN_REQUEST_FIELDS],
      [(r) => r.messages[0]!, HIDDEN_MESSAGE_FIELDS],
      [(r) => r.tools![0]!, HIDDEN_TOOL_FIELDS],
    ];
    const all = plain();
    for (const [where, names] of at)
      for (const n of names) {
        const one = plain();
        (where(one) as Record<string, unknown>)[n] = 'x';
        (where(all) as Record<string, unknown>)[n] = 'x';
        expect(dropClientHidden(one), n).toEqual(plain());
      }
    expect(dropClientHidden(all)).toEqual(plain());
    // A null is a field sent too (a tool's nulls are not removed before the schema).
    const t = { ...tool(), anthropic_fields: null };
    expect(
      Object.keys(dropClientHidden({ messages: [], tools: [t] } as unknown as ChatRequest).tools![0]!),
    ).toEqual(['type', 'function']);
  });

  it("keeps the ingress's hidden ones, and every other field", () => {
    const m = setHidden({ role: 'assistant' as const, content: 'a', x_note: 1 }, 'anthropic_content', []);
    const t = setHidden({ ...tool(), x_tool: 1 }, 'anthropic_fields', { strict: true });
    const req = setHidden(
      setHidden({ model: 'm', x_top: 1, messages: [m], tools: [t] }, 'anthropic_beta', ['b']),
      'anthropic_thinking',
      { type: 'adaptive' },
    );
    expect(dropClientHidden(req)).toBe(req);
    const read = (o: object, k: string) => (o as Record<string, unknown>)[k];
    expect(read(req, 'anthropic_beta')).toEqual(['b']);
    expect(read(req, 'anthropic_thinking')).toEqual({ type: 'adaptive' });
    expect(read(m, 'anthropic_content')).toEqual([]);
    expect(read(t, 'anthropic_fields')).toEqual({ strict: true });
    expect(req).toEqual({
      model: 'm',
      x_top: 1,
      messages: [{ role: 'assistant', content: 'a', x_note: 1 }],
      tools: [{ ...tool(), x_tool: 1 }],
    });
  });
});

describe('dropUpstreamHidden', () => {
  const choice = () => ({ index: 0, finish_reason: 'stop', x_choice: 1 });
  const message = () => ({ role: 'assistant', content: 'a', x_note: 1 });

  it('drops each hidden answer name an upstream sent as a field, alone or with the others, on a choice and on its message or delta', () => {
    const all = { c: choice(), m: message() };
    const at: Array<['c' | 'm', readonly string[]]> = [
      ['c', HIDDEN_CHOICE_FIELDS],
      ['m', HIDDEN_ANSWER_FIELDS],
    ];
    for (const [where, names] of at)
      for (const n of names)
        for (const value of ['x', null, [{ type: 'text', text: 'x' }]]) {
          const one = { c: choice(), m: message() };
          (one[where] as Record<string, unknown>)[n] = value;
          (all[where] as Record<string, unknown>)[n] = value;
          dropUpstreamHidden(one.c, one.m);
          expect(one, n).toEqual({ c: choice(), m: message() });
        }
    dropUpstreamHidden(all.c, all.m);
    expect(all).toEqual({ c: choice(), m: message() });
  });

  it("keeps an adapter's hidden ones, and every other field; leaves a delta that is not an object", () => {
    const c = setHidden(choice(), 'stop_sequence', 'END');
    const m = setHidden(setHidden(message(), 'anthropic_content', []), 'content_order', []);
    const d = setHidden({ content: 'a' }, 'anthropic_event', { type: 'stop', index: 0 });
    dropUpstreamHidden(c, m);
    dropUpstreamHidden(c, d);
    const read = (o: object, k: string) => (o as Record<string, unknown>)[k];
    expect(read(c, 'stop_sequence')).toBe('END');
    expect(read(m, 'anthropic_content')).toEqual([]);
    expect(read(m, 'content_order')).toEqual([]);
    expect(read(d, 'anthropic_event')).toEqual({ type: 'stop', index: 0 });
    expect([c, m, d]).toEqual([choice(), message(), { content: 'a' }]);
    const garbage = { ...choice(), stop_sequence: 'x' };
    for (const delta of ['text', 7, null, undefined]) dropUpstreamHidden(garbage, delta);
    expect(garbage).toEqual(choice());
  });
});
