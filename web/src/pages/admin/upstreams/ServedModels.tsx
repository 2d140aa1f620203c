/** The Models column of the Upstreams page: what a channel serves, declared or listed by its upstream. */
import type { Channel, ChannelListing } from '../../../types';

/** Kinds whose upstream lists its models (GET /models), so a refresh can read them again. */
const LISTS_MODELS = new Set(['openai-compatible', 'anthropic', 'gemini']);
const SHOWN_MODELS = 6;

/** Whether the channel serves what its upstream lists rather than models it names. */
export function listsItsModels(c: Channel): boolean {
  return LISTS_MODELS.has(c.kind) && c.models.length === 0 && !Object.keys(c.model_mapping ?? {}).length;
}

/** Why a listing failed, in a few words: its error kind and the upstream's status. */
export function listingWhy(l: ChannelListing): string {
  return [l.error_kind, typeof l.upstream_status === 'number' ? `HTTP ${l.upstream_status}` : null]
    .filter(Boolean)
    .join(', ');
}

/**
 * What the channel serves now. `models` is only what it declares: empty for one that serves its
 * upstream's listing, which this column showed as serving nothing. For such a channel the API's
 * `listing` (its last listing's outcome, from whichever instance ran it) tells an upstream whose
 * list could not be read (with why) from one that lists none, and from one never listed yet.
 */
export function ServedModels({ c }: { c: Channel }) {
  const served = c.served_models ?? c.models;
  const listing = listsItsModels(c) ? (c.listing ?? null) : null;
  const failed = listing && !listing.ok ? listing : null;
  if (!served.length && listsItsModels(c)) {
    if (failed)
      return (
        <>
          <span>Could not be read{listingWhy(failed) ? `: ${listingWhy(failed)}` : ''}</span>
          {failed.message && <div className="meta break">{failed.message}</div>}
        </>
      );
    return <span>{listing ? 'None listed' : 'Not listed yet'}</span>;
  }
  if (!served.length) return <span>None</span>;
  const more = served.length - SHOWN_MODELS;
  return (
    <>
      <span title={more > 0 ? served.join(', ') : undefined}>
        {served.slice(0, SHOWN_MODELS).join(', ')}
        {more > 0 && ` and ${more} more`}
      </span>
      {listsItsModels(c) && <div className="meta">listed by the upstream</div>}
      {failed && (
        <div className="meta break">
          Its last listing failed{listingWhy(failed) ? ` (${listingWhy(failed)})` : ''}: these are from the
          one before.
        </div>
      )}
    </>
  );
}
