import { NOT_A_NUMBER, numberRuleProblem } from './field-rules';

/**
 * Whether a number field holds what is not a number ("5e", "0.05e"): the browser then answers ''
 * for its value, which reads as "not set" and went out as nothing (a key's quota: unlimited; a
 * playground temperature: the model's default). Only the field knows (`validity.badInput`).
 */
export function holdsBadNumber(el: unknown): boolean {
  return el instanceof HTMLInputElement && el.validity.badInput;
}

/**
 * Why a number field's entry cannot be sent, or null when it can (empty included: not set).
 * `whole` asks for an integer; the message says the rule broken, in the words of field-rules.
 */
export function numberProblem(
  el: HTMLInputElement | null,
  range: { min: number; max?: number; whole?: boolean },
): string | null {
  if (!el) return null;
  if (holdsBadNumber(el)) return NOT_A_NUMBER;
  const text = el.value.trim();
  if (text === '') return null;
  return numberRuleProblem(Number(text), { min: range.min, max: range.max, integer: range.whole });
}
