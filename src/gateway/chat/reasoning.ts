/**
 * The OpenRouter `reasoning` object, resolved once and translated by each adapter:
 * `effort` <-> token budget through OpenRouter's documented ratios of `max_tokens`
 * (max/xhigh 0.95, high 0.8, medium 0.5, low 0.2, minimal 0.1), `reasoning.max_tokens` used as
 * the budget directly, `enabled: true` alone meaning medium, `effort: "none"` / `enabled: false`
 * meaning off, and the top-level `reasoning_effort` shorthand.
 *
 * `exclude` is applied to outputs for every kind with `omitReasoning*` below: the model still
 * reasons (and is billed), the client just does not see it.
 */
import type { ChatDeltaChoice, ChatRequest, ChatResult, ChatStreamEvent, ReasoningEffort } from './types.js';

export const EFFORT_RATIOS: Readonly<Record<ReasoningEffort, number>> = {
  max: 0.95,
  xhigh: 0.95,
  high: 0.8,
  medium: 0.5,
  low: 0.2,
  minimal: 0.1,
  none: 0,
};

export interface ResolvedReasoning {
  /** true: on; false: off; undefined: the model's default (only `exclude` was given). */
  enabled: boolean | undefined;
  effort: ReasoningEffort | undefined;
  /** Explicit budget from `reasoning.max_tokens`. */
  budget: number | undefined;
  exclude: boolean;
}

/** Undefined when the request says nothing about reasoning. */
export function resolveReasoning(
  req: Pick<ChatRequest, 'reasoning' | 'reasoning_effort'>,
): ResolvedReasoning | undefined {
  const r = req.reasoning;
  const effort = r?.effort ?? req.reasoning_effort ?? undefined;
  const budget = r?.max_tokens ?? undefined;
  if (!r && effort === undefined) return undefined;
  const exclude = r?.exclude === true;
  // A budget of zero tokens is reasoning off: no provider can think in none (Anthropic's
  // minimum is 1024, Gemini reads 0 as off, OpenAI's efforts have no zero but "none").
  if (r?.enabled === false || effort === 'none' || budget === 0)
    return { enabled: false, effort: 'none', budget: undefined, exclude };
  if (effort !== undefined || budget !== undefined) return { enabled: true, effort, budget, exclude };
  if (r?.enabled === true) return { enabled: true, effort: 'medium', budget: undefined, exclude };
  return { enabled: undefined, effort: undefined, budget: undefined, exclude };
}

export interface BudgetLimits {
  /** Provider minimum (Anthropic 1024). */
  min?: number;
  /** Upper cap (OpenRouter uses 128000 for Anthropic). */
  cap?: number;
}

/** Token budget for reasoning: the explicit one, else effort ratio x max_tokens, clamped to [min, cap]. */
export function reasoningBudget(r: ResolvedReasoning, maxTokens: number, limits: BudgetLimits = {}): number {
  const min = limits.min ?? 0;
  const cap = limits.cap ?? Number.POSITIVE_INFINITY;
  const raw = r.budget ?? Math.floor(maxTokens * EFFORT_RATIOS[r.effort ?? 'medium']);
  return Math.max(min, Math.min(raw, cap));
}

/** The effort level whose ratio is closest to budget / max_tokens (for providers that take only effort). */
export function effortFromBudget(
  budget: number,
  maxTokens: number,
): Exclude<ReasoningEffort, 'none' | 'max' | 'xhigh'> {
  const ratio = maxTokens > 0 ? budget / maxTokens : 1;
  const levels = ['minimal', 'low', 'medium', 'high'] as const;
  let best: (typeof levels)[number] = 'high';
  let bestDist = Number.POSITIVE_INFINITY;
  for (const l of levels) {
    const d = Math.abs(EFFORT_RATIOS[l] - ratio);
    if (d < bestDist) {
      best = l;
      bestDist = d;
    }
  }
  return best;
}

/** Removes reasoning from a result in place (reasoning.exclude). */
export function omitReasoningFromResult(result: ChatResult): ChatResult {
  for (const c of result.choices) {
    delete c.message.reasoning;
    delete c.message.reasoning_details;
  }
  return result;
}

/**
 * Removes reasoning from a stream event; returns null when nothing is left to send. A choice keeps
 * its object (its delta is replaced), so what rides on it unseen (the matched stop sequence, see
 * `FinishDetails`) stays with it.
 */
export function omitReasoningFromEvent(ev: ChatStreamEvent): ChatStreamEvent | null {
  if (ev.type !== 'delta') return ev;
  const kept: ChatDeltaChoice[] = [];
  for (const c of ev.choices) {
    const d = c.delta;
    if (d.reasoning === undefined && d.reasoning_details === undefined) {
      kept.push(c);
      continue;
    }
    const { reasoning: _r, reasoning_details: _d, ...rest } = d;
    if (Object.keys(rest).length > 0 || c.finish_reason !== null || c.logprobs) {
      c.delta = rest;
      kept.push(c);
    }
  }
  return kept.length > 0 ? { type: 'delta', choices: kept } : null;
}
