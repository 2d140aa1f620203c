import { describe, expect, it } from 'vitest';
import { countPromptTokens, estimateUsage } from '../chat/tokens.js';
import type { ChatRequest } from '../chat/types.js';
import type { RouteTarget } from '../routing/types.js';
import type { ChatPlan } from './chat-plan.js';
import { countedUsage } from './chat-runner.js';

const req: ChatRequest = {
  model: 'm',
  messages: [{ role: 'user', content: 'the upstream counts a model request '.repeat(20) }],
};
const target = { contextLength: 100_000, modelId: 'm' } as unknown as RouteTarget;
const planWith = (bound: number) =>
  ({ request: req, candidates: [], promptBound: () => bound, middleOut: false }) as unknown as ChatPlan;

describe('countedUsage', () => {
  it('is the local count of the request as sent when it is within the cap', () => {
    const u = countedUsage(planWith(1_000_000), target, 'ok');
    expect(u).toEqual(estimateUsage(req, 'ok'));
    expect(u.prompt_tokens).toBe(countPromptTokens(req));
  });

  it('bills the prompt at most the cap the reservation priced (a sampled count can come out above it)', () => {
    const u = countedUsage(planWith(10), target, 'ok');
    expect(countPromptTokens(req)).toBeGreaterThan(10);
    expect(u).toMatchObject({ prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 });
  });
});
