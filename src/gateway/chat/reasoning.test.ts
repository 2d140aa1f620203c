import { describe, expect, it } from 'vitest';
import { setHidden } from './hidden.js';
import {
  effortFromBudget,
  omitReasoningFromEvent,
  omitReasoningFromResult,
  reasoningBudget,
  resolveReasoning,
} from './reasoning.js';

describe('reasoning', () => {
  it('resolves the request forms', () => {
    expect(resolveReasoning({})).toBeUndefined();
    expect(resolveReasoning({ reasoning: { enabled: true } })).toMatchObject({
      enabled: true,
      effort: 'medium',
    });
    expect(resolveReasoning({ reasoning_effort: 'low' })).toMatchObject({ enabled: true, effort: 'low' });
    expect(resolveReasoning({ reasoning: { effort: 'none' } })).toMatchObject({ enabled: false });
    expect(resolveReasoning({ reasoning: { enabled: false, effort: 'high' } })).toMatchObject({
      enabled: false,
    });
    // A zero budget is reasoning off, whatever else is asked.
    expect(resolveReasoning({ reasoning: { max_tokens: 0 } })).toMatchObject({ enabled: false });
    expect(resolveReasoning({ reasoning: { max_tokens: 0, effort: 'high' } })).toMatchObject({
      enabled: false,
    });
    expect(resolveReasoning({ reasoning: { max_tokens: 3000 } })).toMatchObject({
      enabled: true,
      budget: 3000,
    });
    expect(resolveReasoning({ reasoning: { exclude: true } })).toEqual({
      enabled: undefined,
      effort: undefined,
      budget: undefined,
      exclude: true,
    });
  });

  it('turns effort into a budget with the documented ratios and limits', () => {
    const r = (effort: 'high' | 'low' | 'max') => resolveReasoning({ reasoning: { effort } })!;
    expect(reasoningBudget(r('high'), 10_000)).toBe(8000);
    expect(reasoningBudget(r('low'), 10_000)).toBe(2000);
    expect(reasoningBudget(r('max'), 10_000)).toBe(9500);
    expect(reasoningBudget(r('low'), 1000, { min: 1024 })).toBe(1024);
    expect(reasoningBudget(r('high'), 1_000_000, { cap: 128_000 })).toBe(128_000);
    expect(reasoningBudget(resolveReasoning({ reasoning: { max_tokens: 5000 } })!, 100)).toBe(5000);
    expect(effortFromBudget(800, 1000)).toBe('high');
    expect(effortFromBudget(100, 1000)).toBe('minimal');
    expect(effortFromBudget(450, 1000)).toBe('medium');
  });

  it('omits reasoning for exclude, dropping deltas left empty', () => {
    const result = omitReasoningFromResult({
      choices: [
        {
          index: 0,
          finish_reason: 'stop',
          message: { role: 'assistant', content: 'x', reasoning: 'r', reasoning_details: [] },
        },
      ],
    });
    expect(result.choices[0].message).toEqual({ role: 'assistant', content: 'x' });
    expect(
      omitReasoningFromEvent({
        type: 'delta',
        choices: [{ index: 0, delta: { reasoning: 'r' }, finish_reason: null }],
      }),
    ).toBeNull();
    expect(
      omitReasoningFromEvent({
        type: 'delta',
        choices: [{ index: 0, delta: { reasoning: 'r', content: 'c' }, finish_reason: null }],
      }),
    ).toEqual({ type: 'delta', choices: [{ index: 0, delta: { content: 'c' }, finish_reason: null }] });
    // The finishing delta keeps what rides on it unseen (the matched stop sequence).
    const last = setHidden(
      {
        index: 0,
        delta: { reasoning: 'r', content: 'c' },
        finish_reason: 'stop',
        native_finish_reason: 'stop',
      },
      'stop_sequence',
      'END',
    );
    const shaped = omitReasoningFromEvent({ type: 'delta', choices: [last] });
    expect(shaped).toEqual({
      type: 'delta',
      choices: [{ index: 0, delta: { content: 'c' }, finish_reason: 'stop', native_finish_reason: 'stop' }],
    });
    expect(shaped?.type === 'delta' && shaped.choices[0]!.stop_sequence).toBe('END');
  });
});
