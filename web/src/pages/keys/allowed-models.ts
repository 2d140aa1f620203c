/** What the API-key form says of its allowed models: entries no model of the registry answers to. */
import type { ModelEntry } from '../../types';

/** Every name a model answers to, as a key's allow-list matches it (src/gateway/registry/model-info.ts). */
function namesOf(m: ModelEntry): string[] {
  const slash = m.id.indexOf('/');
  return [m.id, m.upstream_model ?? '', slash >= 0 ? m.id.slice(slash + 1) : m.id, ...(m.aliases ?? [])];
}

/**
 * The entries that admit no model the registry has now: an exact name none goes by, or a
 * pattern (`openai/*`: a trailing `*` matches names starting with the rest) none matches. The
 * server takes them (a key may name a model before an upstream serves it), so they are a warning.
 */
export function unmatchedModels(entries: string[], models: ModelEntry[]): string[] {
  const names = new Set(models.flatMap(namesOf).filter(Boolean));
  return entries.filter((e) =>
    e.endsWith('*') ? ![...names].some((n) => n.startsWith(e.slice(0, -1))) : !names.has(e),
  );
}

/** The warning for those entries, or null when every entry admits some model. */
export function unmatchedWarning(entries: string[], models: ModelEntry[] | undefined): string | null {
  if (!models) return null;
  const none = unmatchedModels(entries, models);
  if (!none.length) return null;
  const list = none.map((e) => `“${e}”`).join(', ');
  return none.length === 1
    ? `No model matches ${list} yet: the key can use it once such a model is added.`
    : `No model matches ${list} yet: the key can use them once such models are added.`;
}
