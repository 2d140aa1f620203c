import { describe, expect, it, vi } from 'vitest';
import { countPromptTokens, promptTokenBound } from '../chat/tokens.js';
import type { ChatRequest } from '../chat/types.js';
import type { RouteTarget } from '../routing/types.js';
import { type ChatPlan, requestFor } from './chat-plan.js';

function planOf(req: ChatRequest) {
  const promptTokens = vi.fn(() => countPromptTokens(req));
  const plan = {
    request: req,
    model: 'm',
    candidates: [],
    promptTokens,
    promptBound: () => promptTokenBound(req),
    stream: false,
    includeUsage: false,
    excludeReasoning: false,
    middleOut: true,
  } as unknown as ChatPlan;
  return { plan, promptTokens };
}
const target = (contextLength: number) => ({ contextLength, modelId: 'm' }) as unknown as RouteTarget;

describe('requestFor with middle-out', () => {
  const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i % 50}`).join(' ');
  const req: ChatRequest = {
    model: 'm',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: words(400) },
      { role: 'assistant', content: words(400) },
      { role: 'user', content: 'and now?' },
    ],
    max_tokens: 100,
  };

  it('a prompt whose byte bound fits is sent as is, without the tokenizer', () => {
    const { plan, promptTokens } = planOf(req);
    expect(requestFor(plan, target(100_000))).toBe(req);
    expect(promptTokens).not.toHaveBeenCalled();
  });

  it('one over the bound but within the context by count is counted, and sent as is', () => {
    const { plan, promptTokens } = planOf(req);
    const exact = countPromptTokens(req);
    const bound = promptTokenBound(req);
    expect(bound).toBeGreaterThan(exact + 200);
    expect(requestFor(plan, target(exact + 150))).toBe(req);
    expect(promptTokens).toHaveBeenCalledOnce();
  });

  it('one over the context is cut from the middle', () => {
    const { plan } = planOf(req);
    const out = requestFor(plan, target(countPromptTokens(req) - 200));
    expect(out.messages.length).toBeLessThan(req.messages.length);
    expect(out.messages[0]).toEqual(req.messages[0]);
    expect(out.messages.at(-1)).toEqual(req.messages.at(-1));
  });
});
