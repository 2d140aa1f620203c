import { describe, expect, it } from 'vitest';
import {
  dropClientHidden,
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
