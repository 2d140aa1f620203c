/** What the API-key form says of its allowed models: entries no model of the registry answers to. */
import type { ModelEntry } from '../../types';

/**
 * The entries that admit no model the registry has now, by the rule the server applies
 * (src/gateway/registry/allow-list.ts): a pattern (`openai/*`: a trailing `*`) no model id starts
 * with the rest of; an exact name that is no model's id or alias, nor the plain name (upstream
 * name, id without the author) of exactly one model, the one it then resolves to. The server takes
 * them (a key may name a model before an upstream serves it), so they are a warning.
 */
export function unmatchedModels(entries: string[], models: ModelEntry[]): string[] {
  const ids = new Set(models.map((m) => m.id));
  // Plain name -> how many models answer to it (as the registry counts them: not a model's own id).
  const answering = new Map<string, Set<string>>();
  for (const m of models) {
    const slash = m.id.indexOf('/');
    for (const name of [
      m.upstream_model ?? '',
      slash >= 0 ? m.id.slice(slash + 1) : m.id,
      ...(m.aliases ?? []),
    ])
      if (name && name !== m.id) answering.set(name, (answering.get(name) ?? new Set()).add(m.id));
  }
  const aliases = new Set(models.flatMap((m) => m.aliases ?? []));
  return entries.filter((e) =>
    e.endsWith('*')
      ? ![...ids].some((id) => id.startsWith(e.slice(0, -1)))
      : !ids.has(e) && !aliases.has(e) && answering.get(e)?.size !== 1,
  );
}

/** Where an entry's first `*` stands when it is not its last character (no wildcard), else -1. */
function innerStar(entry: string): number {
  const i = entry.indexOf('*');
  return i < entry.length - 1 ? i : -1;
}

/**
 * The warning for those entries, or null when every entry admits some model. An entry with a `*`
 * before its end is said first: the server refuses it on save (only a final `*` is a wildcard),
 * unless the key held it already, where it stays a plain name.
 */
export function unmatchedWarning(entries: string[], models: ModelEntry[] | undefined): string | null {
  const [inner] = entries.filter((e) => innerStar(e) >= 0);
  const star =
    inner === undefined
      ? ''
      : `Only a final * is a wildcard: for “${inner}” write “${inner.slice(0, innerStar(inner))}*”, or name the models.`;
  const none = models ? unmatchedModels(entries, models).filter((e) => innerStar(e) < 0) : [];
  const list = none.map((e) => `“${e}”`).join(', ');
  const unmatched = !none.length
    ? ''
    : none.length === 1
      ? `No model matches ${list} yet: the key can use it once such a model is added.`
      : `No model matches ${list} yet: the key can use them once such models are added.`;
  return [star, unmatched].filter(Boolean).join(' ') || null;
}
