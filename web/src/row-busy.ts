import { useEffect, useState } from 'react';

/**
 * The rows whose change (enable, disable, hide, feature) is in flight, so their buttons are
 * disabled and a double click sends one request, not two. A row stays busy until `shown`, the
 * list it is drawn from, is read again after the change: until then its button still offers the
 * change just made, and a click would send the same request again. A failed change frees its row.
 */
export function useRowBusy(shown: unknown) {
  const [busy, setBusy] = useState<ReadonlySet<number>>(new Set());
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new read of the list frees every row
  useEffect(() => setBusy(new Set()), [shown]);
  async function run(id: number, change: () => Promise<void>): Promise<boolean> {
    if (busy.has(id)) return false;
    setBusy((s) => new Set(s).add(id));
    try {
      await change();
      return true;
    } catch (e) {
      setBusy((s) => {
        const next = new Set(s);
        next.delete(id);
        return next;
      });
      throw e;
    }
  }
  return { has: (id: number) => busy.has(id), run };
}
