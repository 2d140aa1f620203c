/**
 * What a "parameter" is, for `provider.require_parameters` and for what an adapter sends: one
 * rule, used by route planning (`planRoute`) and by the adapters' allow-lists.
 *
 * - A request field is a parameter when it is one of the names a model's `supported_parameters`
 *   can hold (OpenRouter's list, openrouter.md §"Models"). Anything else (routing fields, end-user
 *   ids, labels and cache hints such as `metadata`, `store`, `service_tier`, a field the gateway
 *   does not know or a misspelt one) is not: a list never names it, so counting it would skip every
 *   model whose registry entry lists its parameters, and routing must not fail on it. Such fields
 *   are sent where an adapter knows them and dropped elsewhere, with or without
 *   `require_parameters`.
 * - Names the gateway turns into one another are one parameter (ALIAS_GROUPS): a set naming one of
 *   them (an adapter's, a model's list, a channel's `supportedParams`) takes them all.
 */
import type { ChatRequest } from './types.js';

/** The names a model's `supported_parameters` can hold: the request fields that count. */
export const PARAMETERS: ReadonlySet<string> = new Set([
  'temperature',
  'top_p',
  'top_k',
  'min_p',
  'top_a',
  'frequency_penalty',
  'presence_penalty',
  'repetition_penalty',
  'max_tokens',
  'max_completion_tokens',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'prediction',
  'seed',
  'response_format',
  'structured_outputs',
  'stop',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'include_reasoning',
  'reasoning',
  'reasoning_effort',
  'web_search_options',
  'verbosity',
]);

/**
 * One parameter under several names. The completion limit: `max_completion_tokens` wins over
 * `max_tokens` and is sent under the name each upstream takes (`sentMaxTokens`). Reasoning:
 * `reasoning_effort` and the legacy `include_reasoning` are read into the `reasoning` object
 * (`resolveReasoning`, `includeReasoning`), which each adapter translates.
 */
const ALIAS_GROUPS: readonly (readonly string[])[] = [
  ['max_tokens', 'max_completion_tokens'],
  ['reasoning', 'reasoning_effort', 'include_reasoning'],
];

const ALIASES: ReadonlyMap<string, readonly string[]> = new Map(
  ALIAS_GROUPS.flatMap((g) => g.map((name) => [name, g.filter((n) => n !== name)] as const)),
);

/** The other names of `param` (none for most). */
export function aliasesOf(param: string): readonly string[] {
  return ALIASES.get(param) ?? [];
}

/** Whether `names` (a set or a list) takes `param`: it names it or one of its aliases. */
export function takes(names: Names, param: string): boolean {
  if (has(names, param)) return true;
  for (const a of aliasesOf(param)) if (has(names, a)) return true;
  return false;
}

type Names = ReadonlySet<string> | readonly string[];
const has = (names: Names, n: string) =>
  Array.isArray(names) ? (names as readonly string[]).includes(n) : (names as ReadonlySet<string>).has(n);

/** `names` with the aliases of every name it holds: what a set that names them takes. */
export function withAliases(names: Iterable<string>): Set<string> {
  const out = new Set(names);
  for (const n of [...out]) for (const a of aliasesOf(n)) out.add(a);
  return out;
}

/** The parameters a request sets (PARAMETERS), for `provider.require_parameters`. */
export function requestedParameters(req: ChatRequest): string[] {
  return Object.keys(req).filter((k) => PARAMETERS.has(k) && req[k] !== undefined && req[k] !== null);
}
