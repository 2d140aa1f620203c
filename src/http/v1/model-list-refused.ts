import { Type } from 'typebox';
import { badRequest } from '../../gateway/errors.js';

/**
 * OpenRouter's list parameters (@openrouter/sdk 1.3's `models.list` request, `GetModelsRequest`)
 * that ask about figures the gateway does not keep, and why. Each is a 400 naming it whatever its
 * value: ignoring one would answer a list that claims to be filtered and is not, and an empty list
 * would claim that no model qualifies. The SDK sends none of them unless its caller sets them
 * (only `offset` and `limit` have defaults there).
 */
const BENCHMARKS = 'the gateway has no benchmark scores (Artificial Analysis indices)';
const TOOL_RATES = 'the gateway does not record how requests finish, so it has no tool-calling success rates';

const WHY = {
  // OpenRouter's categories are rankings of what its users ask models for.
  category:
    'this gateway carries no model categories (OpenRouter ranks its models by what its users use them for)',
  arch: 'the registry records no model family (architecture.tokenizer is not kept)',
  distillable: "the registry records no model's distillation terms",
  region: 'channels declare no data region',
  min_intelligence_index: BENCHMARKS,
  max_intelligence_index: BENCHMARKS,
  min_coding_index: BENCHMARKS,
  max_coding_index: BENCHMARKS,
  min_agentic_index: BENCHMARKS,
  max_agentic_index: BENCHMARKS,
  min_tool_success_rate: TOOL_RATES,
  max_tool_success_rate: TOOL_RATES,
} as const;
type Refused = keyof typeof WHY;

/** Declared as any text, so whatever the value the answer is the 400 saying why. */
export const RefusedFields = Object.fromEntries(
  Object.keys(WHY).map((name) => [name, Type.Optional(Type.String())]),
) as Record<Refused, ReturnType<typeof Type.Optional<ReturnType<typeof Type.String>>>>;

export type RefusedFilters = { [K in Refused]?: string };

/** A 400 for the first refused parameter `query` carries (in the order above), naming it. */
export function refuseUnavailable(query: RefusedFilters): void {
  for (const [param, why] of Object.entries(WHY))
    if (query[param as Refused] !== undefined)
      throw badRequest(`${param}: ${why}; leave ${param} out`, param);
}
