import type { QuotaLedger, QuotaScope, Reservation, ReserveInput } from './quota-ledger.js';
import { quotaExhausted } from './quota-ledger.js';

interface HeldReservation extends Reservation {
  done: boolean;
}

/** Holds on both rows at once: the refusing scope, or null when both were held. */
export interface PairReserver {
  reserve(keyId: number | null, userId: number, micros: number): Promise<QuotaScope | null>;
}

/** Where settlements wait to be written (RequestLogWriter: with the request logs, in one transaction). */
export interface SettlementQueue {
  settle(keyId: number | null, userId: number, delta: number): void;
  /** Whether a net refund for this row is queued. */
  owes(scope: QuotaScope, id: number): boolean;
  flush(): Promise<void>;
}

/**
 * The quota ledger on the database, with settlements written behind. A reservation is still one
 * atomic conditional step on the database (key and user together), so limits hold across any
 * number of instances. Settlements are unconditional and commute, so they are queued and written
 * with the request logs in batches: between a settle and its write, `quota_used` still includes
 * the whole reservation, which can only refuse earlier, never overspend. A refusal while a
 * refund for that row is queued writes the queue and asks once more, so a request is refused
 * only if the quota is short once every finished call is settled, as with immediate writes.
 */
export class DeferredSettleLedger implements QuotaLedger {
  constructor(
    private readonly store: PairReserver,
    private readonly queue: SettlementQueue,
  ) {}

  async reserve(input: ReserveInput): Promise<Reservation> {
    if (!Number.isFinite(input.micros) || input.micros < 0)
      throw new RangeError(`reserve: micros must be a non-negative number, got ${input.micros}`);
    const { keyId, userId } = input;
    if (input.limited === false) return { keyId, userId, micros: 0, done: false } as HeldReservation;
    const micros = Math.max(1, Math.ceil(input.micros));
    let refused = await this.store.reserve(keyId, userId, micros);
    if (refused && this.queue.owes(refused, refused === 'key' ? keyId! : userId)) {
      await this.queue.flush();
      refused = await this.store.reserve(keyId, userId, micros);
    }
    if (refused) throw quotaExhausted(refused, refused === 'key' ? keyId! : userId, micros);
    const held: HeldReservation = { keyId, userId, micros, done: false };
    return held;
  }

  async settle(reservation: Reservation, actualMicros: number): Promise<void> {
    const held = reservation as HeldReservation;
    if (held.done) return;
    held.done = true;
    const actual = Number.isFinite(actualMicros) ? Math.max(0, Math.round(actualMicros)) : 0;
    // Unconditional: the work is done, its cost is owed even past the limit.
    this.queue.settle(held.keyId, held.userId, actual - held.micros);
  }

  release(reservation: Reservation): Promise<void> {
    return this.settle(reservation, 0);
  }
}
