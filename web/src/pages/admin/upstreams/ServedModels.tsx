/** The Models column of the Upstreams page: what a channel serves, declared or listed by its upstream. */
import type { Channel } from '../../../types';

/** Kinds whose upstream lists its models (GET /models), so a refresh can read them again. */
const LISTS_MODELS = new Set(['openai-compatible', 'anthropic', 'gemini']);
const SHOWN_MODELS = 6;

/** Whether the channel serves what its upstream lists rather than models it names. */
export function listsItsModels(c: Channel): boolean {
  return LISTS_MODELS.has(c.kind) && c.models.length === 0 && !Object.keys(c.model_mapping ?? {}).length;
}

/**
 * What the channel serves now. `models` is only what it declares: empty for one that serves its
 * upstream's listing, which this column showed as serving nothing.
 */
export function ServedModels({ c }: { c: Channel }) {
  const served = c.served_models ?? c.models;
  if (!served.length) return <span>None{listsItsModels(c) ? ' listed yet' : ''}</span>;
  const more = served.length - SHOWN_MODELS;
  return (
    <>
      <span title={more > 0 ? served.join(', ') : undefined}>
        {served.slice(0, SHOWN_MODELS).join(', ')}
        {more > 0 && ` and ${more} more`}
      </span>
      {listsItsModels(c) && <div className="meta">listed by the upstream</div>}
    </>
  );
}
