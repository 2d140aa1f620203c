import { describe, expect, it, vi } from 'vitest';
import { countPromptTokens, measurePrompt, promptTokenBound } from '../chat/tokens.js';
import type { ChatRequest } from '../chat/types.js';
import type { RouteTarget } from '../routing/types.js';
import { type ChatPlan, requestFor } from './chat-plan.js';

function planOf(req: ChatRequest) {
  const promptCounts = vi.fn(() => measurePrompt(req));
  const plan = {
    request: req,
    model: 'm',
    candidates: [],
    promptCounts,
    promptBound: () => promptTokenBound(req),
    stream: false,
    includeUsage: false,
    excludeReasoning: false,
    middleOut: true,
  } as unknown as ChatPlan;
  return { plan, promptCounts };
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
    const { plan, promptCounts } = planOf(req);
    expect(requestFor(plan, target(100_000))).toBe(req);
    expect(promptCounts).not.toHaveBeenCalled();
  });

  it('one over the bound but within the context by count is counted, and sent as is', () => {
    const { plan, promptCounts } = planOf(req);
    const exact = countPromptTokens(req);
    const bound = promptTokenBound(req);
    expect(bound).toBeGreaterThan(exact + 200);
    expect(requestFor(plan, target(exact + 150))).toBe(req);
    expect(promptCounts).toHaveBeenCalledOnce();
  });

  it('one over the context is cut from the middle', () => {
    const { plan } = planOf(req);
    const out = requestFor(plan, target(countPromptTokens(req) - 200));
    expect(out.messages.length).toBeLessThan(req.messages.length);
    expect(out.messages[0]).toEqual(req.messages[0]);
    expect(out.messages.at(-1)).toEqual(req.messages.at(-1));
  });

  it('counts the tool definitions against the context when cutting', () => {
    const tools = [
      {
        type: 'function' as const,
        function: { name: 'lookup', description: words(300), parameters: { type: 'object', properties: {} } },
      },
    ];
    const withTools: ChatRequest = { ...req, tools };
    const context = countPromptTokens(withTools) - 50;
    const out = requestFor(planOf(withTools).plan, target(context));
    expect(out.messages.length).toBeLessThan(req.messages.length);
    expect(countPromptTokens(out) + 100).toBeLessThanOrEqual(context);
    // Without the tools the messages alone would have fitted.
    expect(requestFor(planOf(req).plan, target(context))).toBe(req);
  });

  it('cuts once per context length, however many attempts', () => {
    const { plan, promptCounts } = planOf(req);
    const small = target(countPromptTokens(req) - 200);
    const first = requestFor(plan, small);
    expect(requestFor(plan, small)).toBe(first);
    expect(requestFor(plan, { ...small, modelId: 'other' } as RouteTarget)).toBe(first);
    expect(promptCounts).toHaveBeenCalledOnce();
    expect(requestFor(plan, target(countPromptTokens(req) - 300))).not.toBe(first);
  });
});
