import type { ModelInfo } from './model-info.js';

/** What reading an allow-list needs of the registry: how a name resolves. */
export interface NameResolver {
  resolve(name: string): ModelInfo | undefined;
}

/**
 * Whether a key's allow-list admits `model` (null: every model). The same rule decides chat (its
 * `models` fallbacks, the Anthropic and Responses ingresses), embeddings and what the `/v1/models`
 * routes show:
 *
 * - an entry ending in `*` admits the models whose id starts with the rest (`openai/*`,
 *   `openai/gpt-4o*`). Ids only: the upstream name of `premium/fake-model` is `fake-model`, and
 *   `fake-*` is not meant to reach another author's model through it. A `*` elsewhere is part
 *   of a name: a key create or change refuses such a new entry (access/api-keys.ts), and one a
 *   key held before that rule keeps this meaning.
 * - any other entry admits the model it is the id or an alias of, or the model it resolves to
 *   when it is another of its names (the upstream name, the id without its author:
 *   `gpt-4o-mini` admits `openai/gpt-4o-mini` while no other model answers to it). Before, such a
 *   name admitted every model that had it: `fake-model` admitted `premium/fake-model`, a different
 *   and dearer model, beside the model called `fake-model`.
 * - `asWritten`: the name the request wrote, when it is not the model's (a variant, `x:nitro`):
 *   an entry naming it exactly admits it too.
 *
 * Allocates nothing: it runs for every request of a key that has a list.
 */
export function isAllowed(
  model: ModelInfo,
  allowed: readonly string[] | null,
  registry: NameResolver,
  asWritten?: string,
): boolean {
  if (!allowed) return true;
  for (const entry of allowed) {
    if (isWildcard(entry)) {
      if (startsWithPrefix(model.id, entry)) return true;
    } else if (
      entry === model.id ||
      entry === asWritten ||
      model.aliases.includes(entry) ||
      ((entry === model.upstream_model || isSlugOf(entry, model.id)) &&
        registry.resolve(entry)?.id === model.id)
    )
      return true;
  }
  return false;
}

/**
 * A name no registry entry answers to (chat's unknown `model` or fallback): passes when an entry
 * names it as written, or prefixes it. Such a request is a 404 (or a fallback skipped) next, as
 * it is for a key without a list; a key whose list does not name it is told 403 instead, so a
 * key learns nothing of the models outside its list.
 */
export function unknownAllowed(allowed: readonly string[] | null, name: string): boolean {
  if (!allowed) return true;
  for (const entry of allowed)
    if (isWildcard(entry) ? startsWithPrefix(name, entry) : entry === name) return true;
  return false;
}

const isWildcard = (entry: string) => entry.charCodeAt(entry.length - 1) === 42; // '*'

/** Whether `name` starts with `pattern` less its final `*`, without slicing the pattern. */
function startsWithPrefix(name: string, pattern: string): boolean {
  const n = pattern.length - 1;
  if (name.length < n) return false;
  for (let i = 0; i < n; i++) if (name.charCodeAt(i) !== pattern.charCodeAt(i)) return false;
  return true;
}

/** Whether `name` is `id` less its author (`gpt-4o-mini` of `openai/gpt-4o-mini`), without slicing. */
function isSlugOf(name: string, id: string): boolean {
  const slash = id.indexOf('/');
  return slash >= 0 && id.length - slash - 1 === name.length && id.endsWith(name);
}
