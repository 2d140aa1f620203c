import type { SpendCounter } from './quota-ledger.js';

/**
 * In-memory spend counter for one process (tests, or a deployment that accepts losing spend on
 * restart). JavaScript runs each call to completion, so the check-and-add is atomic.
 */
export class MemorySpendCounter implements SpendCounter {
  private readonly rows = new Map<number, { limit: number | null; used: number }>();

  /** Declare a row; unknown ids are refused like a missing database row. */
  set(id: number, limit: number | null, used = 0): void {
    this.rows.set(id, { limit, used });
  }

  used(id: number): number | undefined {
    return this.rows.get(id)?.used;
  }

  async addSpend(id: number, delta: number, enforceLimit: boolean): Promise<boolean> {
    const row = this.rows.get(id);
    if (!row) return false;
    if (enforceLimit && row.limit !== null && row.used + delta > row.limit) return false;
    row.used += delta;
    return true;
  }
}
