/** Where a channel is declared (config file, environment), for the Upstreams page's badge and warnings. */
import type { Channel } from '../../../types';

/**
 * Channels declared in the config file or the environment are put back by every start, and
 * come back after a delete (docs/configuration.md, "Declared channels"): say so where an
 * administrator would otherwise edit in vain.
 */
export const DECLARED: Record<string, { badge: string; by: string; change: string; remove: string }> = {
  config: {
    badge: 'config file',
    by: 'in the config file',
    change: 'the file',
    remove: 'remove it from the file',
  },
  env: {
    badge: 'environment',
    by: 'by environment variables',
    change: 'the variables',
    remove: 'unset its variables',
  },
};

export function SourceBadge({ c }: { c: Channel }) {
  const d = DECLARED[c.source];
  if (!d) return null;
  return (
    <span
      className="badge badge-muted badge-gap"
      title={`Declared ${d.by}: console edits last until the next restart`}
    >
      {d.badge}
    </span>
  );
}
