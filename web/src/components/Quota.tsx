import { formatUsd } from '../format';
import type { FieldSpec } from './SpecForm';

/**
 * A spending limit in USD, as keys and users carry one (`quota_limit`; null: unlimited): the
 * form field that sets it (empty means unlimited) and the cell that shows it beside the spend.
 */
export const QUOTA_FIELD: FieldSpec = {
  name: 'quota_limit',
  label: 'Quota (USD)',
  type: 'number',
  min: 0,
  step: '0.01',
  hint: 'Empty means unlimited.',
};

export function Quota({ used, limit }: { used: number; limit: number | null }) {
  if (limit == null) return <span>{formatUsd(used)} used · unlimited</span>;
  const pct = limit > 0 ? Math.min(100, (used / limit) * 100) : 100;
  return (
    <div className="quota">
      <span>
        {formatUsd(used)} of {formatUsd(limit)}
      </span>
      <progress max={100} value={pct} aria-label={`${Math.round(pct)}% of quota used`} />
    </div>
  );
}
