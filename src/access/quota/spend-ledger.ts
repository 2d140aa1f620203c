import { clampSpend, MAX_EXACT } from '../../store/column-bounds.js';
import type { QuotaLedger, Reservation, ReserveInput, SpendCounter } from './quota-ledger.js';
import { quotaExhausted } from './quota-ledger.js';

interface HeldReservation extends Reservation {
  done: boolean;
}

const RETRIES = 3;

/**
 * The in-memory quota ledger (one process, with MemorySpendCounter): settles at once over two
 * atomic counters (keys, users). The gateway itself uses DeferredSettleLedger on the database;
 * this version keeps the QuotaLedger contract testable without storage.
 */
export class SpendLedger implements QuotaLedger {
  constructor(
    private readonly keys: SpendCounter,
    private readonly users: SpendCounter,
  ) {}

  async reserve(input: ReserveInput): Promise<Reservation> {
    // +Infinity (an estimate at an absurd price) saturates at the largest spend, like the database's.
    if (Number.isNaN(input.micros) || input.micros < 0)
      throw new RangeError(`reserve: micros must be a non-negative number, got ${input.micros}`);
    const { keyId, userId } = input;
    if (input.limited === false) return { keyId, userId, micros: 0, done: false } as HeldReservation;
    const micros = Math.min(MAX_EXACT, Math.max(1, Math.ceil(input.micros)));
    if (keyId !== null && !(await this.keys.addSpend(keyId, micros, true)))
      throw quotaExhausted('key', keyId, micros);
    let userOk = false;
    try {
      userOk = await this.users.addSpend(userId, micros, true);
    } finally {
      // The key's hold must not outlive a failed user reservation (refused or erroring).
      if (!userOk && keyId !== null) await retry(() => this.keys.addSpend(keyId, -micros, false));
    }
    if (!userOk) throw quotaExhausted('user', userId, micros);
    const held: HeldReservation = { keyId, userId, micros, done: false };
    return held;
  }

  async settle(reservation: Reservation, actualMicros: number): Promise<void> {
    const held = reservation as HeldReservation;
    if (held.done) return;
    held.done = true;
    const actual = clampSpend(actualMicros);
    const delta = actual - held.micros;
    if (delta === 0) return;
    // Unconditional: the work is done, its cost is owed even past the limit.
    if (held.keyId !== null) {
      const keyId = held.keyId;
      await retry(() => this.keys.addSpend(keyId, delta, false));
    }
    await retry(() => this.users.addSpend(held.userId, delta, false));
  }

  release(reservation: Reservation): Promise<void> {
    return this.settle(reservation, 0);
  }
}

/** A settlement must survive a transient database error (a pool hiccup, a lock timeout). */
async function retry<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= RETRIES) throw err;
      await new Promise((r) => setTimeout(r, 20 * 2 ** attempt));
    }
  }
}
