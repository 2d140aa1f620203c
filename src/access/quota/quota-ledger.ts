import { GatewayError } from '../../gateway/errors.js';

/**
 * Spend held against a key's and its user's quota while a call runs. Settle or release it
 * exactly once (from a `finally`); a second settle is ignored, so a double call never
 * double-bills.
 */
export interface Reservation {
  readonly keyId: number | null;
  readonly userId: number;
  /** Micro-USD held on both counters. */
  readonly micros: number;
  /** True once settled or released. */
  readonly done: boolean;
}

export interface ReserveInput {
  keyId: number | null;
  userId: number;
  /** Estimated cost in micro-USD (rounded up; at least 1, so an exhausted quota always refuses). */
  micros: number;
  /**
   * False when neither the key nor the user has a limit (as last seen, at most a second ago):
   * there is nothing to enforce, so nothing is held and settle only records the actual spend.
   * Saves two statements per request on the common unlimited path. Default true.
   */
  limited?: boolean;
  /**
   * False when the user has no limit (as last seen; a limit set since gives all credit back
   * anyway, through the change's invalidation): a call that costs more than its estimate can then
   * take only its key past a limit, and the ledger gives back only that key's leased credit, not
   * that of every key of the user. Default true.
   */
  userLimited?: boolean;
}

/**
 * Quotas are reserved before an upstream call and settled on actual usage after it.
 * `reserve` throws a 402 GatewayError when the key's or the user's limit cannot cover the
 * estimate (a null limit is unlimited). `settle` moves used by `actual - reserved`: it may end
 * above the limit by at most that difference, because spend is never dropped.
 */
export interface QuotaLedger {
  /**
   * A ledger that can answer at once (local credit) returns the reservation itself, saving the
   * request path a promise and a microtask turn; otherwise a promise.
   */
  reserve(input: ReserveInput): Reservation | Promise<Reservation>;
  /** Likewise: nothing (settled already) or a promise. */
  settle(reservation: Reservation, actualMicros: number): void | Promise<void>;
  /** Settle with 0: the call failed before any upstream cost. */
  release(reservation: Reservation): void | Promise<void>;
  /** Counts since start (for /metrics), where the ledger leases from the database. */
  readonly stats?: LeaseStats;
}

export interface LeaseStats {
  /** Leases asked for by a reservation that then waited for the answer. */
  leasesWaited: number;
  /** Leases asked for ahead, in the background, while credit was left. */
  leasesAhead: number;
  /** Times a reservation waited for the database: the one that asked, and each that came meanwhile. */
  waits: number;
}

/**
 * One spend counter per scope (API keys, users). `addSpend` must be atomic: with `enforceLimit`
 * it adds only if `used + delta <= limit` (or there is no limit) and reports whether it did.
 * MemorySpendCounter implements it; on the database the reservation is UsageStore's one step.
 */
export interface SpendCounter {
  addSpend(id: number, delta: number, enforceLimit: boolean): Promise<boolean>;
}

export type QuotaScope = 'key' | 'user';

export function quotaExhausted(scope: QuotaScope, id: number, micros: number): GatewayError {
  const who = scope === 'key' ? `API key ${id}` : `user ${id}`;
  const usd = micros / 1e6;
  return new GatewayError(402, `quota exhausted: the quota of ${who} cannot cover this request ($${usd})`, {
    metadata: { scope, needed: usd },
  });
}
