/**
 * What RequestLogWriter's one ordered buffer holds (log rows, the settlements queued among them,
 * and the summed settlements of a batch refused for its data), and how a batch is formed from its
 * front. Settlements commute, so a batch sums those it carries per row.
 */
import type { NewRequestLogRow } from '../../store/logs-repo.js';
import type { BatchMark, SpendDeltas } from '../../store/usage-store.js';

/** A settled quota delta waiting to be written, in order with the log rows around it. */
export class Settlement {
  constructor(
    readonly keyId: number | null,
    readonly userId: number,
    readonly delta: number,
  ) {}
}

/**
 * The settlements of a batch refused for its data, summed, to be written alone (see
 * RequestLogWriter's `isolate`).
 */
export class SettlementGroup {
  constructor(readonly spend: SpendDeltas) {}
}

export type Item = NewRequestLogRow | Settlement | SettlementGroup;

/**
 * A batch as first formed: its first `n` buffered items, their rows and summed spend, under one
 * mark. A failed write is retried as this same batch, so the sink's mark means one content.
 */
export interface Batch {
  n: number;
  rows: NewRequestLogRow[];
  spend: SpendDeltas | undefined;
  mark: BatchMark;
}

/**
 * The next batch from the front of `buffer`: at most `limit` rows of its first `todo` items, and
 * the settlements queued before the next row. `isolating`: the rows at the front go one to a
 * batch (after a batch refused for its data, see RequestLogWriter's `isolate`).
 */
export function formBatch(
  buffer: Item[],
  start: number,
  todo: number,
  limit: number,
  isolating: boolean,
  mark: BatchMark,
): Batch {
  const front = buffer[start];
  // Refused settlements' sum goes alone; the rows it came with, one to a batch.
  if (front instanceof SettlementGroup) return { n: 1, rows: [], spend: front.spend, mark };
  if (isolating) return { n: 1, rows: [front as NewRequestLogRow], spend: undefined, mark };
  const rows: NewRequestLogRow[] = [];
  let spend: SpendDeltas | undefined;
  let n = 0;
  for (; n < todo; n++) {
    const item = buffer[start + n]!;
    if (item instanceof Settlement) {
      spend ??= { keys: new Map(), users: new Map() };
      if (item.keyId !== null) bump(spend.keys, item.keyId, item.delta);
      bump(spend.users, item.userId, item.delta);
    } else if (item instanceof SettlementGroup) break;
    else if (rows.length < limit) rows.push(item);
    else break;
  }
  return { n, rows, spend, mark };
}

export function bump(m: Map<number, number>, id: number, d: number): void {
  const v = (m.get(id) ?? 0) + d;
  if (v === 0) m.delete(id);
  else m.set(id, v);
}

const isRow = (x: Item): x is NewRequestLogRow => !(x instanceof Settlement || x instanceof SettlementGroup);

/** Micro-USD owed by these settlements (per user: every settlement moves its user's spend). */
const spendOf = (s: Item[]) =>
  s.reduce(
    (sum, x) =>
      sum +
      (x instanceof Settlement
        ? x.delta
        : x instanceof SettlementGroup
          ? [...x.spend.users.values()].reduce((a, d) => a + d, 0)
          : 0),
    0,
  );

/**
 * What `buffer` holds that will never be written, for the error that reports it: the first
 * request ids, and the settlements with the spend they owed (a key's `quota_used` stays off by it).
 */
export function lostItems(buffer: Item[]) {
  const lostSpend = buffer.filter((x) => !isRow(x));
  const lostRows = buffer.filter(isRow);
  return {
    lost_request_ids: lostRows.slice(0, 20).map((r) => r.request_id),
    lost_settlements: lostSpend.length,
    lost_spend: spendOf(lostSpend),
  };
}
