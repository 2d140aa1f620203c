import { describe, expect, it, vi } from 'vitest';
import { answerRoom, sentMaxTokens } from '../chat/max-tokens.js';
import { countPromptTokens, measurePrompt, promptTokenBound } from '../chat/tokens.js';
import type { ChatRequest } from '../chat/types.js';
import type { RouteTarget } from '../routing/types.js';
import { type ChatPlan, requestFor, reservationMicros } from './chat-plan.js';

function planOf(req: ChatRequest, o: { middleOut?: boolean; candidates?: RouteTarget[] } = {}) {
  const promptCounts = vi.fn(() => measurePrompt(req));
  const plan = {
    request: req,
    model: 'm',
    candidates: (o.candidates ?? []).map((target) => ({ target })),
    promptCounts,
    promptBound: () => promptTokenBound(req),
    answerRoom: (t: RouteTarget) => answerRoom(t, sentMaxTokens(req, t.maxCompletionTokens)),
    sentMaxTokens: (t: RouteTarget) => sentMaxTokens(req, t.maxCompletionTokens),
    stream: false,
    includeUsage: false,
    excludeReasoning: false,
    middleOut: o.middleOut ?? true,
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

  it("reserves the completion length that is sent: max_tokens at most the model's output limit", () => {
    const asking: ChatRequest = { ...req, max_tokens: 50_000 };
    const exact = countPromptTokens(asking);
    const context = exact + 150;
    const limited = { ...target(context), maxCompletionTokens: 100 } as RouteTarget;
    // Sent as 100 (the limit), the prompt fits beside it whole; reserving the 50,000 asked would
    // leave no room for any prompt at all.
    expect(requestFor(planOf(asking).plan, limited)).toBe(asking);
    expect(() => requestFor(planOf(asking).plan, target(context))).toThrow(/does not fit/);
  });
});

describe('reservationMicros', () => {
  /** A model with its context, completion limit and prices in USD per million tokens. */
  const priced = (contextLength: number, maxCompletionTokens: number, prompt: number, completion: number) =>
    ({
      contextLength,
      maxCompletionTokens,
      modelId: `m${contextLength}`,
      pricing: {
        prompt: String(prompt / 1e6),
        completion: String(completion / 1e6),
        request: '0',
        image: '0',
      },
    }) as unknown as RouteTarget;
  const short = priced(8_000, 1_000, 1, 2);
  const wide = priced(20_000, 2_000, 3, 6);
  // ~700 K bytes: far over both contexts.
  const huge: ChatRequest = {
    model: 'm',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'lorem ipsum '.repeat(60_000) },
      { role: 'user', content: 'and now?' },
    ],
  };
  const bound = promptTokenBound(huge);
  /** Micro-USD, as `reservationMicros` rounds (a float product may land a hair above). */
  const expectMicros = (micros: number, exact: number) => expect(micros - exact).toBeOneOf([0, 1]);

  it('without middle-out prices the whole prompt by its byte bound', () => {
    const { plan } = planOf(huge, { middleOut: false, candidates: [short] });
    // The bound is over the context: one completion token is all that could follow.
    expectMicros(reservationMicros(plan), bound * 1 + 1 * 2);
  });

  it('with middle-out prices at most each candidate context, and the worst candidate decides', () => {
    const { plan, promptCounts } = planOf(huge, { candidates: [short, wide] });
    // A cut prompt may leave room for the whole completion limit.
    expectMicros(reservationMicros(plan), 20_000 * 3 + 2_000 * 6);
    const one = planOf(huge, { candidates: [short] });
    expectMicros(reservationMicros(one.plan), 8_000 * 1 + 1_000 * 2);
    // Neither middle-out nor the tokenizer ran for it.
    expect(promptCounts).not.toHaveBeenCalled();
    expect(one.promptCounts).not.toHaveBeenCalled();
  });

  it('with middle-out and max_tokens, max_tokens is the completion', () => {
    const { plan } = planOf({ ...huge, max_tokens: 300 }, { candidates: [short] });
    expectMicros(reservationMicros(plan), 8_000 * 1 + 300 * 2);
  });

  it("a max_tokens above a model's output limit is priced at the limit, the length that is sent", () => {
    const { plan } = planOf({ ...huge, max_tokens: 7_000 }, { candidates: [short, wide] });
    // short sends 1,000 and wide 2,000 of the 7,000 asked.
    expectMicros(reservationMicros(plan), 20_000 * 3 + 2_000 * 6);
    const one = planOf({ ...huge, max_tokens: 7_000 }, { candidates: [short] });
    expectMicros(reservationMicros(one.plan), 8_000 * 1 + 1_000 * 2);
  });

  it('prices the prompt at the dearest of its prompt, cache-write and one-hour cache-write prices', () => {
    const small: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hello' }], max_tokens: 50 };
    // Prices per million tokens over `short`'s prompt 1 / completion 2; the multiplier expected.
    const cases: [Record<string, string>, number][] = [
      [{ input_cache_write: '0.00000125', input_cache_read: '0.0000001' }, 1.25], // Claude, 5 minutes
      [{ input_cache_write: '0.0000005' }, 1], // a cheaper write leaves the prompt price
      [{ input_cache_write: '0.00000125', input_cache_write_1h: '0.000002' }, 2], // ttl "1h"
      [{ input_cache_write_1h: '0.000003' }, 3], // a one-hour price alone counts too
    ];
    for (const [prices, x] of cases) {
      const t = { ...short, pricing: { ...short.pricing, ...prices } } as RouteTarget;
      expectMicros(
        reservationMicros(planOf(small, { candidates: [t] }).plan),
        Math.ceil(promptTokenBound(small) * x + 50 * 2),
      );
    }
  });

  it('a prompt whose bound fits is priced alike with and without middle-out', () => {
    const small: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hello' }], max_tokens: 50 };
    const on = reservationMicros(planOf(small, { candidates: [short, wide] }).plan);
    expect(on).toBe(reservationMicros(planOf(small, { middleOut: false, candidates: [short, wide] }).plan));
    expectMicros(on, promptTokenBound(small) * 3 + 50 * 6);
  });
});
