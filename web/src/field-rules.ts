/**
 * The bounds a form field declares, and what the console says when an entry breaks one: the same
 * words for the same rule on every page ("At least 1.", "A whole number.", "At most 128
 * characters."), checked before anything is sent. What only the server knows (a taken name, an
 * unknown model) still comes back in its own words.
 */
export interface FieldRules {
  /** Numbers: the smallest and largest value taken. */
  min?: number;
  max?: number;
  /** Numbers: whole numbers only. */
  integer?: boolean;
  /** Text: the fewest and most characters (code points, as the server counts). */
  minLength?: number;
  maxLength?: number;
}

/** The longest name of a key, token, app or display name the server takes. */
export const NAME_MAX = 128;

export const NOT_A_NUMBER = 'Enter a number.';

const chars = (n: number) => `${n} character${n === 1 ? '' : 's'}`;

/** Why a number breaks `r`, or null. */
export function numberRuleProblem(n: number, r: FieldRules): string | null {
  if (!Number.isFinite(n)) return NOT_A_NUMBER;
  if (r.integer && !Number.isInteger(n)) return 'A whole number.';
  if (r.min !== undefined && n < r.min) return `At least ${r.min}.`;
  if (r.max !== undefined && n > r.max) return `At most ${r.max}.`;
  return null;
}

/** Why a text breaks `r`, or null (an empty text is for `required` to judge). */
export function textRuleProblem(text: string, r: FieldRules): string | null {
  const length = [...text].length;
  if (length === 0) return null;
  if (r.minLength !== undefined && length < r.minLength) return `At least ${chars(r.minLength)}.`;
  if (r.maxLength !== undefined && length > r.maxLength) return `At most ${chars(r.maxLength)}.`;
  return null;
}
