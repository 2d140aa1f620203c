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
 * upstream's listing, which this column showed as serving nothing. `unreadable`: the last
 * listing asked here (Refresh) failed. The API says no more about listings than `served_models`,
 * empty while the list could not be read (or the upstream listed none): said so for a channel
 * that serves its listing.
 */
export function ServedModels({ c, unreadable = false }: { c: Channel; unreadable?: boolean }) {
  const served = c.served_models ?? c.models;
  if (!served.length && listsItsModels(c))
    return unreadable ? (
      <span>Could not be read</span>
    ) : (
      <span>None listed: the list could not be read, or is empty</span>
    );
  if (!served.length) return <span>None</span>;
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
